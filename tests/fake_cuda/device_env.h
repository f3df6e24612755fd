// File: tests/fake_cuda/device_env.h
//
// The fake driver's two device variables:
//   FAKE_CUDA_DEVICES="GPU-<uuid>:<total_mib>:<sm_count>,..." the physical
//       GPUs of the fake machine, in physical order;
//   CUDA_VISIBLE_DEVICES, read as the driver reads it: a comma list of
//       indices or GPU UUIDs (unique prefixes such as "GPU-8f" too) that
//       orders and filters the GPUs; the first invalid entry (unknown,
//       ambiguous, repeated) hides itself and everything after it.
#ifndef DEVICESHARE_TESTS_FAKE_CUDA_DEVICE_ENV_H_
#define DEVICESHARE_TESTS_FAKE_CUDA_DEVICE_ENV_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gpu_abi/cuda_abi.h"

namespace fake_cuda {

struct PhysicalGpu {
  std::string uuid;  // as written, "GPU-..."
  CUuuid bytes{};
  uint64_t total_bytes = 0;
  int sm_count = 0;
};

// Parses FAKE_CUDA_DEVICES. False with `error` naming the bad entry.
bool ParseDevices(std::string_view text, std::vector<PhysicalGpu>* gpus,
                  std::string* error);

// The physical indices CUDA_VISIBLE_DEVICES (`value`, nullptr when unset)
// exposes, in CUDA ordinal order.
std::vector<int> VisibleOrder(const char* value,
                              const std::vector<PhysicalGpu>& gpus);

}  // namespace fake_cuda

#endif  // DEVICESHARE_TESTS_FAKE_CUDA_DEVICE_ENV_H_
