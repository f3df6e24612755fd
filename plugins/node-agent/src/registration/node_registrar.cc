#include "deviceshare/agent/node_registrar.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/codec/hami_codec.h"
#include "deviceshare/codec/volcano_codec.h"
#include "deviceshare/config/device_registration.h"
#include "deviceshare/kube/object_paths.h"
#include "deviceshare/mig/mig_backend.h"
#include "deviceshare/mps/mps_backend.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::agent {

namespace {

// HAMi's pair score from what discovery knows of a link
// (calculate_score.go: 100 per NVLink, else by the PCIe level: same board
// 60, single switch 50, multiple switches 40, host bridge 30, one CPU
// socket 20, across sockets 10).
int32_t PairScore(const GpuLink& link) {
  if (link.nvlinks > 0) return 100 * link.nvlinks;
  switch (link.pcie) {
    case PcieLevel::kBoard:
      return 60;
    case PcieLevel::kSwitch:
      return 50;
    case PcieLevel::kSwitches:
      return 40;
    case PcieLevel::kHostBridge:
      return 30;
    case PcieLevel::kNuma:
      return 20;
    case PcieLevel::kSystem:
      break;
  }
  return link.same_numa ? 20 : 10;
}

void SetPairScores(std::vector<Gpu>& gpus) {
  for (Gpu& gpu : gpus) {
    gpu.pair_scores.clear();
    for (const GpuLink& link : gpu.links) {
      for (const Gpu& peer : gpus) {
        if (peer.index == link.peer_index && peer.uuid != gpu.uuid) {
          gpu.pair_scores.push_back({peer.uuid, PairScore(link)});
        }
      }
    }
  }
}

// HAMi's NVML profile lookup (migmgr.go profileSliceKey and
// profileNameToGIProfileID): an allowlisted name stands for the GPU
// instance profile of the compute slices before its first '.', whatever
// its memory part says; "" for a key HAMi's table does not have.
std::string SliceKey(absl::string_view name) {
  static constexpr absl::string_view kKeys[] = {"1g", "2g", "3g", "4g",
                                                "6g", "7g", "8g"};
  const size_t dot = name.find('.');
  const absl::string_view key =
      dot != absl::string_view::npos && dot > 0 ? name.substr(0, dot) : name;
  for (absl::string_view known : kKeys) {
    if (key == known) return std::string(key);
  }
  return "";
}

// The NVML profile HAMi queries for `key` (GPU_INSTANCE_PROFILE_<N>_SLICE).
// Discovery lists profiles in NVML profile-index order, and the base
// profiles (indices 0-6, one per slice count) come before every variant
// (1g.10gb+me, 1g.20gb, ...), so it is the first whose name has the key.
const MigProfileInfo* BaseProfile(const DiscoveredGpu& gpu,
                                  const std::string& key) {
  for (const MigProfileInfo& info : gpu.mig_profiles) {
    if (SliceKey(info.name) == key) return &info;
  }
  return nullptr;
}

// `info` registered under `name`, as discoverMigProfiles fills it: NVML's
// memory, slice and instance counts and placements, and the core share
// ceil(profile SMs x 100 / `full_sms`), 0 when NVML gave no SM counts.
RegisteredMigProfile Registered(const MigProfileInfo& info,
                                const std::string& name, int64_t full_sms) {
  RegisteredMigProfile profile;
  profile.name = name;
  profile.memory_mib = info.memory_mib;
  profile.slice_count = info.slice_count;
  profile.instance_count = info.instance_count;
  if (full_sms > 0) {
    profile.cores = static_cast<int32_t>(
        (int64_t{info.sm_count} * 100 + full_sms - 1) / full_sms);
  }
  for (int32_t start : info.starts) {
    profile.placements.push_back(MigPlacement{start, info.memory_slices});
  }
  return profile;
}

// The MIG profiles of a GPU in MIG mode as HAMi's device plugin registers
// them (register.go discoverMigProfiles): those of the first allowlist
// entry whose models name the GPU's registered type, in the entry's
// order, each under its allowlisted name; none without such an entry. The
// full GPU's SMs are the most of any profile NVML reports (HAMi looks only
// at the base profiles, but the whole-GPU one is among them either way).
std::vector<RegisteredMigProfile> RegisteredMigProfiles(
    const DiscoveredGpu& gpu,
    const std::vector<mig::MigProfileAllowlist>& allowlist) {
  std::vector<RegisteredMigProfile> out;
  if (!gpu.mig_enabled) return out;
  int64_t full_sms = 0;
  for (const MigProfileInfo& info : gpu.mig_profiles) {
    full_sms = std::max<int64_t>(full_sms, info.sm_count);
  }
  const std::string type = RegisteredType(gpu.model, Dialect::kHami);
  const mig::MigProfileAllowlist* entry =
      mig::AllowlistEntryFor(allowlist, type);
  if (entry == nullptr) return out;
  for (const std::string& name : entry->profiles) {
    const MigProfileInfo* info = BaseProfile(gpu, SliceKey(name));
    if (info != nullptr) out.push_back(Registered(*info, name, full_sms));
  }
  return out;
}

}  // namespace

