// File: testing/resource_slice_rules.h
//
// The API server's validation of a ResourceSlice (resource.k8s.io/v1,
// Kubernetes 1.34), written out independently of deviceshare's code so that
// FakeApiServer can judge the slices the node agent publishes as a real
// cluster would. The errors are worded as the real server words them
// (testing/field_errors.h).
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
//   spec.devices    at most 128, names DNS labels unique in the slice;
//                   per device at most 32 attributes + capacities, named
//                   [DNS subdomain "/"] C identifier (<= 32); an attribute
//                   has exactly one of int/bool/string/version, strings and
//                   versions <= 64 characters, versions semver 2.0.0;
//                   capacity values are quantities; requestPolicy only with
//                   allowMultipleAllocations: true, at most one of
//                   validRange / validValues, and with either a default that
//                   fits it (range: min <= default <= max, min <= max,
//                   default and max a whole number of steps above min;
//                   values: <= 10, ascending, default among them); at most
//                   4 taints with effect NoSchedule or NoExecute
//   counters        sharedCounters: set names DNS labels, unique, at most 32
//                   counters over all sets; counter names DNS labels (the
//                   1.34 API says so; not C identifiers); values quantities.
//                   consumesCounters: at most 32 entries and 32 counters per
//                   device, 1024 in the slice, each naming a counter set of
//                   this slice and only counters of that set.
//
// What the fake checks and the real server does not (or the other way): a
// malformed quantity is a 400 decode error on a real server, a 422 field
// error here; node selector terms are only counted, not checked inside;
// binding conditions are not checked.
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_TESTS_TESTING_RESOURCE_SLICE_RULES_H_
#define DEVICESHARE_TESTS_TESTING_RESOURCE_SLICE_RULES_H_

#include <vector>

#include "nlohmann/json.hpp"
#include "testing/field_errors.h"

namespace deviceshare::testing {

// Limits of resource.k8s.io/v1 in Kubernetes 1.34.
inline constexpr int kSliceMaxDevices = 128;
inline constexpr int kDriverNameMaxLength = 63;
inline constexpr int kPoolNameMaxLength = 253;
inline constexpr int kDeviceMaxAttributesAndCapacities = 32;
inline constexpr int kQualifiedNameMaxDomainLength = 63;
inline constexpr int kQualifiedNameMaxIdLength = 32;
inline constexpr int kAttributeMaxValueLength = 64;
inline constexpr int kDeviceMaxTaints = 4;
inline constexpr int kRequestPolicyMaxValidValues = 10;
inline constexpr int kSliceMaxSharedCounters = 32;  // over all counter sets
inline constexpr int kDeviceMaxCounterConsumptions = 32;  // entries
inline constexpr int kDeviceMaxCounters = 32;         // over a device's entries
inline constexpr int kSliceMaxDeviceCounters = 1024;  // over all devices

// Every rule broken by `slice` (a ResourceSlice as JSON); empty when valid.
std::vector<FieldError> ValidateResourceSlice(const nlohmann::json& slice);

// ValidateResourceSlice, and the fields an update may not change:
// spec.driver, spec.pool.name, spec.nodeName.
std::vector<FieldError> ValidateResourceSliceUpdate(
    const nlohmann::json& slice, const nlohmann::json& old_slice);

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_RESOURCE_SLICE_RULES_H_
