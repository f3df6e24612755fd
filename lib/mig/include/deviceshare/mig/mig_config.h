// File: mig/mig_config.h
//
// MigConfig: the mig backend's settings, which it owns in the config file
// (config/config_extension.h):
//
//   scheduler:
//     migSearch: placement      # placement | configmap
//   nvidia:
//     knownMigGeometries: ...   # Volcano's named groups or HAMi's lists
//     migProfileAllowlist: ...  # HAMi >= 2.10
//
// The core's parser keeps these values as written (Config::extensions);
// ReadMigConfig() turns them into a MigConfig, and MigConfigExtension()
// tells the parser which keys they are and checks them once the file is
// read. A value type.
#ifndef DEVICESHARE_MIG_MIG_CONFIG_H_
#define DEVICESHARE_MIG_MIG_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/config/config_extension.h"
#include "deviceshare/config/scheduler_config.h"

namespace deviceshare::mig {

// How the mig backend chooses a pod's MIG instance.
enum class MigSearch {
  // "placement": the smallest adequate profile of the GPU's MIG catalog, at
  // the legal start that keeps the most placements possible.
  kPlacement,
  // "configmap": Volcano/HAMi knownMigGeometries: a GPU takes the first
  // geometry group, in config order, with a free adequate instance, and
  // keeps it while any of its instances is in use.
  kConfigMap,
};

absl::string_view MigSearchName(MigSearch search);  // "placement"/"configmap"

// One instance type of a MIG geometry: `{name: 1g.10gb, memory: 9728,
// count: 7}` (HAMi also gives `core`).
struct MigGeometryInstance {
  std::string name;
  int64_t memory_mib = 0;
  int32_t cores = 0;  // HAMi's `core`; 0 when the config omits it
  int32_t count = 0;

  bool operator==(const MigGeometryInstance& other) const = default;
};

// One whole-GPU geometry. Volcano names it (`group: group2`); HAMi's list of
// lists leaves the name empty.
struct MigGeometry {
  std::string group;
  std::vector<MigGeometryInstance> instances;

  bool operator==(const MigGeometry& other) const = default;
};

// `knownMigGeometries` entry: models (substrings of Gpu::model) and their
// allowed geometries, in config order.
struct KnownMigGeometries {
  std::vector<std::string> models;
  std::vector<MigGeometry> geometries;

  bool operator==(const KnownMigGeometries& other) const = default;
};

// HAMi >= 2.10 `migProfileAllowlist` entry.
struct MigProfileAllowlist {
  std::vector<std::string> models;
  std::vector<std::string> profiles;  // "1g.10gb", ...

  bool operator==(const MigProfileAllowlist& other) const = default;
};

// The entry of `allowlist` for a GPU of registered type `gpu_model`: the
// first whose models name it (model/model_match.h), as HAMi's device plugin
// takes the first; null when none does.
const MigProfileAllowlist* AllowlistEntryFor(
    const std::vector<MigProfileAllowlist>& allowlist,
    absl::string_view gpu_model);

// The knownMigGeometries entry for a GPU of type `gpu_model`: the first
// whose models name it, as Volcano's MIG utils take the first; null when
// none does.
const KnownMigGeometries* GeometriesEntryFor(
    const std::vector<KnownMigGeometries>& known_geometries,
    absl::string_view gpu_model);

struct MigConfig {
  MigSearch search = MigSearch::kPlacement;            // scheduler.migSearch
  std::vector<KnownMigGeometries> known_geometries;    // nvidia.knownMig...
  std::vector<MigProfileAllowlist> profile_allowlist;  // nvidia.migProfile...

  bool operator==(const MigConfig& other) const = default;
};

// The mig settings of `config` (defaults where it has none).
// InvalidArgument naming the key path and the value for a bad one.
absl::StatusOr<MigConfig> ReadMigConfig(const Config& config);

// `config` with its mig settings replaced by `mig` (as a file would give
// them), for hosts and tests that build a Config in code.
Config WithMigConfig(Config config, const MigConfig& mig);

// The keys above, and the check run when a file is read: the values parse,
// a configmap search has geometries when mig is enabled, and settings that
// go unused are noticed.
ConfigExtension MigConfigExtension();

}  // namespace deviceshare::mig

#endif  // DEVICESHARE_MIG_MIG_CONFIG_H_
