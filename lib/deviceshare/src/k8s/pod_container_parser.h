// File: src/pod_container_parser.h (internal)
//
// The per-container half of the pod parser: reads one container's
// `resources` (limits, then requests) into the GPU fields of a
// ContainerRequest, in whichever dialect the container uses.
#ifndef DEVICESHARE_SRC_POD_CONTAINER_PARSER_H_
#define DEVICESHARE_SRC_POD_CONTAINER_PARSER_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/config/device_config.h"
#include "deviceshare/model/pod_request.h"
#include "nlohmann/json.hpp"

namespace deviceshare::internal {

// One container's resource lists. Limits win over requests per key, as in
// both upstream parsers (extended resources must have request == limit
// anyway, so only a hand-written pod can tell the difference).
class ContainerResources {
 public:
  // Reads the `resources` of `container` (one entry of spec.containers),
  // which must outlive the result: it points into it.
  static absl::StatusOr<ContainerResources> Read(
      const nlohmann::json& container);

  // The value of `key` from limits, else requests; nullptr if neither.
  const nlohmann::json* GpuValue(absl::string_view key) const;
  // The value of `key` from requests, else limits (what a node must hold
  // for cpu and memory); nullptr if neither.
  const nlohmann::json* RequestValue(absl::string_view key) const;

  const nlohmann::json& limits() const { return *limits_; }
  const nlohmann::json& requests() const { return *requests_; }

 private:
  ContainerResources(const nlohmann::json* limits,
                     const nlohmann::json* requests)
      : limits_(limits), requests_(requests) {}

  const nlohmann::json* limits_;
  const nlohmann::json* requests_;
};

// A quantity as text: JSON strings as they are, numbers printed, anything
// else an error naming `field`.
absl::StatusOr<std::string> QuantityText(const nlohmann::json& value,
                                         absl::string_view field);

// Fills gpu_count, memory_mib, memory_percent and cores of `request`.
// Returns the dialect of the GPU resources the container names (even if
// they do not add up to a GPU), or nullopt when it names none. Errors name
// the resource key and the value, not the pod (the caller adds that).
// A MIG resource `nvidia.com/mig-<profile>: N` (both dialects; it picks
// none, so nullopt) sets gpu_count N and mig_profile, leaving memory and
// cores 0; with another GPU resource, a second MIG resource or a name that
// is not a MIG profile it is an error.
absl::StatusOr<std::optional<Dialect>> ParseContainerGpu(
    const ContainerResources& resources, const DeviceConfig& config,
    ContainerRequest& request);

}  // namespace deviceshare::internal

#endif  // DEVICESHARE_SRC_POD_CONTAINER_PARSER_H_
