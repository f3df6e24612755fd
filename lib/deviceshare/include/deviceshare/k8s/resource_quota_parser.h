// File: k8s/resource_quota_parser.h
//
// Reads a Kubernetes ResourceQuota object (JSON tree) into the GPU quota
// HAMi takes from it (model/gpu_quota.h): spec.hard
// "limits.<resourceMemoryName>" in units of the memory resource (MiB times
// memoryFactor) and "limits.<resourceCoreName>" in percent of one GPU.
// Other keys (cpu, pods, requests.*) are not GPU quota and are ignored, as
// HAMi ignores them; so is a value that is not a whole number (HAMi's
// Quantity.AsInt64 reads no such value).
#ifndef DEVICESHARE_K8S_RESOURCE_QUOTA_PARSER_H_
#define DEVICESHARE_K8S_RESOURCE_QUOTA_PARSER_H_

#include <optional>

#include "absl/status/statusor.h"
#include "deviceshare/config/device_config.h"
#include "deviceshare/model/gpu_quota.h"
#include "nlohmann/json_fwd.hpp"

namespace deviceshare {

// nullopt for a quota that limits no GPU resource; InvalidArgument, naming
// the field and value, for a malformed object (no metadata.name, spec.hard
// not a mapping, a GPU limit that is negative or not a quantity).
absl::StatusOr<std::optional<GpuQuota>> ParseResourceQuota(
    const nlohmann::json& object, const DeviceConfig& config);

}  // namespace deviceshare

#endif  // DEVICESHARE_K8S_RESOURCE_QUOTA_PARSER_H_
