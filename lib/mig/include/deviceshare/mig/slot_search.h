// File: mig/slot_search.h
//
// The placement-mode search: which GPU-instance profile, at which memory
// slice, serves one container's demand on one MIG GPU, given what is
// already there. Rules:
//   1. Candidates are the profiles adequate for the demand: memory_mib >=
//      demand.memory_mib and compute_slices >= ceil(cores_percent x
//      model.compute_slices / 100). A named profile (demand.profile) is the
//      only candidate, and must be adequate too; variants (+me, -me, ...)
//      are candidates only when named. `allowed_profiles` (e.g. HAMi's
//      migProfileAllowlist) narrows the set further.
//   2. The smallest candidate (MigModel::profiles order) under its
//      max_instances that has a free legal start wins; a larger one is
//      tried only when it has none. The order puts the double-memory 1g
//      (1g.20gb: 2 memory slices, 1 compute slice) before 2g.20gb, so a
//      20000 MiB demand gets 1g.20gb: same memory, fewer compute slices.
//   3. Among the free legal starts of that profile, the one after which the
//      most placements of non-variant profiles remain free (a table lookup)
//      wins; a tie goes the way HAMi's orderedMigPlacements orders starts:
//      the highest for 1g and 3g profiles (keeping the low slices for
//      4g/7g), the lowest for the others (2g, 4g, 7g). An idle H100 puts a
//      1g at slice 6 and a 2g at slice 0.
//
// Contract: Create() precomputes, per occupancy mask (2^memory_slices
// entries), the free placements and which profiles still have a free
// start, so Choose() is a few table lookups (~tens of ns; see
// bench/mig_bench.cc). Profile indices in and out refer to the MigModel
// passed to Create(); the search keeps its own copy of what it needs.
//
// Thread safety: immutable after Create(); concurrent const use is safe.
#ifndef DEVICESHARE_MIG_SLOT_SEARCH_H_
#define DEVICESHARE_MIG_SLOT_SEARCH_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "deviceshare/mig/mig_catalog.h"

namespace deviceshare::mig {

struct MigDemand {
  int64_t memory_mib = 0;
  int32_t cores_percent = 0;  // share of the whole GPU's SMs, 0..100
  std::string profile;        // explicit profile name; empty = by size
};

struct SlotChoice {
  int32_t profile = 0;  // index in MigModel::profiles
  int32_t start = 0;

  bool operator==(const SlotChoice& other) const = default;
};

class SlotSearch {
 public:
  // InvalidArgument for a model with more than 16 memory slices (the table
  // would exceed 64 Ki entries) or an empty one.
  static absl::StatusOr<SlotSearch> Create(const MigModel& model);

  // The choice for `demand` on a GPU whose memory slices `occupied_mask`
  // are taken and which holds instances_per_profile[p] instances of
  // profile p (missing entries count as 0). Bits above the model's slices
  // are ignored. nullopt when nothing fits (or the named profile is
  // unknown, not allowed, or too small).
  std::optional<SlotChoice> Choose(
      uint32_t occupied_mask, absl::Span<const int32_t> instances_per_profile,
      const MigDemand& demand,
      absl::Span<const int> allowed_profiles = {}) const;

  // Legal placements of the non-variant profiles that do not overlap
  // `mask` (instance caps ignored): a measure of how much a GPU can still
  // take. 18 on an idle H100-80GB (7+4+3+2+1+1).
  int32_t FreePlacements(uint32_t mask) const;

  // Cheap necessary condition for Choose(): some candidate profile has a
  // free legal start (instance caps and allowed_profiles ignored).
  bool MayPlace(uint32_t occupied_mask, const MigDemand& demand) const;

  // Bit p set: profile p is a candidate for `demand` (rule 1).
  uint32_t Candidates(const MigDemand& demand,
                      absl::Span<const int> allowed_profiles = {}) const;

  // ceil(cores_percent x compute_slices / 100), 0 for cores <= 0.
  int32_t RequiredComputeSlices(int32_t cores_percent) const;

  int32_t memory_slices() const { return memory_slices_; }
  int32_t profile_count() const {
    return static_cast<int32_t>(profiles_.size());
  }

 private:
  struct Placement {
    int32_t start;
    uint32_t mask;
  };
  struct Profile {
    std::string name;
    int64_t memory_mib;
    int32_t compute_slices;
    int32_t max_instances;
    bool variant;
    bool prefer_high_start;             // a 1g or 3g profile (rule 3)
    std::vector<Placement> placements;  // by start, highest first
  };

  SlotSearch() = default;

  int32_t memory_slices_ = 0;
  int32_t compute_slices_ = 0;
  uint32_t full_mask_ = 0;
  std::vector<Profile> profiles_;
  // Indexed by occupancy mask.
  std::vector<uint16_t> free_placements_;
  std::vector<uint32_t> placeable_;  // bit p: profile p has a free start
};

}  // namespace deviceshare::mig

#endif  // DEVICESHARE_MIG_SLOT_SEARCH_H_
