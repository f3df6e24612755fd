#include "dra_objects.h"

#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "c_status.h"
#include "deviceshare/dra/claim_spec.h"
#include "deviceshare/dra/device_class.h"
#include "deviceshare/dra/slice_decode.h"
#include "deviceshare/input/kube_objects.h"
#include "deviceshare/k8s/resource_quota_parser.h"
#include "nlohmann/json.hpp"
#include "text_input.h"

namespace deviceshare::capi {
namespace {

absl::Status UpsertSlice(Scheduler& scheduler, const nlohmann::json& object) {
  absl::StatusOr<dra::DecodedSlice> decoded = dra::DecodeResourceSlice(object);
  if (!decoded.ok()) return decoded.status();
  if (decoded->slice.node_name.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: spec.nodeName is missing: only node-local slices are scheduled "
        "(not spec.allNodes or spec.nodeSelector)",
        decoded->slice.name));
  }
  return scheduler.UpsertResourceSlice(std::move(decoded->slice));
}

absl::Status UpsertClaim(Scheduler& scheduler, const nlohmann::json& object) {
  absl::StatusOr<dra::ResourceClaim> decoded = dra::DecodeResourceClaim(object);
  if (!decoded.ok()) return decoded.status();
  return scheduler.UpsertResourceClaim(*std::move(decoded));
}

absl::Status UpsertClass(Scheduler& scheduler, const nlohmann::json& object) {
  absl::StatusOr<dra::DeviceClass> decoded = dra::DecodeDeviceClass(object);
  if (!decoded.ok()) return decoded.status();
  scheduler.UpsertDeviceClass(*std::move(decoded));
  return absl::OkStatus();
}

// A ResourceQuota that limits no GPU resource (any more) lifts what an
// earlier version of it set.
absl::Status UpsertQuota(Scheduler& scheduler, const nlohmann::json& object) {
  absl::StatusOr<std::optional<GpuQuota>> quota =
      ParseResourceQuota(object, scheduler.config().device);
  if (!quota.ok()) return quota.status();
  if (*quota) {
    scheduler.UpsertQuota(**std::move(quota));
    return absl::OkStatus();
  }
  const nlohmann::json& metadata = object.value("metadata", nlohmann::json());
  scheduler.RemoveQuota(metadata.value("namespace", "default"),
                        metadata.value("name", ""));
  return absl::OkStatus();
}

}  // namespace

absl::Status UpsertObject(Scheduler& scheduler, absl::string_view text) {
  absl::StatusOr<nlohmann::json> object = ParseObject(text, "object");
  if (!object.ok()) return object.status();
  const std::string kind = input::KindOf(*object);
  if (kind == "DeviceClass")
    return Prefixed(kind, UpsertClass(scheduler, *object));
  if (kind == "ResourceSlice") {
    return Prefixed(kind, UpsertSlice(scheduler, *object));
  }
  if (kind == "ResourceClaim") {
    return Prefixed(kind, UpsertClaim(scheduler, *object));
  }
  if (kind == "ResourceQuota") return UpsertQuota(scheduler, *object);
  return absl::InvalidArgumentError(absl::StrFormat(
      "object: kind %s, want DeviceClass, ResourceSlice, ResourceClaim or "
      "ResourceQuota (nodes go to deviceshare_upsert_nodes)",
      kind.empty() ? "(none)" : kind));
}

absl::Status RemoveObject(Scheduler& scheduler, absl::string_view kind,
                          absl::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError("name is empty");
  const std::string key(name);
  if (kind == "DeviceClass") {
    scheduler.RemoveDeviceClass(key);
  } else if (kind == "ResourceSlice") {
    scheduler.RemoveResourceSlice(key);
  } else if (kind == "ResourceClaim") {
    if (key.find('/') == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "name: \"%s\", want \"namespace/name\" for a ResourceClaim", key));
    }
    scheduler.RemoveResourceClaim(key);
  } else if (kind == "ResourceQuota") {
    const size_t slash = key.find('/');
    if (slash == std::string::npos) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "name: \"%s\", want \"namespace/name\" for a ResourceQuota", key));
    }
    scheduler.RemoveQuota(key.substr(0, slash), key.substr(slash + 1));
  } else {
    return absl::InvalidArgumentError(absl::StrFormat(
        "kind: \"%s\", want DeviceClass, ResourceSlice, ResourceClaim or "
        "ResourceQuota",
        kind));
  }
  return absl::OkStatus();
}

}  // namespace deviceshare::capi
