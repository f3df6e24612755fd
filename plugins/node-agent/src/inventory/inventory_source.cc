#include "deviceshare/agent/inventory_source.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/agent/discovery_json.h"
#include "deviceshare/codec/yaml_json.h"
#include "deviceshare/config/device_config.h"
#include "deviceshare/input/input_file.h"
#include "deviceshare/input/short_cluster.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::agent {
namespace {

absl::Status Prefixed(const std::string& path, const absl::Status& status) {
  return absl::Status(status.code(),
                      absl::StrCat(path, ": ", status.message()));
}

DiscoveredGpu FromShortForm(const Gpu& gpu) {
  DiscoveredGpu out = FromPhysicalGpu(gpu);
  if (!gpu.healthy) out.health_reason = "unhealthy in the inventory file";
  return out;
}

absl::StatusOr<std::vector<DiscoveredGpu>> FromShortCluster(
    const nlohmann::json& document, const InventorySourceOptions& options) {
  // Default scaling (1x): the file gives physical memory.
  DS_ASSIGN_OR_RETURN(std::vector<NodeInventory> nodes,
                      input::ParseShortCluster(document, DeviceConfig{}));
  if (nodes.empty()) {
    return absl::InvalidArgumentError("nodes: lists no node");
  }
  const NodeInventory* node = &nodes.front();
  if (!options.node_name.empty()) {
    node = nullptr;
    std::vector<std::string> names;
    for (const NodeInventory& candidate : nodes) {
      names.push_back(candidate.name);
      if (candidate.name == options.node_name) node = &candidate;
    }
    if (node == nullptr) {
      return absl::NotFoundError(
          absl::StrFormat("nodes: no node named \"%s\" (there are: %s)",
                          options.node_name, absl::StrJoin(names, ", ")));
    }
  }
  std::vector<DiscoveredGpu> gpus;
  for (const Gpu& gpu : node->gpus) gpus.push_back(FromShortForm(gpu));
  return gpus;
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  absl::StatusOr<std::string> text =
      input::ReadInputFile("inventory file", path);
  if (absl::IsNotFound(text.status())) {
    return absl::NotFoundError(
        absl::StrFormat("cannot read inventory file %s", path));
  }
  return text;
}

class InventorySource final : public GpuSource {
 public:
  InventorySource(std::string path, InventorySourceOptions options)
      : path_(std::move(path)), options_(std::move(options)) {}

  absl::StatusOr<std::vector<DiscoveredGpu>> Discover() override {
    DS_ASSIGN_OR_RETURN(std::vector<DiscoveredGpu> gpus, Read());
    absl::MutexLock lock(&mu_);
    reported_.clear();
    for (const DiscoveredGpu& gpu : gpus) reported_.push_back(gpu.uuid);
    return gpus;
  }

  absl::StatusOr<std::vector<GpuHealth>> CheckHealth() override {
    DS_ASSIGN_OR_RETURN(std::vector<DiscoveredGpu> gpus, Read());
    std::vector<std::string> reported;
    {
      absl::MutexLock lock(&mu_);
      reported = reported_;
    }
    if (reported.empty()) {
      for (const DiscoveredGpu& gpu : gpus) reported.push_back(gpu.uuid);
    }
    std::vector<GpuHealth> out;
    for (const std::string& uuid : reported) {
      GpuHealth health;
      health.uuid = uuid;
      auto it = std::find_if(
          gpus.begin(), gpus.end(),
          [&](const DiscoveredGpu& gpu) { return gpu.uuid == uuid; });
      if (it == gpus.end()) {
        health.healthy = false;
        health.reason = absl::StrCat("no longer listed in ", path_);
      } else {
        health.healthy = it->healthy;
        if (!it->healthy) {
          health.reason = it->health_reason.empty()
                              ? absl::StrCat("unhealthy in ", path_)
                              : it->health_reason;
        }
      }
      out.push_back(std::move(health));
    }
    return out;
  }

  std::string Describe() const override {
    return absl::StrCat("inventory ", path_);
  }

 private:
  absl::StatusOr<std::vector<DiscoveredGpu>> Read() const {
    DS_ASSIGN_OR_RETURN(std::string text, ReadWholeFile(path_));
    return ParseInventory(text, path_, options_);
  }

  const std::string path_;
  const InventorySourceOptions options_;
  absl::Mutex mu_;
  std::vector<std::string> reported_ ABSL_GUARDED_BY(mu_);
};

}  // namespace

absl::StatusOr<std::vector<DiscoveredGpu>> ParseInventory(
    absl::string_view text, const std::string& path,
    const InventorySourceOptions& options) {
  absl::StatusOr<nlohmann::json> document = ParseJsonOrYaml(text);
  if (!document.ok()) return Prefixed(path, document.status());
  absl::StatusOr<std::vector<DiscoveredGpu>> gpus =
      input::IsShortCluster(*document) ? FromShortCluster(*document, options)
                                       : ParseDiscoveryJson(*document);
  if (!gpus.ok()) return Prefixed(path, gpus.status());
  return gpus;
}

absl::StatusOr<std::unique_ptr<GpuSource>> OpenInventorySource(
    const std::string& path, const InventorySourceOptions& options) {
  auto source = std::make_unique<InventorySource>(path, options);
  DS_RETURN_IF_ERROR(source->Discover().status());
  return source;
}

}  // namespace deviceshare::agent
