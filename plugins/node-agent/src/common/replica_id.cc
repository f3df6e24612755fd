#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "deviceshare/agent/container_allocator.h"

namespace deviceshare::agent {
namespace {
constexpr absl::string_view kSeparator = "::";
}  // namespace

std::string ReplicaDeviceId(const std::string& gpu_uuid, int replica) {
  return absl::StrCat(gpu_uuid, kSeparator, replica);
}

absl::StatusOr<ReplicaId> ParseDeviceId(const std::string& device_id) {
  const size_t separator = absl::string_view(device_id).rfind(kSeparator);
  ReplicaId id;
  if (separator == std::string::npos || separator == 0 ||
      !absl::SimpleAtoi(
          absl::string_view(device_id).substr(separator + kSeparator.size()),
          &id.replica) ||
      id.replica < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("device id \"", device_id,
                     "\": not one of this plugin's ids (<gpu-uuid>::<n>)"));
  }
  id.gpu_uuid = device_id.substr(0, separator);
  return id;
}

}  // namespace deviceshare::agent
