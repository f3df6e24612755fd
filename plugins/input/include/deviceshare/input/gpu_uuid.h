// File: input/gpu_uuid.h
//
// UUIDs for GPUs that an input leaves unnamed (short-form clusters without
// a `uuid:`; simulate's trace and synthetic nodes). They look like NVML's
// and are deterministic: the same node name and index always give the same
// UUID,
//   GPU-<8 hex: FNV-1a of the node name>-<4 hex>-4000-8000-<12 digits: index>
// e.g. GPU-5d1b0e6c-9a41-4000-8000-000000000003, so a placement can be
// pinned to it with use-gpuuuid, and the index is readable at the end.
//
// Thread safety: a pure function.
#ifndef DEVICESHARE_INPUT_GPU_UUID_H_
#define DEVICESHARE_INPUT_GPU_UUID_H_

#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace deviceshare::input {

std::string GeneratedGpuUuid(absl::string_view node, int32_t index);

}  // namespace deviceshare::input

#endif  // DEVICESHARE_INPUT_GPU_UUID_H_
