#include "deviceshare/mig/geometry_layout.h"

#include <algorithm>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "deviceshare/status_macros.h"
#include "profile_name.h"

namespace deviceshare::mig {
namespace {

std::string GroupLabel(const MigGeometry& geometry) {
  if (geometry.group.empty()) return "geometry (unnamed group)";
  return absl::StrCat("geometry group \"", geometry.group, "\"");
}

}  // namespace

absl::StatusOr<int> ResolveGeometryProfile(
    const MigModel& model, const MigGeometryInstance& instance) {
  if (const int exact = model.ProfileIndex(instance.name); exact >= 0) {
    return exact;
  }
  const std::optional<internal::ProfileName> wanted =
      internal::ParseProfileName(instance.name);
  if (!wanted) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", instance.name, "\" is not a MIG profile name"));
  }
  const int64_t target =
      instance.memory_mib > 0 ? instance.memory_mib : wanted->gigabytes * 1024;
  int best = -1;
  int64_t best_distance = 0;
  bool tie = false;
  for (size_t p = 0; p < model.profiles.size(); ++p) {
    const MigProfile& profile = model.profiles[p];
    const std::optional<internal::ProfileName> have =
        internal::ParseProfileName(profile.name);
    if (!have || have->compute_slices != wanted->compute_slices ||
        have->suffix != wanted->suffix) {
      continue;
    }
    const int64_t distance = std::llabs(profile.memory_mib - target);
    if (best < 0 || distance < best_distance) {
      best = static_cast<int>(p);
      best_distance = distance;
      tie = false;
    } else if (distance == best_distance) {
      tie = true;
    }
  }
  if (best < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", instance.name, "\": ", model.name, " has no ",
                     wanted->compute_slices, "g", wanted->suffix, " profile"));
  }
  if (tie) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", instance.name, "\" (", target, " MiB): more than one ",
        model.name, " profile is as near"));
  }
  return best;
}

absl::StatusOr<std::vector<GeometrySlot>> LayGeometry(
    const MigModel& model, const MigGeometry& geometry) {
  const std::string label = GroupLabel(geometry);
  std::vector<GeometrySlot> slots;
  std::vector<int32_t> totals(model.profiles.size(), 0);
  int32_t compute = 0;
  int32_t memory_slices = 0;
  for (size_t i = 0; i < geometry.instances.size(); ++i) {
    const MigGeometryInstance& instance = geometry.instances[i];
    const std::string where =
        absl::StrCat(label, ", instance ", i, " (", instance.name, ")");
    if (instance.count < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": count ", instance.count, " is negative"));
    }
    absl::StatusOr<int> profile = ResolveGeometryProfile(model, instance);
    if (!profile.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": ", profile.status().message()));
    }
    const MigProfile& p = model.profiles[*profile];
    for (int32_t k = 0; k < instance.count; ++k) {
      slots.push_back(
          {*profile, -1, static_cast<int32_t>(slots.size()),
           instance.memory_mib > 0 ? instance.memory_mib : p.memory_mib});
    }
    totals[*profile] += instance.count;
    compute += p.compute_slices * instance.count;
    memory_slices += p.memory_slices * instance.count;
    if (totals[*profile] > p.max_instances) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": ", totals[*profile], " instances of ", p.name,
                       ", but ", model.name, " allows ", p.max_instances));
    }
    if (compute > model.compute_slices || memory_slices > model.memory_slices) {
      return absl::InvalidArgumentError(absl::StrCat(
          where, ": the group needs ", compute, " compute and ", memory_slices,
          " memory slices so far, but ", model.name, " has ",
          model.compute_slices, " and ", model.memory_slices));
    }
  }

  std::vector<size_t> order(slots.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const MigProfile& pa = model.profiles[slots[a].profile];
    const MigProfile& pb = model.profiles[slots[b].profile];
    return std::make_tuple(-pa.memory_slices, -pa.compute_slices,
                           slots[a].profile, slots[a].position) <
           std::make_tuple(-pb.memory_slices, -pb.compute_slices,
                           slots[b].profile, slots[b].position);
  });

  size_t deepest = 0;  // first instance (in `order`) never placed
  std::function<bool(size_t, uint32_t)> place = [&](size_t k,
                                                    uint32_t occupied) {
    deepest = std::max(deepest, k);
    if (k == order.size()) return true;
    GeometrySlot& slot = slots[order[k]];
    const MigProfile& profile = model.profiles[slot.profile];
    int32_t first = 0;
    if (k > 0 && slots[order[k - 1]].profile == slot.profile) {
      first = slots[order[k - 1]].start + 1;
    }
    for (int32_t start = first; start < model.memory_slices; ++start) {
      const uint32_t mask = profile.MaskAt(start);
      if (!profile.IsLegalStart(start) || (occupied & mask) != 0) continue;
      slot.start = start;
      if (place(k + 1, occupied | mask)) return true;
    }
    slot.start = -1;
    return false;
  };
  if (!place(0, 0)) {
    const GeometrySlot& stuck = slots[order[deepest]];
    return absl::InvalidArgumentError(absl::StrCat(
        label, ": cannot be laid out on ", model.name,
        ": no free legal start for position ", stuck.position, " (",
        model.profiles[stuck.profile].name, ") beside the larger instances"));
  }
  return slots;
}

}  // namespace deviceshare::mig
