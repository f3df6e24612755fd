// File: testing/resource_slice_rules.h
//
// The API server's validation of a ResourceSlice (resource.k8s.io/v1,
// Kubernetes 1.37: k8s.io/kubernetes pkg/apis/resource/validation and the
// declarative rules of k8s.io/api resource/v1), written out independently
// of deviceshare's code so that FakeApiServer can judge the slices the
// node agent publishes as a real cluster would. The errors are worded as
// the real server words them (testing/field_errors.h).
//
// The rules, with the limits below:
//   metadata.name   DNS subdomain (name or generateName required)
//   spec.driver     DNS subdomain (checked lower-cased, as the server
//                   does), at most 63 characters
//   spec.pool       name: non-empty, at most 253 characters, each
//                   '/'-separated segment a DNS subdomain; generation >= 0;
//                   resourceSliceCount >= 1
//   node selection  exactly one of nodeName (a DNS subdomain), nodeSelector
//                   (one term), allNodes: true, perDeviceNodeSelection: true
//   slice type      at most one of sharedCounters and devices (a present
//                   list counts, even an empty one)
//   spec.devices    at most 128, or 64 when any device has taints or
//                   consumesCounters (over the limit: that one error, no
//                   more about the devices); names DNS labels unique in the
//                   slice; per device at most 32 attributes + capacities,
//                   named [DNS subdomain "/"] C identifier (<= 32); an
//                   attribute has exactly one of int/bool/string/version,
//                   strings and versions <= 64 characters, versions semver
//                   2.0.0; capacity values are quantities; requestPolicy
//                   only with allowMultipleAllocations: true, at most one
//                   of validRange / validValues, and with either a default
//                   that fits it (range: min <= default <= max, min <= max,
//                   default and max a whole number of steps above min;
//                   values: <= 10, ascending, default among them); at most
//                   16 taints with effect NoSchedule or NoExecute
//   counters        sharedCounters: at most 8 sets, names DNS labels unique
//                   in the slice, each with 1..32 counters; consumesCounters:
//                   at most 2 entries per device, unique by counterSet (a
//                   DNS label), each with 1..32 counters. Counter names are
//                   DNS labels, values quantities. Which counter set a
//                   device consumes from is not checked: since 1.35 the
//                   sets are published in other slices of the pool.
//
// The counter rules are declarative in 1.37 (beta, enforced by default),
// and the server reports those errors after all hand-written ones: the
// devices' consumesCounters, then sharedCounters. Their Duplicate errors
// show the whole repeated item as JSON, and a bad counter name is reported
// on the map (`...counters: Invalid value: "c_1": ...`), not on its key.
//
// What the fake checks and the real server does not (or the other way): a
// malformed quantity is a 400 decode error on a real server, a 422 field
// error here (and a Duplicate item shows quantities as given, where the
// server writes them canonically); node selector terms are only counted,
// not checked inside; binding conditions, list attributes,
// partitionTypeAttribute and skipNodeOperations are not checked.
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_TESTS_TESTING_RESOURCE_SLICE_RULES_H_
#define DEVICESHARE_TESTS_TESTING_RESOURCE_SLICE_RULES_H_

#include <vector>

#include "nlohmann/json.hpp"
#include "testing/field_errors.h"

namespace deviceshare::testing {

// Limits of resource.k8s.io/v1 in Kubernetes 1.37.
inline constexpr int kSliceMaxDevices = 128;
// With taints or consumesCounters on any device of the slice.
inline constexpr int kSliceMaxDevicesWithCounters = 64;
inline constexpr int kDriverNameMaxLength = 63;
inline constexpr int kPoolNameMaxLength = 253;
inline constexpr int kDeviceMaxAttributesAndCapacities = 32;
inline constexpr int kQualifiedNameMaxDomainLength = 63;
inline constexpr int kQualifiedNameMaxIdLength = 32;
inline constexpr int kAttributeMaxValueLength = 64;
inline constexpr int kDeviceMaxTaints = 16;
inline constexpr int kRequestPolicyMaxValidValues = 10;
inline constexpr int kSliceMaxCounterSets = 8;
inline constexpr int kCounterSetMaxCounters = 32;
inline constexpr int kDeviceMaxCounterConsumptions = 2;  // entries
inline constexpr int kConsumptionMaxCounters = 32;       // in one entry

// Every rule broken by `slice` (a ResourceSlice as JSON); empty when valid.
std::vector<FieldError> ValidateResourceSlice(const nlohmann::json& slice);

// ValidateResourceSlice, and the fields an update may not change:
// spec.driver, spec.pool.name, spec.nodeName.
std::vector<FieldError> ValidateResourceSliceUpdate(
    const nlohmann::json& slice, const nlohmann::json& old_slice);

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_RESOURCE_SLICE_RULES_H_
