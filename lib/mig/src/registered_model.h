// File: src/registered_model.h (internal)
//
// The MIG model a GPU's registered profiles describe (Gpu::mig_profiles,
// HAMi's `migProfiles`): HAMi's scheduler places MIG instances only at the
// profiles and placements a node registered, with the registered memory,
// and charges the registered core share, so a GPU that registers them is
// scheduled from them instead of the built-in table for its type.
//
// The registration lacks what the built-in model of the GPU's type (when
// there is one) knows: the GPU's memory and compute slice counts, NVML
// profile ids, SM counts and per-profile instance caps; those are taken
// from it. Without one, memory slices end where the last placement does
// and compute slices are the largest registered `<N>g` (core shares are not
// proportional to slices on every part, an H100's 1g is 13 % of 7, so they
// cannot give the count); a container's cores then ask for slices of that
// largest profile, while grants are still charged the registered `core`.
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_MIG_SRC_REGISTERED_MODEL_H_
#define DEVICESHARE_MIG_SRC_REGISTERED_MODEL_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/mig/mig_catalog.h"
#include "deviceshare/model/gpu.h"

namespace deviceshare::mig::internal {

struct RegisteredModel {
  MigCatalog catalog;  // one model, validated and sorted
  // cores[p]: the core share a grant of catalog.models()[0].profiles[p] is
  // charged, in percent of the GPU.
  std::vector<int32_t> cores;
};

// The model of `gpu`'s registered profiles; `base` is the built-in model of
// its type or nullptr. Profiles without placements or memory are left out
// (nothing can be placed from them, in HAMi either). InvalidArgument when
// none is left or the rest do not make a model (more than 16 memory
// slices, or 32 profiles).
absl::StatusOr<RegisteredModel> BuildRegisteredModel(const Gpu& gpu,
                                                     const MigModel* base);

}  // namespace deviceshare::mig::internal

#endif  // DEVICESHARE_MIG_SRC_REGISTERED_MODEL_H_
