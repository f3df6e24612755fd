// File: mig/geometry_layout.h
//
// configMap mode (Volcano / HAMi `knownMigGeometries`): a geometry group
// lists instance types with counts, in config order; Volcano and HAMi
// number the instances 0..n-1 in that order (`GPU-uuid[group-position]`).
// LayGeometry gives each of them a catalog profile and a memory slice so
// that the whole group is a valid layout (mig/mig_layout.h), which is what
// the node agent creates.
//
// Name mapping (ResolveGeometryProfile): the profile with exactly that name
// (case-insensitive); otherwise, among the model's profiles with the same
// "<N>g" compute size and the same suffix (none for plain names), the one
// whose memory is nearest the config's memory (or <M> GiB when the config
// gives none), an exact tie being an error. So HAMi's legacy `7g.79gb`
// (80896 MiB) is A100-80GB's 7g.80gb, and a config's `1g.10gb` with 9728
// MiB on an H100 is its 1-slice 1g.10gb.
//
// Placement: deterministic backtracking, larger profiles first (memory
// slices, then compute slices, descending), each at its lowest free legal
// start; instances of one profile take ascending starts in position order.
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_MIG_GEOMETRY_LAYOUT_H_
#define DEVICESHARE_MIG_GEOMETRY_LAYOUT_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/mig/mig_catalog.h"
#include "deviceshare/mig/mig_config.h"

namespace deviceshare::mig {

struct GeometrySlot {
  int32_t profile = 0;   // index in MigModel::profiles
  int32_t start = 0;     // first memory slice
  int32_t position = 0;  // Volcano/HAMi position: config-order expansion
  // The config's memory for the instance (what Volcano charges), or the
  // profile's when the config gives none.
  int64_t memory_mib = 0;

  bool operator==(const GeometrySlot& other) const = default;
};

// The profile index for one config entry (see the file comment), or
// InvalidArgument naming the entry.
absl::StatusOr<int> ResolveGeometryProfile(const MigModel& model,
                                           const MigGeometryInstance& instance);

// One slot per instance, ordered by position. InvalidArgument naming the
// group and the instance when a name does not resolve, a count is
// negative, or the instances cannot all be laid out on `model` (e.g. 8 x
// 1g on an H100: more than 1g's 7 instances).
absl::StatusOr<std::vector<GeometrySlot>> LayGeometry(
    const MigModel& model, const MigGeometry& geometry);

}  // namespace deviceshare::mig

#endif  // DEVICESHARE_MIG_GEOMETRY_LAYOUT_H_
