// libFuzzer target: arbitrary bytes as the files simulate reads (issue 45,
// "Big inputs"). The first byte picks the reader, the rest is the file:
//   0: the cluster loader (input/cluster_loader.h; every node it returns
//      must pass ValidateInventory, as the scheduler assumes)
//   1: the pods loader with priorities, then the PodDisruptionBudgets it
//      kept grouped over its pods (simulate/disruption_budgets.h)
//   2: the pods loader stopping after 2 pending pods (--limit-pods)
//   3: the streaming reader itself (codec/yaml_stream.h), items split,
//      yaml-cpp alone
//   4: the same with libyaml first (input/libyaml_stream.h), as the pods
//      loader reads
//
// Reading must never crash, throw or trip a sanitizer, and what it gives
// must hold together: an error names the file, a pod has a uid, a limit
// holds. A broken invariant traps, so libFuzzer saves the input.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "deviceshare/codec/yaml_stream.h"
#include "deviceshare/config/device_config.h"
#include "deviceshare/input/cluster_loader.h"
#include "deviceshare/input/libyaml_stream.h"
#include "deviceshare/input/pod_loader.h"
#include "deviceshare/model/node_inventory.h"
#include "deviceshare/simulate/disruption_budgets.h"
#include "nlohmann/json.hpp"

namespace {

constexpr char kFile[] = "fuzz.yaml";

void CheckError(const absl::Status& status) {
  if (status.ok()) return;
  if (!absl::StartsWith(status.message(), kFile)) __builtin_trap();
}

void Cluster(absl::string_view text) {
  auto cluster = deviceshare::input::LoadClusterYaml(
      text, kFile, deviceshare::DeviceConfig());
  if (!cluster.ok()) return CheckError(cluster.status());
  for (const deviceshare::NodeInventory& node : cluster->nodes) {
    if (!deviceshare::ValidateInventory(node).ok()) __builtin_trap();
  }
}

void Pods(absl::string_view text, size_t limit) {
  auto pods = deviceshare::input::LoadPodObjectsYaml(
      text, kFile, deviceshare::DeviceConfig(),
      /*resolve_priorities=*/true, limit);
  if (!pods.ok()) return CheckError(pods.status());
  if (pods->pods.size() > limit) __builtin_trap();
  if (pods->pending_past_limit > 0 && pods->pods.size() != limit) {
    __builtin_trap();
  }
  std::vector<deviceshare::simulate::BudgetPod> budget_pods;
  for (const deviceshare::PodRequest& pod : pods->pods) {
    if (pod.uid.empty()) __builtin_trap();
    auto labels = pods->pod_labels.find(pod.uid);
    budget_pods.push_back(
        {pod.uid, pod.namespace_name,
         labels == pods->pod_labels.end() ? nullptr : &labels->second});
  }
  auto groups = deviceshare::simulate::GroupPodsByBudget(
      pods->disruption_budgets, budget_pods);
  if (!groups.ok() && groups.status().message().empty()) __builtin_trap();
  if (groups.ok()) {
    for (const auto& [budget, healthy] : groups->min_healthy) {
      if (healthy < 0) __builtin_trap();
    }
  }
}

// Counts what the reader hands out; items come in order, each once.
class Counter final : public deviceshare::YamlDocumentVisitor {
 public:
  absl::Status OnDocumentStart(size_t document, size_t line) override {
    if (document != documents_ + 1 || line == 0) __builtin_trap();
    next_item_ = 0;
    return absl::OkStatus();
  }
  absl::Status OnItem(size_t document, size_t index,
                      nlohmann::json item) override {
    if (document != documents_ + 1 || index != next_item_++) __builtin_trap();
    item.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return absl::OkStatus();
  }
  void OnRestart() override {
    documents_ = 0;
    next_item_ = 0;
  }
  absl::Status OnDocument(size_t document, nlohmann::json value,
                          bool items_split) override {
    if (document != ++documents_) __builtin_trap();
    if (items_split && !value.contains("items")) __builtin_trap();
    value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return absl::OkStatus();
  }

 private:
  size_t documents_ = 0;
  size_t next_item_ = 0;
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const absl::string_view text(reinterpret_cast<const char*>(data) + 1,
                               size - 1);
  switch (data[0] % 5) {
    case 0:
      Cluster(text);
      break;
    case 1:
      Pods(text, SIZE_MAX);
      break;
    case 2:
      Pods(text, 2);
      break;
    case 3:
    case 4: {
      Counter counter;
      absl::Status read = deviceshare::StreamYamlDocuments(
          text, counter, /*split_items=*/true,
          data[0] % 5 == 4 ? deviceshare::input::LibyamlParser() : nullptr);
      if (!read.ok() && read.message().empty()) __builtin_trap();
      break;
    }
  }
  return 0;
}
