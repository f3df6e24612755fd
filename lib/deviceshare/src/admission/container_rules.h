// File: src/admission/container_rules.h (internal)
//
// The per-container half of the admission decision (admission/
// pod_admission.h): which containers name a GPU resource, and the HAMi and
// Volcano rules that rewrite or refuse one container.
#ifndef DEVICESHARE_SRC_ADMISSION_CONTAINER_RULES_H_
#define DEVICESHARE_SRC_ADMISSION_CONTAINER_RULES_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/config/device_config.h"
#include "nlohmann/json.hpp"

namespace deviceshare::admission::internal {

// Checks the shape the rules read: `container` an object whose resources,
// resources.limits and resources.requests are objects when present.
// InvalidArgument naming the field under `path` ("spec.containers[1]").
absl::Status CheckContainerShape(const nlohmann::json& container,
                                 absl::string_view path);

// Whether `container` (shape checked) names a GPU resource of either dialect
// in its limits or requests.
bool NamesGpuResource(const nlohmann::json& container,
                      const DeviceConfig& config);

// Applies the rules of the container's dialect to `container` (shape
// checked; changed in place) and returns whether it asks for a GPU
// afterwards (HAMi's hasResource), or InvalidArgument naming the field under
// `path` and the value.
absl::StatusOr<bool> MutateContainer(nlohmann::json& container,
                                     absl::string_view path,
                                     const DeviceConfig& config);

}  // namespace deviceshare::admission::internal

#endif  // DEVICESHARE_SRC_ADMISSION_CONTAINER_RULES_H_
