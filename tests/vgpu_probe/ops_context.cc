// Ops that set up a context and ask the driver and NVML what they see:
// init, count, uuid, meminfo, totalmem, nvml-meminfo.
#include "probe.h"

namespace vgpu_probe {
namespace {

// The device an op names (its first argument), else the init device.
CUdevice DeviceArg(const Probe& probe, const Args& args) {
  long long ordinal = probe.device;
  if (!args.empty()) ParseInt(args[0], ordinal);
  return static_cast<CUdevice>(ordinal);
}

}  // namespace

// init [ordinal]: cuInit, then the primary context of the device made
// current, as the runtime does on first use.
void RunInit(Probe& probe, const Args& args) {
  const long long start = NowUs();
  long long ordinal = 0;
  if (!args.empty()) ParseInt(args[0], ordinal);
  Line line("init");
  line.Int("device", ordinal);
  const char* failed = "";
  CUresult code = probe.cu.cuInit(0);
  if (code != CUDA_SUCCESS) {
    failed = "cuInit";
  } else if ((code = probe.cu.cuDeviceGet(
                  &probe.device, static_cast<int>(ordinal))) != CUDA_SUCCESS) {
    failed = "cuDeviceGet";
  } else {
    CUcontext ctx = nullptr;
    if ((code = probe.cu.cuDevicePrimaryCtxRetain(&ctx, probe.device)) !=
        CUDA_SUCCESS) {
      failed = "cuDevicePrimaryCtxRetain";
    } else if ((code = probe.cu.cuCtxSetCurrent(ctx)) != CUDA_SUCCESS) {
      failed = "cuCtxSetCurrent";
    }
  }
  line.Int("code", code).Str("failed", failed).Us(NowUs() - start);
  line.Emit();
}

void RunCount(Probe& probe, const Args&) {
  int count = -1;
  const CUresult code = probe.cu.cuDeviceGetCount(&count);
  Line("count").Int("code", code).Int("count", count).Emit();
}

// uuid: the UUID of every visible device, in CUDA ordinal order.
void RunUuid(Probe& probe, const Args&) {
  int count = 0;
  CUresult code = probe.cu.cuDeviceGetCount(&count);
  std::vector<std::string> uuids;
  for (int i = 0; code == CUDA_SUCCESS && i < count; ++i) {
    CUdevice device = 0;
    CUuuid uuid{};
    code = probe.cu.cuDeviceGet(&device, i);
    if (code == CUDA_SUCCESS) code = probe.cu.cuDeviceGetUuid(&uuid, device);
    if (code == CUDA_SUCCESS) uuids.push_back(UuidText(uuid));
  }
  Line("uuid").Int("code", code).StrList("uuids", uuids).Emit();
}

void RunMemInfo(Probe& probe, const Args&) {
  size_t free_bytes = 0, total_bytes = 0;
  const CUresult code = probe.cu.cuMemGetInfo(&free_bytes, &total_bytes);
  Line("meminfo")
      .Int("code", code)
      .Int("free", static_cast<long long>(free_bytes))
      .Int("total", static_cast<long long>(total_bytes))
      .Emit();
}

// totalmem [ordinal]
void RunTotalMem(Probe& probe, const Args& args) {
  const CUdevice device = DeviceArg(probe, args);
  size_t bytes = 0;
  const CUresult code = probe.cu.cuDeviceTotalMem(&bytes, device);
  Line("totalmem")
      .Int("device", device)
      .Int("code", code)
      .Int("bytes", static_cast<long long>(bytes))
      .Emit();
}

// nvml-meminfo [ordinal]: NVML's v1 and v2 memory info of the GPU with the
// UUID of the CUDA device (ordinals differ from NVML indices under
// CUDA_VISIBLE_DEVICES; the UUID is what both agree on).
void RunNvmlMemInfo(Probe& probe, const Args& args) {
  Line line("nvml-meminfo");
  const CUdevice device = DeviceArg(probe, args);
  line.Int("device", device);
  CUuuid uuid{};
  const CUresult cu_code = probe.cu.cuDeviceGetUuid(&uuid, device);
  line.Int("cu_code", cu_code);
  if (!probe.nvml_loaded) {
    line.Int("code", -1).Str("error", probe.nvml_error).Emit();
    return;
  }
  const Nvml& nvml = probe.nvml;
  if (cu_code != CUDA_SUCCESS || nvml.nvmlInit_v2 == nullptr ||
      nvml.nvmlDeviceGetHandleByUUID == nullptr) {
    line.Int("code", -1).Str("error", "no uuid or no nvmlInit_v2/ByUUID");
    line.Emit();
    return;
  }
  const std::string text = UuidText(uuid);
  line.Str("uuid", text);
  nvmlReturn_t code = nvml.nvmlInit_v2();
  nvmlDevice_t handle = nullptr;
  if (code == NVML_SUCCESS) {
    code = nvml.nvmlDeviceGetHandleByUUID(text.c_str(), &handle);
  }
  line.Int("code", code);
  if (code != NVML_SUCCESS) {
    line.Emit();
    return;
  }
  if (nvml.nvmlDeviceGetMemoryInfo != nullptr) {
    nvmlMemory_t memory{};
    line.Int("v1_code", nvml.nvmlDeviceGetMemoryInfo(handle, &memory))
        .Int("v1_total", static_cast<long long>(memory.total))
        .Int("v1_free", static_cast<long long>(memory.free))
        .Int("v1_used", static_cast<long long>(memory.used));
  } else {
    line.Int("v1_code", -1);
  }
  if (nvml.nvmlDeviceGetMemoryInfo_v2 != nullptr) {
    NvmlMemoryV2 memory{};
    memory.version = kNvmlMemoryV2Version;
    line.Int("v2_code", nvml.nvmlDeviceGetMemoryInfo_v2(handle, &memory))
        .Int("v2_total", static_cast<long long>(memory.total))
        .Int("v2_reserved", static_cast<long long>(memory.reserved))
        .Int("v2_free", static_cast<long long>(memory.free))
        .Int("v2_used", static_cast<long long>(memory.used));
  } else {
    line.Int("v2_code", -1);
  }
  line.Emit();
}

}  // namespace vgpu_probe
