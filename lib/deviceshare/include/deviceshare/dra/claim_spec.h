// File: dra/claim_spec.h
//
// The claim side of resource.k8s.io/v1 (Kubernetes 1.34) as a DRA allocator
// reads it: a ResourceClaim's or ResourceClaimTemplate's device requests
// (exactly one device class each, or a firstAvailable list of
// alternatives), constraints across requests and configs, and a Pod's
// spec.resourceClaims entries that name them.
//
// The decoders enforce the API's validation limits, so what they return is
// what the API server would have accepted: at most 32 requests, each named
// by a unique DNS label; exactly one of `exactly` and `firstAvailable` (1 to
// 8 subrequests, uniquely named); allocationMode ExactCount (count >= 1,
// default 1; an explicit 0 is the default, as the API server defaults it)
// or All (no count); at most 32 selectors per request; at most 32
// constraints and 32 configs, whose `requests` name, each once, a request or
// "<request>/<subrequest>"; exactly one of matchAttribute and
// distinctAttribute per constraint, a fully qualified name
// ("gpu.deviceshare.io/uuid"). Unknown fields are ignored.
//
// Every error is InvalidArgument and names the field path and the value,
// e.g. `spec.devices.requests[1].name: "GPU" is not a DNS label`. The
// decoders never throw, whatever the input.
//
// Thread safety: value types and pure functions.
#ifndef DEVICESHARE_DRA_CLAIM_SPEC_H_
#define DEVICESHARE_DRA_CLAIM_SPEC_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace deviceshare::dra {

inline constexpr int kMaxRequestsPerClaim = 32;
inline constexpr int kMaxSubRequests = 8;
inline constexpr int kMaxConstraintsPerClaim = 32;
inline constexpr int kMaxConfigsPerClaim = 32;

// One device class's devices: `count` of them, or all that match.
struct ExactRequest {
  enum AllocationMode { kExactCount, kAll };

  std::string device_class;
  std::vector<std::string> selectors;  // CEL expressions
  AllocationMode mode = kExactCount;
  int64_t count = 1;  // kExactCount only
  bool admin_access = false;
  // capacity.requests: capacity name -> amount in the capacity's unit
  // (bytes for memory), rounded up.
  std::map<std::string, int64_t> capacity;

  bool operator==(const ExactRequest& other) const = default;
};

struct SubRequest {
  std::string name;
  ExactRequest exactly;  // admin_access is always false

  bool operator==(const SubRequest& other) const = default;
};

// Exactly one of `exactly` and `first_available` (tried in order).
struct DeviceRequest {
  std::string name;
  std::optional<ExactRequest> exactly;
  std::vector<SubRequest> first_available;

  bool operator==(const DeviceRequest& other) const = default;
};

// Exactly one of the two attributes is set. `requests` empty: all of them.
struct DeviceConstraint {
  std::vector<std::string> requests;
  std::string match_attribute;     // the same value on every device
  std::string distinct_attribute;  // a different value on every device

  bool operator==(const DeviceConstraint& other) const = default;
};

struct ClaimConfig {
  std::vector<std::string> requests;  // empty: all of them
  nlohmann::json opaque;              // {"driver", "parameters"}, kept whole

  bool operator==(const ClaimConfig& other) const = default;
};

// spec.devices of a ResourceClaim.
struct ClaimSpec {
  std::vector<DeviceRequest> requests;
  std::vector<DeviceConstraint> constraints;
  std::vector<ClaimConfig> config;

  bool operator==(const ClaimSpec& other) const = default;
};

struct ResourceClaim {
  std::string ns;
  std::string name;
  std::string uid;  // "" before the API server assigns one
  ClaimSpec spec;
  nlohmann::json allocation;  // status.allocation, null when not allocated
  std::vector<std::string> reserved_for_uids;  // status.reservedFor[*].uid

  bool operator==(const ResourceClaim& other) const = default;
};

struct ResourceClaimTemplate {
  std::string ns;
  std::string name;
  ClaimSpec spec;           // spec.spec
  nlohmann::json metadata;  // spec.metadata, kept whole; null when none

  bool operator==(const ResourceClaimTemplate& other) const = default;
};

// One of a Pod's spec.resourceClaims: exactly one of claim_name and
// template_name is set.
struct PodClaimRef {
  std::string name;
  std::string claim_name;     // resourceClaimName
  std::string template_name;  // resourceClaimTemplateName

  bool operator==(const PodClaimRef& other) const = default;
};

// A ClaimSpec from the object `spec` (a ResourceClaim's spec, a template's
// spec.spec); `path` names it in errors ("spec", "spec.spec").
absl::StatusOr<ClaimSpec> DecodeClaimSpec(const nlohmann::json& spec,
                                          const std::string& path);

absl::StatusOr<ResourceClaim> DecodeResourceClaim(const nlohmann::json& claim);

absl::StatusOr<ResourceClaimTemplate> DecodeResourceClaimTemplate(
    const nlohmann::json& claim_template);

// A Pod's (or a pod template's) spec.resourceClaims; empty when none. Names
// are unique DNS labels.
absl::StatusOr<std::vector<PodClaimRef>> DecodePodClaimRefs(
    const nlohmann::json& pod);

}  // namespace deviceshare::dra

#endif  // DEVICESHARE_DRA_CLAIM_SPEC_H_
