#include "testing/resource_claim_rules.h"

#include <set>
#include <string>

#include "absl/strings/str_cat.h"

namespace deviceshare::testing {
namespace {

using nlohmann::json;

constexpr int kMaxReservedFor = 256;  // ResourceClaimReservedForMaxSize
constexpr char kRequestRef[] =
    "must be the name of a request in the claim or the name of a request "
    "and a subrequest separated by '/'";

const json& Member(const json& object, const char* name) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  auto it = object.find(name);
  return it == object.end() ? kNull : *it;
}

std::string Text(const json& value) {
  return value.is_string() ? value.get<std::string>() : "";
}

bool Present(const json& value) {
  return !value.is_null() && !(value.is_object() && value.empty());
}

// The names a result may give as its request: each request, and each
// "request/subrequest" of a firstAvailable list.
std::set<std::string> RequestNames(const json& claim) {
  std::set<std::string> names;
  const json& requests =
      Member(Member(Member(claim, "spec"), "devices"), "requests");
  if (!requests.is_array()) return names;
  for (const json& request : requests) {
    const std::string name = Text(Member(request, "name"));
    names.insert(name);
    const json& subrequests = Member(request, "firstAvailable");
    if (!subrequests.is_array()) continue;
    for (const json& sub : subrequests) {
      names.insert(absl::StrCat(name, "/", Text(Member(sub, "name"))));
    }
  }
  return names;
}

void CheckReservedFor(const json& reserved, const FieldPath& path,
                      std::vector<FieldError>& errors) {
  if (!reserved.is_array()) return;
  if (reserved.size() > kMaxReservedFor) {
    errors.push_back(TooMany(path, reserved.size(), kMaxReservedFor));
    return;
  }
  std::set<std::string> uids;
  for (size_t i = 0; i < reserved.size(); ++i) {
    const json& entry = reserved[i];
    const FieldPath at = path.Index(i);
    for (const char* field : {"resource", "name", "uid"}) {
      if (Text(Member(entry, field)).empty()) {
        errors.push_back(Required(at.Child(field), ""));
      }
    }
    const std::string uid = Text(Member(entry, "uid"));
    if (!uid.empty() && !uids.insert(uid).second) {
      errors.push_back(DuplicateRaw(at, entry.dump()));
    }
  }
}

void CheckNewAllocation(const json& allocation, const json& claim,
                        const FieldPath& path,
                        std::vector<FieldError>& errors) {
  const std::set<std::string> names = RequestNames(claim);
  const json& results = Member(Member(allocation, "devices"), "results");
  if (!results.is_array()) return;
  const FieldPath results_path = path.Child("devices").Child("results");
  for (size_t i = 0; i < results.size(); ++i) {
    const json& result = results[i];
    const FieldPath at = results_path.Index(i);
    const std::string request = Text(Member(result, "request"));
    if (!names.contains(request)) {
      errors.push_back(
          InvalidString(at.Child("request"), request, kRequestRef));
    }
    for (const char* field : {"driver", "pool", "device"}) {
      if (Text(Member(result, field)).empty()) {
        errors.push_back(Required(at.Child(field), ""));
      }
    }
  }
}

}  // namespace

std::vector<FieldError> ValidateResourceClaimStatusUpdate(
    const json& claim, const json& previous) {
  std::vector<FieldError> errors;
  const FieldPath status("status");
  const json& reserved = Member(Member(claim, "status"), "reservedFor");
  CheckReservedFor(reserved, status.Child("reservedFor"), errors);
  const json& allocation = Member(Member(claim, "status"), "allocation");
  const json& old_allocation = Member(Member(previous, "status"), "allocation");
  if (reserved.is_array() && !reserved.empty() && !Present(allocation)) {
    errors.push_back(
        Forbidden(status.Child("reservedFor"),
                  "may not be specified when `allocated` is not set"));
  }
  if (Present(old_allocation) && Present(allocation)) {
    if (allocation != old_allocation) {
      errors.push_back(InvalidRaw(status.Child("allocation"), allocation.dump(),
                                  "field is immutable"));
    }
  } else if (Present(allocation)) {
    CheckNewAllocation(allocation, claim, status.Child("allocation"), errors);
  }
  return errors;
}

}  // namespace deviceshare::testing
