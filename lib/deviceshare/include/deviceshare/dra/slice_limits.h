// File: dra/slice_limits.h
//
// The resource.k8s.io/v1 (Kubernetes 1.34) validation limits a published
// ResourceSlice must keep, and a check of one slice against them. The node
// agent checks every slice before it writes it, so a GPU with too many
// partitions is a clear local error, not a 422 from the API server.
//
// Thread safety: constants and pure functions.
#ifndef DEVICESHARE_DRA_SLICE_LIMITS_H_
#define DEVICESHARE_DRA_SLICE_LIMITS_H_

#include <cstdint>

#include "absl/status/status.h"
#include "deviceshare/dra/resource_slice.h"

namespace deviceshare::dra {

inline constexpr int kMaxDevicesPerSlice = 128;
// Attributes and capacities of one device, together.
inline constexpr int kMaxAttributesAndCapacitiesPerDevice = 32;
// Counters summed over every counter set of one slice.
inline constexpr int kMaxCountersPerSlice = 32;
inline constexpr int kMaxConsumptionsPerDevice = 32;
// Counters consumed, summed over the devices of one slice.
inline constexpr int kMaxConsumedCountersPerSlice = 1024;
inline constexpr int kMaxAttributeValueLength = 64;
inline constexpr int kMaxIdentifierLength = 32;
inline constexpr int kMaxDnsLabelLength = 63;
inline constexpr int kMaxValidValues = 10;

// Counters one device consumes (summed over its consumptions).
int ConsumedCounterCount(const Device& device);
int CounterCount(const CounterSet& set);

// OK, or InvalidArgument naming the field path and value, e.g.
// `spec.devices[3].name: "GPU_0" is not a DNS label`.
absl::Status CheckSliceLimits(const ResourceSlice& slice);

}  // namespace deviceshare::dra

#endif  // DEVICESHARE_DRA_SLICE_LIMITS_H_
