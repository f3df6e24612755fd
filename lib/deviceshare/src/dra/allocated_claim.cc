#include "deviceshare/dra/allocated_claim.h"

#include "absl/strings/str_cat.h"
#include "deviceshare/json_text.h"
#include "deviceshare/model/units.h"
#include "deviceshare/status_macros.h"
#include "dra/json_fields.h"

namespace deviceshare::dra {
namespace {

using nlohmann::json;

using json_fields::Invalid;
using json_fields::StringField;

absl::StatusOr<std::map<std::string, int64_t>> DecodeConsumed(
    const json& consumed, const std::string& path) {
  std::map<std::string, int64_t> out;
  if (!consumed.is_object()) {
    return Invalid(path, absl::StrCat(JsonText(consumed), " is not an object"));
  }
  for (const auto& [name, value] : consumed.items()) {
    const std::string at = absl::StrCat(path, "[", name, "]");
    if (!value.is_string() && !value.is_number_integer()) {
      return Invalid(at, absl::StrCat(JsonText(value), " is not a quantity"));
    }
    const std::string text =
        value.is_string() ? value.get<std::string>() : JsonText(value);
    DS_ASSIGN_OR_RETURN(int64_t milli, ParseQuantityMilli(text, at));
    out[name] = milli / 1000 + (milli % 1000 != 0 ? 1 : 0);
  }
  return out;
}

absl::StatusOr<AllocatedDevice> DecodeResult(const json& result,
                                             const std::string& path) {
  if (!result.is_object()) {
    return Invalid(path, absl::StrCat(JsonText(result), " is not an object"));
  }
  AllocatedDevice device;
  DS_ASSIGN_OR_RETURN(device.request,
                      StringField(result, path, "request", true));
  DS_ASSIGN_OR_RETURN(device.driver, StringField(result, path, "driver", true));
  DS_ASSIGN_OR_RETURN(device.pool, StringField(result, path, "pool", true));
  DS_ASSIGN_OR_RETURN(device.device, StringField(result, path, "device", true));
  DS_ASSIGN_OR_RETURN(device.share_id,
                      StringField(result, path, "shareID", false));
  if (auto it = result.find("consumedCapacity");
      it != result.end() && !it->is_null()) {
    DS_ASSIGN_OR_RETURN(device.consumed,
                        DecodeConsumed(*it, path + ".consumedCapacity"));
  }
  if (auto it = result.find("adminAccess"); it != result.end()) {
    if (!it->is_boolean() && !it->is_null()) {
      return Invalid(path + ".adminAccess",
                     absl::StrCat(it->dump(), " is not a bool"));
    }
    device.admin_access = it->is_boolean() && it->get<bool>();
  }
  return device;
}

// status.allocation.devices.results, or an error naming what is missing.
absl::StatusOr<const json*> ResultsOf(const json& claim) {
  auto status = claim.find("status");
  if (status == claim.end() || !status->is_object()) {
    return absl::FailedPreconditionError("status.allocation: not allocated");
  }
  auto allocation = status->find("allocation");
  if (allocation == status->end() || allocation->is_null()) {
    return absl::FailedPreconditionError("status.allocation: not allocated");
  }
  if (!allocation->is_object()) {
    return Invalid("status.allocation", "is not an object");
  }
  auto devices = allocation->find("devices");
  if (devices == allocation->end() || !devices->is_object()) {
    return Invalid("status.allocation.devices", "missing");
  }
  auto results = devices->find("results");
  if (results == devices->end() || !results->is_array()) {
    return Invalid("status.allocation.devices.results", "missing");
  }
  return &*results;
}

}  // namespace

absl::StatusOr<AllocatedClaim> DecodeAllocatedClaim(const json& claim) {
  if (!claim.is_object()) return Invalid("claim", "is not an object");
  auto metadata = claim.find("metadata");
  if (metadata == claim.end() || !metadata->is_object()) {
    return Invalid("metadata", "missing");
  }
  AllocatedClaim out;
  DS_ASSIGN_OR_RETURN(out.name,
                      StringField(*metadata, "metadata", "name", true));
  DS_ASSIGN_OR_RETURN(out.ns,
                      StringField(*metadata, "metadata", "namespace", false));
  DS_ASSIGN_OR_RETURN(out.uid, StringField(*metadata, "metadata", "uid", true));
  DS_ASSIGN_OR_RETURN(const json* results, ResultsOf(claim));
  for (size_t i = 0; i < results->size(); ++i) {
    DS_ASSIGN_OR_RETURN(
        AllocatedDevice device,
        DecodeResult(
            (*results)[i],
            absl::StrCat("status.allocation.devices.results[", i, "]")));
    out.results.push_back(std::move(device));
  }
  return out;
}

}  // namespace deviceshare::dra
