// File: mig/mig_catalog.h
//
// The MIG profile catalog: for each GPU model that supports MIG, its memory
// and compute slice counts and every GPU-instance profile (NVML profile id,
// slices, MiB, SMs, legal start slices, instance cap). The built-in tables
// (Builtin()) hold what public NVML output shows for the common data-center
// parts; the node agent later feeds what NVML reports through FromText(),
// and that file replaces the built-in guess for its model.
//
// Contract:
//   - Every MigModel in a MigCatalog has passed validation: profile names are
//     canonical and unique, starts fit inside the model, counts are >= 1, and
//     `profiles` is sorted by (memory_slices, compute_slices, memory_mib,
//     variant, name) ascending, so index order is "smallest first".
//   - A profile index (position in MigModel::profiles) is the handle the
//     layout and slot-search code passes around; it is stable for the life
//     of the catalog.
//
// Thread safety: a MigCatalog is immutable after construction; concurrent
// const use is safe. Builtin() is built once on first use (thread-safe).
#ifndef DEVICESHARE_MIG_MIG_CATALOG_H_
#define DEVICESHARE_MIG_MIG_CATALOG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/model/gpu.h"

namespace deviceshare::mig {

struct MigProfile {
  // Canonical name: lower case, without NVML's "MIG " prefix: "1g.10gb",
  // "1g.10gb+me", "1g.24gb-me", "2g.48gb+me.all".
  std::string name;
  int32_t id = 0;  // NVML GPU-instance profile id (not portable across models)
  int32_t memory_slices = 0;
  int32_t compute_slices = 0;  // the <N> of "<N>g"
  int64_t memory_mib = 0;      // NVML memorySizeMB
  int32_t sm_count = 0;        // 0 = unknown
  // Bit s set: an instance may start at memory slice s.
  uint32_t legal_starts = 0;
  int32_t max_instances = 0;
  // The name carries a suffix (+me, +me.all, -me, +gfx): a media/graphics
  // flavour that a plain size request never gets; only chosen when named.
  bool variant = false;

  // Bits start..start+memory_slices-1 (the memory slices an instance at
  // `start` covers). 0 when the range does not fit in 32 bits.
  uint32_t MaskAt(int32_t start) const;
  bool IsLegalStart(int32_t start) const {
    return start >= 0 && start < 32 && ((legal_starts >> start) & 1u) != 0;
  }

  bool operator==(const MigProfile& other) const = default;
};

struct MigModel {
  std::string name;  // "H100-80GB"
  // PCI device ids (the high 16 bits of NVML's pciDeviceId), e.g. 0x2330.
  std::vector<uint32_t> pci_device_ids;
  // Case-insensitive patterns matched against Gpu::model, e.g. "H100 80GB
  // HBM3", "H100-SXM5-80GB". See MigCatalog::Match for the rule.
  std::vector<std::string> model_names;
  int32_t memory_slices = 0;
  int32_t compute_slices = 0;
  std::vector<MigProfile> profiles;  // sorted, see the file comment

  // The profile named `name` (case-insensitive; NVML's "MIG " prefix is
  // accepted), or nullptr.
  const MigProfile* FindProfile(absl::string_view name) const;
  // Its index in `profiles`, or -1.
  int ProfileIndex(absl::string_view name) const;
  // Bits 0..memory_slices-1.
  uint32_t FullMask() const;

  bool operator==(const MigModel& other) const = default;
};

class MigCatalog {
 public:
  MigCatalog() = default;

  // The built-in tables (see src/builtin_catalog.cc for sources and what
  // was left out).
  static const MigCatalog& Builtin();

  // Parses and validates a catalog document, YAML or JSON:
  //   models:
  //   - name: H100-80GB
  //     pciDeviceIds: ["0x2330"]        # or "0x233010DE", or integers
  //     modelNames: ["H100 80GB HBM3"]
  //     memorySlices: 8
  //     computeSlices: 7
  //     profiles:
  //     - {name: 1g.10gb, id: 19, memorySlices: 1, computeSlices: 1,
  //        memoryMiB: 9984, smCount: 16, starts: [0,1,2,3,4,5,6],
  //        maxInstances: 7}
  // smCount, pciDeviceIds and modelNames may be omitted. Profiles may come
  // in any order (they are sorted). Errors are InvalidArgument and name the
  // path and value: `models[0].profiles[2].starts[1]: 9 is outside 0..7`.
  static absl::StatusOr<MigCatalog> FromText(absl::string_view yaml_or_json);
  // FromText on the file's content; NotFound if it cannot be read.
  static absl::StatusOr<MigCatalog> FromFile(const std::string& path);
  // Validates `models` (as FromText does) and sorts their profiles.
  static absl::StatusOr<MigCatalog> FromModels(std::vector<MigModel> models);

  // The model of `gpu`, or nullptr.
  //  1. Gpu::pci_device_id, when not 0, is looked up in pci_device_ids (a
  //     value with NVIDIA's vendor id in the low 16 bits, 0x233010DE, is
  //     read as 0x2330). An unknown id falls through to step 2.
  //  2. Gpu::model is matched against every model_names pattern. Both are
  //     lower-cased and split into words at spaces, '-' and '_'; a pattern
  //     matches when its words appear consecutively among the model's words
  //     ("a100 sxm4 80gb" is in "nvidia nvidia a100 sxm4 80gb" but "h200" is
  //     not in "nvidia gh200 480gb"). The most specific match wins: most
  //     words, then most characters; a tie goes to the earlier model.
  const MigModel* Match(const Gpu& gpu) const;
  // The model named `name` (case-insensitive), or nullptr.
  const MigModel* FindModel(absl::string_view name) const;
  const std::vector<MigModel>& models() const { return models_; }

  // The catalog as a YAML document that FromText reads back to an equal
  // catalog.
  std::string ToYaml() const;

  bool operator==(const MigCatalog& other) const {
    return models_ == other.models_;
  }

 private:
  explicit MigCatalog(std::vector<MigModel> models);

  std::vector<MigModel> models_;
  // model_words_[m][k]: model_names[k] of models_[m], as words.
  std::vector<std::vector<std::vector<std::string>>> model_words_;
};

}  // namespace deviceshare::mig

#endif  // DEVICESHARE_MIG_MIG_CATALOG_H_
