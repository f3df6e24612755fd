#include "deviceshare/input/gpu_uuid.h"

#include "absl/strings/str_format.h"

namespace deviceshare::input {
namespace {

uint64_t Fnv1a64(absl::string_view text) {
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ull;
  }
  return hash;
}

}  // namespace

std::string GeneratedGpuUuid(absl::string_view node, int32_t index) {
  const uint64_t hash = Fnv1a64(node);
  return absl::StrFormat("GPU-%08x-%04x-4000-8000-%012d",
                         static_cast<uint32_t>(hash >> 32),
                         static_cast<uint32_t>(hash & 0xffff), index);
}

}  // namespace deviceshare::input
