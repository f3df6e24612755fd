extern "C" int fake_nvml_placeholder() { return 0; }
