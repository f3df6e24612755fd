// File: mig/mig_layout.h
//
// Layouts: the set of GPU instances on one MIG GPU, as (profile, start)
// pairs, and the rules that make one valid (NVML refuses the rest):
//   - every instance starts at one of its profile's legal starts,
//   - no two instances share a memory slice,
//   - no profile has more than max_instances instances,
//   - the compute slices add up to at most MigModel::compute_slices.
// `+me.all` exclusivity (RTX PRO only) is not modelled.
//
// Contract: profile indices refer to MigModel::profiles of the model passed
// alongside. All functions are pure. Thread safety: no shared state.
#ifndef DEVICESHARE_MIG_MIG_LAYOUT_H_
#define DEVICESHARE_MIG_MIG_LAYOUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "deviceshare/mig/mig_catalog.h"

namespace deviceshare::mig {

struct MigInstance {
  int32_t profile = 0;  // index in MigModel::profiles
  int32_t start = 0;    // first memory slice

  bool operator==(const MigInstance& other) const = default;
};

// OK, or InvalidArgument naming the first offending instance by its index
// in `layout`: `instance 2 (3g.40gb@2): 2 is not a legal start of 3g.40gb
// (legal: 0, 4)`.
absl::Status ValidateLayout(const MigModel& model,
                            absl::Span<const MigInstance> layout);

// Every valid layout built from the profiles in `profile_indices`
// (duplicates and out-of-range indices are ignored), each set exactly once,
// the empty layout included (it comes first). Within a layout instances are
// sorted by start. Exponential in general; meant for tests, tools and the
// 8-slice parts (723 layouts, the empty one included, with the 6
// non-variant profiles).
std::vector<std::vector<MigInstance>> EnumerateLayouts(
    const MigModel& model, absl::Span<const int> profile_indices);

// True when no instance of a profile in `profile_indices` can be added to
// the (valid) `layout` without breaking a rule.
bool IsMaximal(const MigModel& model, absl::Span<const MigInstance> layout,
               absl::Span<const int> profile_indices);

// The memory slices the layout covers.
uint32_t OccupiedMask(const MigModel& model,
                      absl::Span<const MigInstance> layout);

// One character per memory slice: the compute size of the instance
// covering it ('1'..'9'; '+' above 9) or '.' when free: "2222221.".
std::string SlotMap(const MigModel& model,
                    absl::Span<const MigInstance> layout);

}  // namespace deviceshare::mig

#endif  // DEVICESHARE_MIG_MIG_LAYOUT_H_
