// File: dra/counter_state.h
//
// CounterState: what is left of one pool's shared counters (KEP-4815,
// partitionable devices) as devices are allocated and freed. A device that
// consumes counters fits only when every counter it names has enough left;
// allocating takes them, freeing gives them back. Kept incrementally, so
// the allocator never recounts every allocated device per decision (the
// 1.34 allocator rebuilds it per scheduling cycle and, for a device that
// is also multi-allocatable, forgot to roll it back: #139034).
//
// Counter set names are unique within a pool (1.35's rule; in 1.34 they
// are unique per slice and our publisher keeps them unique per pool).
//
// Thread safety: not thread-safe; one owner.
#ifndef DEVICESHARE_DRA_COUNTER_STATE_H_
#define DEVICESHARE_DRA_COUNTER_STATE_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/status/status.h"
#include "deviceshare/dra/resource_slice.h"

namespace deviceshare::dra {

class CounterState {
 public:
  // Adds a pool's counter set at its full value. InvalidArgument when a
  // set of that name exists already.
  absl::Status AddSet(const CounterSet& set);

  // Whether `device`'s consumption fits what is left; `why` names the
  // first counter short (e.g. "gpu-0-counters/memory-slice-3: 1 needed,
  // 0 left") or a set or counter this pool does not have.
  bool Fits(const Device& device, std::string* why) const;

  // REQUIRES: Fits(device).
  void Take(const Device& device);
  // Gives back what Take took.
  void Give(const Device& device);

  // What is left of one counter; -1 when unknown.
  int64_t Left(const std::string& set, const std::string& counter) const;

  // Per counter set, the mean fraction of its counters in use, in permille
  // (0 = untouched, 1000 = exhausted).
  std::map<std::string, int64_t> UsedPermille() const;

 private:
  std::map<std::string, std::map<std::string, int64_t>> left_;
  std::map<std::string, std::map<std::string, int64_t>> total_;
};

}  // namespace deviceshare::dra

#endif  // DEVICESHARE_DRA_COUNTER_STATE_H_
