#include "deviceshare/agent/node_registrar.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/codec/hami_codec.h"
#include "deviceshare/codec/volcano_codec.h"
#include "deviceshare/config/device_registration.h"
#include "deviceshare/kube/object_paths.h"
#include "deviceshare/mig/mig_backend.h"
#include "deviceshare/mps/mps_backend.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::agent {

absl::StatusOr<std::vector<Gpu>> RegisteredGpus(
    const std::vector<DiscoveredGpu>& gpus, const DeviceConfig& config,
    SharingMode whole_gpu_mode) {
  std::vector<Gpu> registered;
  for (const DiscoveredGpu& discovered : gpus) {
    Gpu physical = ToPhysicalGpu(discovered);
    if (physical.mode != mig::kMode) {
      physical.mode = whole_gpu_mode;
      physical.mps_capable = whole_gpu_mode == mps::kMode;
    }
    DS_ASSIGN_OR_RETURN(Gpu gpu, RegisteredGpu(std::move(physical), config));
    registered.push_back(std::move(gpu));
  }
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
  const std::string key = RegistrationKey(dialect_);
  const std::string value =
      RegistrationValue(gpus, dialect_, volcano_memory_factor_);
  DS_ASSIGN_OR_RETURN(nlohmann::json node,
                      client_->Get(kube::NodePath(node_name_)));
  const nlohmann::json* annotations = nullptr;
  if (node.is_object() && node.contains("metadata") &&
      node["metadata"].is_object() &&
      node["metadata"].contains("annotations")) {
    annotations = &node["metadata"]["annotations"];
  }
  if (annotations != nullptr && annotations->is_object()) {
    auto current = annotations->find(key);
    if (current != annotations->end() && current->is_string() &&
        current->get<std::string>() == value) {
      return false;
    }
  }
  nlohmann::json patch;
  patch["metadata"]["annotations"][key] = value;
  DS_RETURN_IF_ERROR(
      client_->MergePatch(kube::NodePath(node_name_), patch).status());
  return true;
}

}  // namespace deviceshare::agent
