// File: dra/pool_usage.h
//
// PoolUsage: what one pool's devices have given out, kept incrementally as
// allocations come and go -- per device the capacity its shares consume
// (multi-allocatable devices) or that it is taken (dedicated ones), and
// the pool's shared counters (dra/counter_state.h).
//
// A multi-allocatable device that also consumes counters charges them once,
// with its first share, and gives them back with its last: the 1.34
// allocator charged them again for every share and did not roll them back
// (kubernetes #139034, #139040).
//
// Thread safety: not thread-safe; one owner.
#ifndef DEVICESHARE_DRA_POOL_USAGE_H_
#define DEVICESHARE_DRA_POOL_USAGE_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "deviceshare/dra/consumable_capacity.h"
#include "deviceshare/dra/counter_state.h"
#include "deviceshare/dra/node_pools.h"
#include "deviceshare/dra/resource_slice.h"

namespace deviceshare::dra {

class PoolUsage {
 public:
  // The pool's counter sets at full value. InvalidArgument for a counter
  // set defined twice.
  static absl::StatusOr<PoolUsage> Create(const NodePool& pool);

  // Whether `device` can take a request for `requests` now; when it fits,
  // the verdict holds what it would consume.
  CapacityVerdict Check(const Device& device,
                        const std::map<std::string, int64_t>& requests) const;

  // REQUIRES: Check(device, ...) fitted with `verdict` and nothing changed
  // since.
  void Take(const Device& device, const CapacityVerdict& verdict);
  // Gives back one allocation of `device` that consumed `consumed` (empty
  // for a dedicated device).
  void Give(const Device& device,
            const std::map<std::string, int64_t>& consumed);

  // What the device's shares consume now (absent: nothing).
  const std::map<std::string, int64_t>& InUse(const std::string& device) const;
  // Allocations of the device now (shares, or 1 for a taken dedicated one).
  int Holders(const std::string& device) const;
  const CounterState& counters() const { return counters_; }

  // Adds the pool's physical units to a utilisation sum: each counter set
  // (a partitionable GPU) by its counters, each device that consumes no
  // counters by its capacities (shared) or as 0 / 1000 (dedicated).
  void AddUtilisation(const NodePool& pool, int64_t* permille_sum,
                      int64_t* units) const;

 private:
  struct DeviceUse {
    std::map<std::string, int64_t> consumed;
    int holders = 0;
  };

  CounterState counters_;
  std::map<std::string, DeviceUse> devices_;
};

}  // namespace deviceshare::dra

#endif  // DEVICESHARE_DRA_POOL_USAGE_H_
