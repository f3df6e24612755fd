#include "deviceshare/dra/claim_spec.h"

#include <limits>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "deviceshare/dra/device_class.h"
#include "deviceshare/dra/slice_decode.h"
#include "deviceshare/status_macros.h"
#include "dra/api_names.h"
#include "dra/json_fields.h"

namespace deviceshare::dra {
namespace {

using json_fields::ArrayField;
using json_fields::Int64;
using json_fields::Invalid;
using json_fields::Join;
using json_fields::Member;
using json_fields::NotA;
using json_fields::ObjectField;
using json_fields::StringField;
using nlohmann::json;

absl::Status CheckName(const std::string& name, const std::string& path,
                       std::set<std::string>& seen) {
  if (!IsDnsLabel(name)) {
    return Invalid(path, absl::StrCat("\"", name, "\" is not a DNS label"));
  }
  if (!seen.insert(name).second) {
    return Invalid(path, absl::StrCat("\"", name, "\" is not unique"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::map<std::string, int64_t>> DecodeCapacityRequests(
    const json& object, const std::string& path) {
  std::map<std::string, int64_t> out;
  DS_ASSIGN_OR_RETURN(const json* capacity,
                      ObjectField(object, path, "capacity", false));
  if (capacity == nullptr) return out;
  const std::string capacity_at = Join(path, "capacity");
  DS_ASSIGN_OR_RETURN(const json* requests,
                      ObjectField(*capacity, capacity_at, "requests", false));
  if (requests == nullptr) return out;
  for (const auto& [name, amount] : requests->items()) {
    const std::string at = absl::StrCat(capacity_at, ".requests[", name, "]");
    if (!IsQualifiedName(name, false)) {
      return Invalid(at,
                     absl::StrCat("\"", name, "\" is not a qualified name"));
    }
    DS_ASSIGN_OR_RETURN(CapacityAmount parsed, DecodeQuantity(amount, at));
    out[name] = parsed.value;
  }
  return out;
}

// The fields of an ExactDeviceRequest (and of a DeviceSubRequest, which has
// no adminAccess).
absl::StatusOr<ExactRequest> DecodeExact(const json& value,
                                         const std::string& path,
                                         bool admin_access) {
  if (!value.is_object()) return NotA(path, value, "an object");
  ExactRequest out;
  DS_ASSIGN_OR_RETURN(out.device_class,
                      StringField(value, path, "deviceClassName", true));
  if (const json* selectors = Member(value, "selectors");
      selectors != nullptr) {
    DS_ASSIGN_OR_RETURN(
        out.selectors, DecodeCelSelectors(*selectors, Join(path, "selectors")));
  }
  DS_ASSIGN_OR_RETURN(std::string mode,
                      StringField(value, path, "allocationMode", false));
  if (mode == "All") {
    out.mode = ExactRequest::kAll;
  } else if (!mode.empty() && mode != "ExactCount") {
    return Invalid(Join(path, "allocationMode"),
                   absl::StrCat("\"", mode, "\" is not ExactCount or All"));
  }
  if (const json* count = Member(value, "count"); count != nullptr) {
    const std::string at = Join(path, "count");
    DS_ASSIGN_OR_RETURN(int64_t n, Int64(*count, at));
    if (out.mode == ExactRequest::kAll && n != 0) {
      return Invalid(at, absl::StrCat(n,
                                      " must not be set with "
                                      "allocationMode All"));
    }
    if (n < 0) return Invalid(at, absl::StrCat(n, " is less than 1"));
    if (n > 0) out.count = n;
  }
  if (out.mode == ExactRequest::kAll) out.count = 0;
  if (admin_access) {
    if (const json* admin = Member(value, "adminAccess"); admin != nullptr) {
      if (!admin->is_boolean()) {
        return NotA(Join(path, "adminAccess"), *admin, "a bool");
      }
      out.admin_access = admin->get<bool>();
    }
  }
  DS_ASSIGN_OR_RETURN(out.capacity, DecodeCapacityRequests(value, path));
  return out;
}

absl::StatusOr<DeviceRequest> DecodeRequest(const json& value,
                                            const std::string& path) {
  if (!value.is_object()) return NotA(path, value, "an object");
  DeviceRequest out;
  DS_ASSIGN_OR_RETURN(out.name, StringField(value, path, "name", true));
  const json* exactly = Member(value, "exactly");
  DS_ASSIGN_OR_RETURN(const json* first,
                      ArrayField(value, path, "firstAvailable", kMaxSubRequests,
                                 "subrequests"));
  if ((exactly == nullptr) == (first == nullptr || first->empty())) {
    return Invalid(path, "must have exactly one of exactly and firstAvailable");
  }
  if (exactly != nullptr) {
    DS_ASSIGN_OR_RETURN(out.exactly,
                        DecodeExact(*exactly, Join(path, "exactly"), true));
    return out;
  }
  std::set<std::string> names;
  for (size_t i = 0; i < first->size(); ++i) {
    const std::string at = absl::StrCat(path, ".firstAvailable[", i, "]");
    SubRequest sub;
    DS_ASSIGN_OR_RETURN(sub.exactly, DecodeExact((*first)[i], at, false));
    DS_ASSIGN_OR_RETURN(sub.name, StringField((*first)[i], at, "name", true));
    DS_RETURN_IF_ERROR(CheckName(sub.name, at + ".name", names));
    out.first_available.push_back(std::move(sub));
  }
  return out;
}

// A `requests` list of a constraint or config: each names a request, or
// "<request>/<subrequest>" of a firstAvailable request, each once.
absl::StatusOr<std::vector<std::string>> DecodeRequestRefs(
    const json& object, const std::string& path,
    const std::vector<DeviceRequest>& requests) {
  std::vector<std::string> out;
  DS_ASSIGN_OR_RETURN(
      const json* refs,
      ArrayField(object, path, "requests", kMaxRequestsPerClaim, "requests"));
  if (refs == nullptr) return out;
  std::set<std::string> seen;
  for (size_t i = 0; i < refs->size(); ++i) {
    const json& ref = (*refs)[i];
    const std::string at = absl::StrCat(path, ".requests[", i, "]");
    if (!ref.is_string()) return NotA(at, ref, "a string");
    const std::string name = ref.get<std::string>();
    const size_t slash = name.find('/');
    const std::string parent = name.substr(0, slash);
    bool found = false;
    for (const DeviceRequest& request : requests) {
      if (request.name != parent) continue;
      if (slash == std::string::npos) {
        found = true;
      } else {
        const std::string sub = name.substr(slash + 1);
        for (const SubRequest& candidate : request.first_available) {
          found = found || candidate.name == sub;
        }
      }
    }
    if (!found) {
      return Invalid(at, absl::StrCat("\"", name, "\" names no request"));
    }
    if (!seen.insert(name).second) {
      return Invalid(at, absl::StrCat("\"", name, "\" is not unique"));
    }
    out.push_back(name);
  }
  return out;
}

absl::StatusOr<DeviceConstraint> DecodeConstraint(
    const json& value, const std::string& path,
    const std::vector<DeviceRequest>& requests) {
  if (!value.is_object()) return NotA(path, value, "an object");
  DeviceConstraint out;
  DS_ASSIGN_OR_RETURN(out.requests, DecodeRequestRefs(value, path, requests));
  DS_ASSIGN_OR_RETURN(out.match_attribute,
                      StringField(value, path, "matchAttribute", false));
  DS_ASSIGN_OR_RETURN(out.distinct_attribute,
                      StringField(value, path, "distinctAttribute", false));
  if (out.match_attribute.empty() == out.distinct_attribute.empty()) {
    return Invalid(path,
                   "must have exactly one of matchAttribute and "
                   "distinctAttribute");
  }
  const bool match = !out.match_attribute.empty();
  const std::string& attribute =
      match ? out.match_attribute : out.distinct_attribute;
  if (!IsQualifiedName(attribute, true)) {
    return Invalid(
        Join(path, match ? "matchAttribute" : "distinctAttribute"),
        absl::StrCat("\"", attribute, "\" is not a fully qualified name"));
  }
  return out;
}

absl::StatusOr<ClaimConfig> DecodeConfig(
    const json& value, const std::string& path,
    const std::vector<DeviceRequest>& requests) {
  if (!value.is_object()) return NotA(path, value, "an object");
  ClaimConfig out;
  DS_ASSIGN_OR_RETURN(out.requests, DecodeRequestRefs(value, path, requests));
  DS_ASSIGN_OR_RETURN(const json* opaque,
                      ObjectField(value, path, "opaque", true));
  DS_ASSIGN_OR_RETURN(
      std::string driver,
      StringField(*opaque, Join(path, "opaque"), "driver", true));
  out.opaque = *opaque;
  return out;
}

absl::StatusOr<const json*> Metadata(const json& object) {
  return ObjectField(object, "", "metadata", true);
}

}  // namespace

absl::StatusOr<ClaimSpec> DecodeClaimSpec(const json& spec,
                                          const std::string& path) {
  if (!spec.is_object()) return NotA(path, spec, "an object");
  ClaimSpec out;
  DS_ASSIGN_OR_RETURN(const json* devices,
                      ObjectField(spec, path, "devices", false));
  if (devices == nullptr) return out;
  const std::string at = Join(path, "devices");
  DS_ASSIGN_OR_RETURN(
      const json* requests,
      ArrayField(*devices, at, "requests", kMaxRequestsPerClaim, "requests"));
  std::set<std::string> names;
  for (size_t i = 0; requests != nullptr && i < requests->size(); ++i) {
    const std::string request_at = absl::StrCat(at, ".requests[", i, "]");
    DS_ASSIGN_OR_RETURN(DeviceRequest request,
                        DecodeRequest((*requests)[i], request_at));
    DS_RETURN_IF_ERROR(CheckName(request.name, request_at + ".name", names));
    out.requests.push_back(std::move(request));
  }
  DS_ASSIGN_OR_RETURN(const json* constraints,
                      ArrayField(*devices, at, "constraints",
                                 kMaxConstraintsPerClaim, "constraints"));
  for (size_t i = 0; constraints != nullptr && i < constraints->size(); ++i) {
    DS_ASSIGN_OR_RETURN(
        DeviceConstraint constraint,
        DecodeConstraint((*constraints)[i],
                         absl::StrCat(at, ".constraints[", i, "]"),
                         out.requests));
    out.constraints.push_back(std::move(constraint));
  }
  DS_ASSIGN_OR_RETURN(
      const json* config,
      ArrayField(*devices, at, "config", kMaxConfigsPerClaim, "configs"));
  for (size_t i = 0; config != nullptr && i < config->size(); ++i) {
    DS_ASSIGN_OR_RETURN(
        ClaimConfig entry,
        DecodeConfig((*config)[i], absl::StrCat(at, ".config[", i, "]"),
                     out.requests));
    out.config.push_back(std::move(entry));
  }
  return out;
}

absl::StatusOr<ResourceClaim> DecodeResourceClaim(const json& claim) {
  if (!claim.is_object()) return NotA("claim", claim, "an object");
  ResourceClaim out;
  DS_ASSIGN_OR_RETURN(const json* metadata, Metadata(claim));
  DS_ASSIGN_OR_RETURN(out.name,
                      StringField(*metadata, "metadata", "name", true));
  DS_ASSIGN_OR_RETURN(out.ns,
                      StringField(*metadata, "metadata", "namespace", false));
  DS_ASSIGN_OR_RETURN(out.uid,
                      StringField(*metadata, "metadata", "uid", false));
  DS_ASSIGN_OR_RETURN(const json* spec, ObjectField(claim, "", "spec", true));
  DS_ASSIGN_OR_RETURN(out.spec, DecodeClaimSpec(*spec, "spec"));
  DS_ASSIGN_OR_RETURN(const json* status,
                      ObjectField(claim, "", "status", false));
  if (status == nullptr) return out;
  DS_ASSIGN_OR_RETURN(const json* allocation,
                      ObjectField(*status, "status", "allocation", false));
  if (allocation != nullptr) out.allocation = *allocation;
  DS_ASSIGN_OR_RETURN(
      const json* reserved,
      ArrayField(*status, "status", "reservedFor",
                 std::numeric_limits<size_t>::max(), "consumers"));
  for (size_t i = 0; reserved != nullptr && i < reserved->size(); ++i) {
    const json& consumer = (*reserved)[i];
    const std::string at = absl::StrCat("status.reservedFor[", i, "]");
    if (!consumer.is_object()) return NotA(at, consumer, "an object");
    DS_ASSIGN_OR_RETURN(std::string uid,
                        StringField(consumer, at, "uid", true));
    out.reserved_for_uids.push_back(std::move(uid));
  }
  return out;
}

absl::StatusOr<ResourceClaimTemplate> DecodeResourceClaimTemplate(
    const json& claim_template) {
  if (!claim_template.is_object()) {
    return NotA("template", claim_template, "an object");
  }
  ResourceClaimTemplate out;
  DS_ASSIGN_OR_RETURN(const json* metadata, Metadata(claim_template));
  DS_ASSIGN_OR_RETURN(out.name,
                      StringField(*metadata, "metadata", "name", true));
  DS_ASSIGN_OR_RETURN(out.ns,
                      StringField(*metadata, "metadata", "namespace", false));
  DS_ASSIGN_OR_RETURN(const json* spec,
                      ObjectField(claim_template, "", "spec", true));
  DS_ASSIGN_OR_RETURN(const json* claim_metadata,
                      ObjectField(*spec, "spec", "metadata", false));
  if (claim_metadata != nullptr) out.metadata = *claim_metadata;
  DS_ASSIGN_OR_RETURN(const json* claim_spec,
                      ObjectField(*spec, "spec", "spec", true));
  DS_ASSIGN_OR_RETURN(out.spec, DecodeClaimSpec(*claim_spec, "spec.spec"));
  return out;
}

absl::StatusOr<std::vector<PodClaimRef>> DecodePodClaimRefs(const json& pod) {
  std::vector<PodClaimRef> out;
  if (!pod.is_object()) return NotA("pod", pod, "an object");
  DS_ASSIGN_OR_RETURN(const json* spec, ObjectField(pod, "", "spec", false));
  if (spec == nullptr) return out;
  DS_ASSIGN_OR_RETURN(const json* claims,
                      ArrayField(*spec, "spec", "resourceClaims",
                                 std::numeric_limits<size_t>::max(), "claims"));
  std::set<std::string> names;
  for (size_t i = 0; claims != nullptr && i < claims->size(); ++i) {
    const json& entry = (*claims)[i];
    const std::string at = absl::StrCat("spec.resourceClaims[", i, "]");
    if (!entry.is_object()) return NotA(at, entry, "an object");
    PodClaimRef ref;
    DS_ASSIGN_OR_RETURN(ref.name, StringField(entry, at, "name", true));
    DS_RETURN_IF_ERROR(CheckName(ref.name, at + ".name", names));
    DS_ASSIGN_OR_RETURN(ref.claim_name,
                        StringField(entry, at, "resourceClaimName", false));
    DS_ASSIGN_OR_RETURN(
        ref.template_name,
        StringField(entry, at, "resourceClaimTemplateName", false));
    if (ref.claim_name.empty() == ref.template_name.empty()) {
      return Invalid(at,
                     "must have exactly one of resourceClaimName and "
                     "resourceClaimTemplateName");
    }
    out.push_back(std::move(ref));
  }
  return out;
}

}  // namespace deviceshare::dra
