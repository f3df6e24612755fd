#include "dra_objects.h"

#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "c_status.h"
#include "deviceshare/dra/claim_spec.h"
#include "deviceshare/dra/device_class.h"
#include "deviceshare/dra/slice_decode.h"
#include "deviceshare/input/kube_objects.h"
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
  return absl::InvalidArgumentError(absl::StrFormat(
      "object: kind %s, want DeviceClass, ResourceSlice or ResourceClaim "
      "(nodes go to deviceshare_upsert_nodes)",
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
  } else {
    return absl::InvalidArgumentError(absl::StrFormat(
        "kind: \"%s\", want DeviceClass, ResourceSlice or ResourceClaim",
        kind));
  }
  return absl::OkStatus();
}

}  // namespace deviceshare::capi
