// File: src/gpu_kinds.h (internal)
//
// What the mig backend derives from a GPU's model string and PCI id, once
// per distinct GPU kind: its catalog model and slot search, the profiles
// migProfileAllowlist allows, and (configMap mode) the knownMigGeometries
// groups laid out on it. A GPU that registered its MIG profiles
// (Gpu::mig_profiles) is its own kind: its model is built from them
// (src/registered_model.h), keyed by type, PCI id and the profiles. Nodes
// repeat a few GPU kinds thousands of times, so the result is cached.
//
// Thread safety: Of() is safe to call concurrently.
#ifndef DEVICESHARE_MIG_SRC_GPU_KINDS_H_
#define DEVICESHARE_MIG_SRC_GPU_KINDS_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/mig/geometry_layout.h"
#include "deviceshare/mig/mig_catalog.h"
#include "deviceshare/mig/mig_config.h"
#include "deviceshare/mig/slot_search.h"
#include "deviceshare/model/gpu.h"

namespace deviceshare::mig::internal {

// One knownMigGeometries group laid out on a model.
struct LaidGroup {
  std::string name;  // the group's name, or its index for HAMi's unnamed
  std::vector<GeometrySlot> slots;  // by position
};

struct GpuKind {
  // nullptr: the catalog lacks the model (and, in configMap mode, no
  // knownMigGeometries entry names it).
  const MigModel* model = nullptr;
  const SlotSearch* search = nullptr;
  // Why `model` is null for a GPU with registered profiles or a
  // knownMigGeometries entry (they make no model); OK otherwise.
  absl::Status model_status;
  // Built from the GPU's registered profiles: the kind owns its model and
  // search, a grant is charged cores[profile], and memory percentages are
  // of the GPU's registered memory (HAMi's Totalmem), not of the largest
  // profile.
  bool registered = false;
  // The model and search the kind owns: built from registered profiles or
  // from a knownMigGeometries entry.
  std::unique_ptr<MigCatalog> own_catalog;
  std::unique_ptr<SlotSearch> own_search;
  std::vector<int32_t> cores;
  // migProfileAllowlist: the allowed profile indices; nullopt = all.
  std::optional<std::vector<int>> allowed;
  // configMap mode: the groups of the first knownMigGeometries entry whose
  // models match, or why there are none.
  absl::Status groups_status;
  std::vector<LaidGroup> groups;
  int64_t largest_memory_mib = 0;  // of the non-variant profiles

  // The core share, in percent of the GPU, a grant of `profile` charges:
  // the registered `core`, else its compute slices' share.
  int32_t CoresOf(int profile) const;
};

class GpuKinds {
 public:
  GpuKinds(const MigConfig& config, const MigCatalog& catalog);

  const GpuKind& Of(const Gpu& gpu) const;

 private:
  std::unique_ptr<GpuKind> Build(const Gpu& gpu) const;
  // configMap mode, a GPU whose type the catalog lacks: the model of the
  // first knownMigGeometries entry naming its type (src/geometry_model.h).
  // False when there is none, with the reason in kind.model_status when
  // the entry makes no model.
  bool FromGeometries(const Gpu& gpu, GpuKind& kind) const;
  const GpuKind& OfRegistered(const Gpu& gpu) const;
  // Fills what the model decides: allowlist, groups, largest memory.
  void Complete(const Gpu& gpu, GpuKind& kind) const;

  // A kind built from registered profiles and what it was built from.
  struct RegisteredEntry {
    uint32_t pci_device_id;
    std::string model;
    std::vector<RegisteredMigProfile> profiles;
    std::unique_ptr<GpuKind> kind;
  };

  const MigConfig config_;
  const bool configmap_;
  const MigCatalog& catalog_;
  // Parallel to catalog_.models(); null where the model is too large.
  std::vector<std::unique_ptr<SlotSearch>> searches_;
  mutable absl::Mutex mu_;
  mutable absl::flat_hash_map<std::pair<uint32_t, std::string>,
                              std::unique_ptr<GpuKind>>
      cache_ ABSL_GUARDED_BY(mu_);
  // By a hash of the GPU's type, PCI id and profiles; a bucket holds every
  // entry of that hash.
  mutable absl::flat_hash_map<size_t, std::vector<RegisteredEntry>> registered_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace deviceshare::mig::internal

#endif  // DEVICESHARE_MIG_SRC_GPU_KINDS_H_