absl::StatusOr<std::vector<Gpu>> RegisteredGpus(
    const std::vector<DiscoveredGpu>& gpus, const DeviceConfig& config,
    SharingMode whole_gpu_mode) {
  return RegisteredGpus(gpus, config, whole_gpu_mode, /*mig_allowlist=*/{});
}

absl::StatusOr<std::vector<Gpu>> RegisteredGpus(
    const std::vector<DiscoveredGpu>& gpus, const DeviceConfig& config,
    SharingMode whole_gpu_mode,
    const std::vector<mig::MigProfileAllowlist>& mig_allowlist) {
  std::vector<Gpu> registered;
  for (const DiscoveredGpu& discovered : gpus) {
    Gpu physical = ToPhysicalGpu(discovered);
    if (physical.mode != mig::kMode) {
      physical.mode = whole_gpu_mode;
      physical.mps_capable = whole_gpu_mode == mps::kMode;
    }
    DS_ASSIGN_OR_RETURN(Gpu gpu, RegisteredGpu(std::move(physical), config));
    gpu.mig_profiles = RegisteredMigProfiles(discovered, mig_allowlist);
    // HAMi's plugin counts a MIG GPU's tenants as its most instances of one
    // registered profile (getAPIDevices), not as deviceSplitCount.
    if (!gpu.mig_profiles.empty()) {
      gpu.split_count = 0;
      for (const RegisteredMigProfile& profile : gpu.mig_profiles) {
        gpu.split_count = std::max(gpu.split_count, profile.instance_count);
      }
    }
    registered.push_back(std::move(gpu));
  }
  SetPairScores(registered);
  return registered;
}

std::string RegistrationKey(Dialect dialect) {
  return dialect == Dialect::kVolcano ? keys::kVolcanoNodeRegister
                                      : keys::kHamiNodeRegister;
}

std::string RegisteredType(const std::string& nvml_name, Dialect dialect) {
  // Volcano's device plugin always prefixes the NVML name; HAMi's only when
  // it does not start with the vendor already. Model filters match
  // substrings, so either way `use-gputype: A100` still matches.
  if (dialect == Dialect::kVolcano || !absl::StartsWith(nvml_name, "NVIDIA")) {
    return absl::StrCat("NVIDIA-", nvml_name);
  }
  return nvml_name;
}

std::string RegistrationValue(std::vector<Gpu> gpus, Dialect dialect,
                              int32_t volcano_memory_factor) {
  for (Gpu& gpu : gpus) gpu.model = RegisteredType(gpu.model, dialect);
  return dialect == Dialect::kVolcano
             ? EncodeVolcanoNodeRegister(gpus, volcano_memory_factor)
             : EncodeHamiNodeRegisterJson(gpus);
}

NodeRegistrar::NodeRegistrar(kube::ApiClient* client, std::string node_name,
                             Dialect dialect, int32_t volcano_memory_factor)
    : client_(client),
      node_name_(std::move(node_name)),
      dialect_(dialect),
      volcano_memory_factor_(volcano_memory_factor) {}

absl::StatusOr<bool> NodeRegistrar::Register(const std::vector<Gpu>& gpus) {
  std::map<std::string, std::string> wanted = {
      {RegistrationKey(dialect_),
       RegistrationValue(gpus, dialect_, volcano_memory_factor_)}};
  // HAMi's device plugin writes the pair scores beside its registration.
  if (dialect_ == Dialect::kHami) {
    std::string scores = EncodeHamiPairScores(gpus);
    if (!scores.empty()) wanted[keys::kHamiPairScore] = std::move(scores);
  }
  DS_ASSIGN_OR_RETURN(nlohmann::json node,
                      client_->Get(kube::NodePath(node_name_)));
  const nlohmann::json* annotations = nullptr;
  if (node.is_object() && node.contains("metadata") &&
      node["metadata"].is_object() &&
      node["metadata"].contains("annotations")) {
    annotations = &node["metadata"]["annotations"];
  }
  nlohmann::json patch;
  for (const auto& [key, value] : wanted) {
    if (annotations != nullptr && annotations->is_object()) {
      auto current = annotations->find(key);
      if (current != annotations->end() && current->is_string() &&
          current->get<std::string>() == value) {
        continue;
      }
    }
    patch["metadata"]["annotations"][key] = value;
  }
  if (patch.is_null()) return false;
  DS_RETURN_IF_ERROR(
      client_->MergePatch(kube::NodePath(node_name_), patch).status());
  return true;
}

}  // namespace deviceshare::agent
