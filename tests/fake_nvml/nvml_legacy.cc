// The older and alternative entry points some callers (HAMi-core among
// them) still bind: nvmlInit (v1), nvmlInitWithFlags and
// nvmlDeviceGetHandleByIndex (v1). They behave as their current versions.
#include "fake_world.h"

extern "C" nvmlReturn_t nvmlInit_v2();
extern "C" nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned index,
                                                      nvmlDevice_t* device);

namespace {

// NVML_INIT_FLAG_NO_GPUS and NVML_INIT_FLAG_NO_ATTACH.
constexpr unsigned kKnownInitFlags = 0x1 | 0x2;

}  // namespace

FAKE_NVML_EXPORT nvmlReturn_t nvmlInit() { return nvmlInit_v2(); }

FAKE_NVML_EXPORT nvmlReturn_t nvmlInitWithFlags(unsigned flags) {
  if ((flags & ~kKnownInitFlags) != 0) return NVML_ERROR_INVALID_ARGUMENT;
  return nvmlInit_v2();
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex(unsigned index,
                                                         nvmlDevice_t* device) {
  return nvmlDeviceGetHandleByIndex_v2(index, device);
}
