// File: testing/resource_claim_rules.h
//
// The API server's validation of a ResourceClaim's status update
// (resource.k8s.io/v1, Kubernetes 1.37: k8s.io/kubernetes
// pkg/apis/resource/validation ValidateResourceClaimStatusUpdate), written
// out independently of deviceshare's code so that FakeApiServer refuses the
// status writes a real server refuses. The errors are worded as the real
// server words them (testing/field_errors.h).
//
// The rules:
//   status.reservedFor   at most 256 entries, each with resource, name and
//                        uid, unique by uid; none while status.allocation
//                        is unset
//   status.allocation    immutable once set (it may be removed); a new one
//                        names, per devices.results entry, a request of the
//                        claim's spec (or request/subrequest), a driver, a
//                        pool and a device
//
// What the fake does not check: the names' formats, allocation configs,
// node selectors, binding conditions, device status entries, and the
// deletion rule (no new reservedFor entries once the claim is deleted).
// An immutable allocation's value is printed as its JSON, where the server
// prints the Go struct.
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_TESTS_TESTING_RESOURCE_CLAIM_RULES_H_
#define DEVICESHARE_TESTS_TESTING_RESOURCE_CLAIM_RULES_H_

#include <vector>

#include "nlohmann/json.hpp"
#include "testing/field_errors.h"

namespace deviceshare::testing {

// The errors of writing `claim`'s status over `previous` (both whole
// ResourceClaim objects); empty when the write is valid.
std::vector<FieldError> ValidateResourceClaimStatusUpdate(
    const nlohmann::json& claim, const nlohmann::json& previous);

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_RESOURCE_CLAIM_RULES_H_
