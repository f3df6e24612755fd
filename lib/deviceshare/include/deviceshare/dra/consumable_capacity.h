// File: dra/consumable_capacity.h
//
// What a request takes from a device that allows multiple allocations
// (KEP-5075, DRAConsumableCapacity, Kubernetes 1.34), by the rules of the
// v1.34 allocator:
//   - every capacity the request names must exist on the device, compared
//     by its literal key ("memory" is not "gpu.example.com/memory");
//   - a capacity the request omits takes its policy's default, or the whole
//     value when it has no policy (the device is then used exclusively);
//   - a request without a policy takes exactly what it asks;
//   - validRange: max(request, min), rounded up to min + n * step;
//     validValues: the smallest listed value >= the request;
//   - the rounded amount must respect the policy (at most max, on a step,
//     listed) and, with what others already hold, fit the capacity.
// Consumed amounts cover every capacity of the device, as the allocation
// result's consumedCapacity does. A dedicated device (no multiple
// allocations) consumes nothing: a capacity request is only a filter
// ("the device has at least this much").
//
// "Does not fit" is a verdict with a reason, not an error.
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_DRA_CONSUMABLE_CAPACITY_H_
#define DEVICESHARE_DRA_CONSUMABLE_CAPACITY_H_

#include <cstdint>
#include <map>
#include <string>

#include "deviceshare/dra/resource_slice.h"

namespace deviceshare::dra {

struct CapacityVerdict {
  bool fits = false;
  std::string reason;  // why not, e.g. "memory: 90Gi asked, 10Gi left"
  // Capacity name -> amount this allocation consumes (every capacity of a
  // multi-allocatable device; empty for a dedicated one).
  std::map<std::string, int64_t> consumed;
};

// The amount of `capacity` a request for `requested` (nullopt: the request
// does not name it) consumes, or nullopt with `why` set when the policy
// forbids it.
std::optional<int64_t> RoundedAmount(const DeviceCapacity& capacity,
                                     std::optional<int64_t> requested,
                                     std::string* why);

// `requests`: the request's capacity.requests (name -> amount). `in_use`:
// what other allocations already consume per capacity (absent = 0).
CapacityVerdict ConsumeCapacity(const Device& device,
                                const std::map<std::string, int64_t>& requests,
                                const std::map<std::string, int64_t>& in_use);

}  // namespace deviceshare::dra

#endif  // DEVICESHARE_DRA_CONSUMABLE_CAPACITY_H_
