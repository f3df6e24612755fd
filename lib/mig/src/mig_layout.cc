#include "deviceshare/mig/mig_layout.h"

#include <algorithm>
#include <functional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace deviceshare::mig {
namespace {

std::string Describe(const MigModel& model, const MigInstance& instance,
                     size_t index) {
  const bool known =
      instance.profile >= 0 &&
      instance.profile < static_cast<int32_t>(model.profiles.size());
  return absl::StrCat("instance ", index, " (",
                      known ? model.profiles[instance.profile].name
                            : absl::StrCat("profile #", instance.profile),
                      "@", instance.start, ")");
}

std::string LegalStarts(const MigProfile& profile) {
  std::vector<int> starts;
  for (int s = 0; s < 32; ++s) {
    if (profile.IsLegalStart(s)) starts.push_back(s);
  }
  return absl::StrJoin(starts, ", ");
}

int LowestBit(uint32_t mask) {
  int s = 0;
  while (((mask >> s) & 1u) == 0) ++s;
  return s;
}

// The distinct in-range indices of `profile_indices`, ascending.
std::vector<int> UsableProfiles(const MigModel& model,
                                absl::Span<const int> profile_indices) {
  std::vector<int> out;
  for (int p : profile_indices) {
    if (p >= 0 && p < static_cast<int>(model.profiles.size())) out.push_back(p);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// Running totals of a layout, enough to test whether one more instance fits.
struct Usage {
  uint32_t mask = 0;
  int32_t compute = 0;
  std::vector<int32_t> count;  // per profile
};

bool Fits(const MigModel& model, const Usage& usage, int p, int32_t start) {
  const MigProfile& profile = model.profiles[p];
  return profile.IsLegalStart(start) &&
         (usage.mask & profile.MaskAt(start)) == 0 &&
         usage.count[p] < profile.max_instances &&
         usage.compute + profile.compute_slices <= model.compute_slices;
}

void Add(const MigModel& model, Usage& usage, int p, int32_t start) {
  usage.mask |= model.profiles[p].MaskAt(start);
  usage.compute += model.profiles[p].compute_slices;
  ++usage.count[p];
}

void Remove(const MigModel& model, Usage& usage, int p, int32_t start) {
  usage.mask &= ~model.profiles[p].MaskAt(start);
  usage.compute -= model.profiles[p].compute_slices;
  --usage.count[p];
}

}  // namespace

absl::Status ValidateLayout(const MigModel& model,
                            absl::Span<const MigInstance> layout) {
  Usage usage;
  usage.count.assign(model.profiles.size(), 0);
  std::vector<int> owner(32, -1);  // memory slice -> instance index
  for (size_t i = 0; i < layout.size(); ++i) {
    const MigInstance& instance = layout[i];
    if (instance.profile < 0 ||
        instance.profile >= static_cast<int32_t>(model.profiles.size())) {
      return absl::InvalidArgumentError(absl::StrCat(
          Describe(model, instance, i), ": ", model.name, " has profiles 0..",
          static_cast<int>(model.profiles.size()) - 1));
    }
    const MigProfile& profile = model.profiles[instance.profile];
    if (!profile.IsLegalStart(instance.start)) {
      return absl::InvalidArgumentError(
          absl::StrCat(Describe(model, instance, i), ": ", instance.start,
                       " is not a legal start of ", profile.name,
                       " (legal: ", LegalStarts(profile), ")"));
    }
    const uint32_t mask = profile.MaskAt(instance.start);
    if (const uint32_t clash = usage.mask & mask; clash != 0) {
      const int slice = LowestBit(clash);
      const int other = owner[slice];
      return absl::InvalidArgumentError(absl::StrCat(
          Describe(model, instance, i), ": overlaps ",
          Describe(model, layout[other], other), " at memory slice ", slice));
    }
    if (usage.count[instance.profile] >= profile.max_instances) {
      return absl::InvalidArgumentError(
          absl::StrCat(Describe(model, instance, i), ": more than ",
                       profile.max_instances, " instances of ", profile.name));
    }
    if (usage.compute + profile.compute_slices > model.compute_slices) {
      return absl::InvalidArgumentError(absl::StrCat(
          Describe(model, instance, i), ": compute slices add up to ",
          usage.compute + profile.compute_slices, ", more than the ",
          model.compute_slices, " of ", model.name));
    }
    Add(model, usage, instance.profile, instance.start);
    for (int s = 0; s < 32; ++s) {
      if (((mask >> s) & 1u) != 0) owner[s] = static_cast<int>(i);
    }
  }
  return absl::OkStatus();
}

std::vector<std::vector<MigInstance>> EnumerateLayouts(
    const MigModel& model, absl::Span<const int> profile_indices) {
  // Placements in (start, profile) order; picking them in increasing index
  // order visits every set once and keeps each layout sorted by start.
  std::vector<MigInstance> placements;
  const std::vector<int> usable = UsableProfiles(model, profile_indices);
  for (int32_t start = 0; start < model.memory_slices; ++start) {
    for (int p : usable) {
      if (model.profiles[p].IsLegalStart(start)) {
        placements.push_back({p, start});
      }
    }
  }
  std::vector<std::vector<MigInstance>> layouts;
  std::vector<MigInstance> current;
  Usage usage;
  usage.count.assign(model.profiles.size(), 0);
  std::function<void(size_t)> visit = [&](size_t next) {
    layouts.push_back(current);
    for (size_t j = next; j < placements.size(); ++j) {
      const MigInstance& candidate = placements[j];
      if (!Fits(model, usage, candidate.profile, candidate.start)) continue;
      Add(model, usage, candidate.profile, candidate.start);
      current.push_back(candidate);
      visit(j + 1);
      current.pop_back();
      Remove(model, usage, candidate.profile, candidate.start);
    }
  };
  visit(0);
  return layouts;
}

bool IsMaximal(const MigModel& model, absl::Span<const MigInstance> layout,
               absl::Span<const int> profile_indices) {
  Usage usage;
  usage.count.assign(model.profiles.size(), 0);
  for (const MigInstance& instance : layout) {
    if (instance.profile < 0 ||
        instance.profile >= static_cast<int32_t>(model.profiles.size())) {
      continue;
    }
    Add(model, usage, instance.profile, instance.start);
  }
  for (int p : UsableProfiles(model, profile_indices)) {
    for (int32_t start = 0; start < model.memory_slices; ++start) {
      if (Fits(model, usage, p, start)) return false;
    }
  }
  return true;
}

uint32_t OccupiedMask(const MigModel& model,
                      absl::Span<const MigInstance> layout) {
  uint32_t mask = 0;
  for (const MigInstance& instance : layout) {
    if (instance.profile < 0 ||
        instance.profile >= static_cast<int32_t>(model.profiles.size())) {
      continue;
    }
    mask |= model.profiles[instance.profile].MaskAt(instance.start);
  }
  return mask;
}

std::string SlotMap(const MigModel& model,
                    absl::Span<const MigInstance> layout) {
  std::string map(static_cast<size_t>(std::max(model.memory_slices, 0)), '.');
  for (const MigInstance& instance : layout) {
    if (instance.profile < 0 ||
        instance.profile >= static_cast<int32_t>(model.profiles.size())) {
      continue;
    }
    const MigProfile& profile = model.profiles[instance.profile];
    const char c = profile.compute_slices <= 9
                       ? static_cast<char>('0' + profile.compute_slices)
                       : '+';
    for (int32_t s = instance.start;
         s < instance.start + profile.memory_slices &&
         s < static_cast<int32_t>(map.size());
         ++s) {
      if (s >= 0) map[s] = c;
    }
  }
  return map;
}

}  // namespace deviceshare::mig
