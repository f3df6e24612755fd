#include "deviceshare/mig/slot_search.h"

#include <bit>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "profile_name.h"

namespace deviceshare::mig {
namespace {

constexpr int32_t kMaxSearchSlices = 16;

}  // namespace

absl::StatusOr<SlotSearch> SlotSearch::Create(const MigModel& model) {
  if (model.memory_slices < 1 || model.memory_slices > kMaxSearchSlices) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MIG model ", model.name, ": memorySlices ", model.memory_slices,
        " is outside 1..", kMaxSearchSlices, " (slot search table)"));
  }
  if (model.profiles.empty() || model.profiles.size() > 32) {
    return absl::InvalidArgumentError(
        absl::StrCat("MIG model ", model.name, ": ", model.profiles.size(),
                     " profiles; slot search needs 1..32"));
  }
  SlotSearch search;
  search.memory_slices_ = model.memory_slices;
  search.compute_slices_ = model.compute_slices;
  search.full_mask_ = model.FullMask();
  for (const MigProfile& p : model.profiles) {
    // HAMi (mig_topology.go preferHighMigPlacement) takes the highest
    // start for names beginning "1g." or "3g.", the lowest for the rest.
    const bool prefer_high = p.compute_slices == 1 || p.compute_slices == 3;
    Profile profile{p.name,
                    p.memory_mib,
                    p.compute_slices,
                    p.max_instances,
                    p.variant,
                    prefer_high,
                    {}};
    for (int32_t s = model.memory_slices - 1; s >= 0; --s) {
      const uint32_t mask = p.MaskAt(s);
      if (p.IsLegalStart(s) && mask != 0 && (mask & ~search.full_mask_) == 0) {
        profile.placements.push_back({s, mask});
      }
    }
    search.profiles_.push_back(std::move(profile));
  }
  const size_t states = size_t{1} << model.memory_slices;
  search.free_placements_.assign(states, 0);
  search.placeable_.assign(states, 0);
  for (size_t mask = 0; mask < states; ++mask) {
    uint32_t placeable = 0;
    uint16_t free = 0;
    for (size_t p = 0; p < search.profiles_.size(); ++p) {
      for (const Placement& placement : search.profiles_[p].placements) {
        if ((mask & placement.mask) != 0) continue;
        placeable |= 1u << p;
        if (!search.profiles_[p].variant) ++free;
      }
    }
    search.free_placements_[mask] = free;
    search.placeable_[mask] = placeable;
  }
  return search;
}

int32_t SlotSearch::RequiredComputeSlices(int32_t cores_percent) const {
  if (cores_percent <= 0) return 0;
  const int64_t product = int64_t{cores_percent} * compute_slices_;
  return static_cast<int32_t>((product + 99) / 100);
}

uint32_t SlotSearch::Candidates(const MigDemand& demand,
                                absl::Span<const int> allowed_profiles) const {
  const int32_t compute = RequiredComputeSlices(demand.cores_percent);
  // Profile names are canonical already; only the demand's needs trimming.
  const absl::string_view wanted = internal::StripMigPrefix(demand.profile);
  uint32_t out = 0;
  for (size_t p = 0; p < profiles_.size(); ++p) {
    const Profile& profile = profiles_[p];
    if (profile.memory_mib < demand.memory_mib ||
        profile.compute_slices < compute) {
      continue;
    }
    if (demand.profile.empty()) {
      if (profile.variant) continue;
    } else if (!absl::EqualsIgnoreCase(profile.name, wanted)) {
      continue;
    }
    out |= 1u << p;
  }
  if (!allowed_profiles.empty() && out != 0) {
    uint32_t allowed = 0;
    for (int p : allowed_profiles) {
      if (p >= 0 && p < static_cast<int>(profiles_.size())) allowed |= 1u << p;
    }
    out &= allowed;
  }
  return out;
}

std::optional<SlotChoice> SlotSearch::Choose(
    uint32_t occupied_mask, absl::Span<const int32_t> instances_per_profile,
    const MigDemand& demand, absl::Span<const int> allowed_profiles) const {
  const uint32_t occupied = occupied_mask & full_mask_;
  uint32_t candidates =
      Candidates(demand, allowed_profiles) & placeable_[occupied];
  while (candidates != 0) {
    const int p = std::countr_zero(candidates);
    candidates &= candidates - 1;
    const Profile& profile = profiles_[p];
    if (static_cast<size_t>(p) < instances_per_profile.size() &&
        instances_per_profile[p] >= profile.max_instances) {
      continue;
    }
    int32_t best_start = -1;
    int32_t best_free = -1;
    // Placements run from the highest start down: a strict > keeps the
    // highest on a tie, >= the lowest.
    for (const Placement& placement : profile.placements) {
      if ((occupied & placement.mask) != 0) continue;
      const int32_t free = free_placements_[occupied | placement.mask];
      if (free > best_free ||
          (free == best_free && !profile.prefer_high_start)) {
        best_free = free;
        best_start = placement.start;
      }
    }
    if (best_start >= 0) return SlotChoice{p, best_start};
  }
  return std::nullopt;
}

int32_t SlotSearch::FreePlacements(uint32_t mask) const {
  return free_placements_[mask & full_mask_];
}

bool SlotSearch::MayPlace(uint32_t occupied_mask,
                          const MigDemand& demand) const {
  return (Candidates(demand) & placeable_[occupied_mask & full_mask_]) != 0;
}

}  // namespace deviceshare::mig
