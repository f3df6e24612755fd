// File: src/geometry_model.h (internal)
//
// The MIG model a knownMigGeometries entry describes, for a GPU whose type
// the catalog lacks (an A800, say) in configMap mode. Volcano schedules
// such a GPU from the configMap alone: its MIG utils pick the entry whose
// model is a substring of the GPU's type and hand out instances by their
// position in a group, knowing nothing of slices. Without a model the GPU
// could not be scheduled here, and its running pods' records could not be
// charged, so it looked idle.
//
// The entry gives each instance type's name ("<N>g.<M>gb") and memory, not
// where its slices lie on the hardware, so the model is the simplest one
// every group of the entry lays out on: an instance of <N>g takes N memory
// slices (and N compute slices) at any start, and the GPU has as many
// slices as its largest group takes. Groups never mix on one GPU (the
// configMap search keeps a GPU to the group of the instances in use), so
// the made-up slices only keep one group's instances apart, which is all
// upstream keeps apart too. A <N>g instance is charged N of those slices'
// share of the cores, as the built-in tables charge it.
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_MIG_SRC_GEOMETRY_MODEL_H_
#define DEVICESHARE_MIG_SRC_GEOMETRY_MODEL_H_

#include "absl/status/statusor.h"
#include "deviceshare/mig/mig_catalog.h"
#include "deviceshare/mig/mig_config.h"
#include "deviceshare/model/gpu.h"

namespace deviceshare::mig::internal {

// A catalog of one model, named as `gpu`'s type, built from `entry`'s
// geometries. InvalidArgument naming the group and instance when a name is
// not a MIG profile name, and when no group has an instance or the largest
// takes more slices than a model may have (16).
absl::StatusOr<MigCatalog> BuildGeometryModel(const Gpu& gpu,
                                              const KnownMigGeometries& entry);

}  // namespace deviceshare::mig::internal

#endif  // DEVICESHARE_MIG_SRC_GEOMETRY_MODEL_H_
