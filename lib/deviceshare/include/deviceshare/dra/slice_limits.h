// File: dra/slice_limits.h
//
// The resource.k8s.io/v1 validation rules (Kubernetes 1.35 and later; the
// values are 1.37's) a published ResourceSlice must keep, a check of one
// slice against them, and a check of a whole pool. The node agent checks
// every slice and its pool before it writes them, so a GPU with too many
// partitions is a clear local error, not a 422 from the API server.
//
// Since 1.35 a slice holds either counter sets or devices, never both: a
// device consumes counters of a set that another slice of its pool
// defines. The API server checks each slice alone and so no longer checks
// that reference; the allocator needs it to hold, which CheckPoolCounters
// checks over the pool's slices together.
//
// Thread safety: constants and pure functions.
#ifndef DEVICESHARE_DRA_SLICE_LIMITS_H_
#define DEVICESHARE_DRA_SLICE_LIMITS_H_

#include <vector>

#include "absl/status/status.h"
#include "deviceshare/dra/resource_slice.h"

namespace deviceshare::dra {

// ResourceSliceMaxDevices.
inline constexpr int kMaxDevicesPerSlice = 128;
// ResourceSliceMaxDevicesWithAdvancedFeatures: the cap when any device of
// the slice consumes counters (or has taints or list attributes, which
// these types do not carry).
inline constexpr int kMaxDevicesPerSliceWithAdvancedFeatures = 64;
// Attributes and capacities of one device, together.
inline constexpr int kMaxAttributesAndCapacitiesPerDevice = 32;
inline constexpr int kMaxCounterSetsPerSlice = 8;
inline constexpr int kMaxCountersPerCounterSet = 32;
// consumesCounters entries of one device, at most one per counter set.
inline constexpr int kMaxConsumptionsPerDevice = 2;
inline constexpr int kMaxCountersPerConsumption = 32;
inline constexpr int kMaxAttributeValueLength = 64;
inline constexpr int kMaxIdentifierLength = 32;
inline constexpr int kMaxDnsLabelLength = 63;
inline constexpr int kMaxValidValues = 10;

// Whether `device` lowers its slice's cap to
// kMaxDevicesPerSliceWithAdvancedFeatures.
bool UsesAdvancedFeatures(const Device& device);

// The most devices a slice holding `devices` may have.
int MaxDevicesPerSlice(const std::vector<Device>& devices);

// OK, or InvalidArgument naming the field path and value, e.g.
// `spec.devices[3].name: "GPU_0" is not a DNS label`.
absl::Status CheckSliceLimits(const ResourceSlice& slice);

// The rules that span the slices of one pool (`pool`: every slice of it):
// counter set names are unique in the pool, and every consumesCounters
// entry names a counter set of the pool and only counters that set has.
// InvalidArgument naming the slice, field path and value, e.g.
// `node-a-gpu.deviceshare.io-1: spec.devices[0].consumesCounters[0]
// .counterSet: "gpu-9-counters" is not a counter set of pool "node-a"`;
// also when the slices are not of one driver and pool name.
absl::Status CheckPoolCounters(const std::vector<ResourceSlice>& pool);

}  // namespace deviceshare::dra

#endif  // DEVICESHARE_DRA_SLICE_LIMITS_H_
