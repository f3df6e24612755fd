#include "churn_audit.h"

#include <functional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/codec/hami_codec.h"
#include "testing/prometheus_text.h"

namespace deviceshare::bench {
namespace {

using ::deviceshare::testing::MetricFamilyText;
using ::deviceshare::testing::PrometheusText;

int64_t Sum(const PrometheusText& text, absl::string_view family) {
  const MetricFamilyText* found = text.Find(family);
  if (found == nullptr) return 0;
  double sum = 0;
  for (const auto& sample : found->samples) sum += sample.value;
  return static_cast<int64_t>(sum);
}

// Reads one per-GPU gauge family into `gpus`, through `field`.
bool ReadGpuFamily(const PrometheusText& text, absl::string_view family,
                   const std::function<void(GpuLedger&, int64_t)>& field,
                   std::map<std::string, GpuLedger>& gpus) {
  const MetricFamilyText* found = text.Find(family);
  if (found == nullptr) return false;
  for (const auto& sample : found->samples) {
    auto uuid = sample.labels.find("gpu");
    if (uuid == sample.labels.end()) continue;
    GpuLedger& gpu = gpus[uuid->second];
    auto node = sample.labels.find("node");
    if (node != sample.labels.end()) gpu.node = node->second;
    field(gpu, static_cast<int64_t>(sample.value));
  }
  return true;
}

std::string UseText(const GpuUse& use) {
  return absl::StrCat(use.memory_mib, " MiB ", use.cores, " % ", use.tenants,
                      " tenants");
}

bool Ended(const nlohmann::json& pod) {
  const nlohmann::json status = pod.value("status", nlohmann::json::object());
  const std::string phase = status.value("phase", "");
  return phase == "Succeeded" || phase == "Failed";
}

}  // namespace

absl::StatusOr<ServeView> ReadServeView(absl::string_view metrics_text) {
  absl::StatusOr<PrometheusText> text =
      testing::ParsePrometheusText(metrics_text);
  if (!text.ok()) return text.status();
  ServeView view;
  const bool complete =
      ReadGpuFamily(
          *text, "deviceshare_gpu_memory_allocated_mib",
          [](GpuLedger& g, int64_t v) { g.used.memory_mib = v; }, view.gpus) &&
      ReadGpuFamily(
          *text, "deviceshare_gpu_memory_capacity_mib",
          [](GpuLedger& g, int64_t v) { g.memory_capacity_mib = v; },
          view.gpus) &&
      ReadGpuFamily(
          *text, "deviceshare_gpu_cores_allocated_percent",
          [](GpuLedger& g, int64_t v) { g.used.cores = v; }, view.gpus) &&
      ReadGpuFamily(
          *text, "deviceshare_gpu_tenants",
          [](GpuLedger& g, int64_t v) { g.used.tenants = v; }, view.gpus);
  if (!complete) {
    return absl::InvalidArgumentError(
        "/metrics lacks a deviceshare_gpu_ family");
  }
  view.reservations_in_flight =
      Sum(*text, "deviceshare_extender_reservations_in_flight");
  view.pods_allocating = Sum(*text, "deviceshare_extender_pods_allocating");
  view.unaccounted_pods =
      Sum(*text, "deviceshare_extender_unaccounted_pods_total");
  view.binds = Sum(*text, "deviceshare_extender_binds_total");
  view.reservations_expired =
      Sum(*text, "deviceshare_extender_reservations_expired_total");
  view.watch_relists = Sum(*text, "deviceshare_watch_relists_total");
  view.watch_errors = Sum(*text, "deviceshare_watch_errors_total");
  if (const MetricFamilyText* failures =
          text->Find("deviceshare_extender_bind_failures_total")) {
    for (const auto& sample : failures->samples) {
      auto stage = sample.labels.find("stage");
      if (stage == sample.labels.end()) continue;
      view.bind_failures[stage->second] += static_cast<int64_t>(sample.value);
    }
  }
  // The ledger rests on the pods and nodes; the optional collections the
  // in-memory API server does not serve (resourcequotas) stay unsynced.
  int synced_needed = 0;
  if (const MetricFamilyText* synced = text->Find("deviceshare_watch_synced")) {
    for (const auto& sample : synced->samples) {
      auto found = sample.labels.find("resource");
      const std::string resource =
          found == sample.labels.end() ? "?" : found->second;
      const bool needed = resource == "pods" || resource == "nodes";
      if (sample.value == 1) {
        synced_needed += needed ? 1 : 0;
        continue;
      }
      view.unsynced.push_back(resource);
    }
  }
  view.watches_synced = synced_needed == 2;
  return view;
}

std::map<std::string, GpuUse> UsesFromPods(
    const std::vector<std::shared_ptr<const nlohmann::json>>& pods,
    int* unreadable) {
  std::map<std::string, GpuUse> uses;
  for (const auto& pod : pods) {
    const nlohmann::json& spec =
        pod->contains("spec") ? (*pod)["spec"] : nlohmann::json();
    if (!spec.is_object() || spec.value("nodeName", "").empty() ||
        Ended(*pod)) {
      continue;
    }
    const nlohmann::json annotations =
        pod->value("metadata", nlohmann::json::object())
            .value("annotations", nlohmann::json::object());
    auto record = annotations.find(keys::kHamiAllocated);
    if (record == annotations.end() || !record->is_string()) continue;
    auto containers = DecodeHamiAllocation(record->get<std::string>());
    if (!containers.ok()) {
      if (unreadable != nullptr) ++*unreadable;
      continue;
    }
    for (const auto& grants : *containers) {
      for (const DeviceGrant& grant : grants) {
        GpuUse& use = uses[grant.uuid];
        use.memory_mib += grant.memory_mib;
        use.cores += grant.cores;
        use.tenants += 1;
      }
    }
  }
  return uses;
}

std::vector<std::string> OverCapacity(
    const std::map<std::string, GpuUse>& uses,
    const std::map<std::string, GpuLedger>& capacity) {
  std::vector<std::string> over;
  for (const auto& [uuid, use] : uses) {
    auto gpu = capacity.find(uuid);
    if (gpu == capacity.end()) {
      over.push_back(absl::StrCat(uuid, ": not a GPU serve knows"));
      continue;
    }
    if (use.memory_mib > gpu->second.memory_capacity_mib ||
        use.cores > kGpuCores || use.tenants > kGpuTenants) {
      over.push_back(absl::StrCat(uuid, ": ", UseText(use), " on ",
                                  gpu->second.memory_capacity_mib, " MiB"));
    }
  }
  return over;
}

std::vector<std::string> LedgerDiff(
    const std::map<std::string, GpuLedger>& ledgers,
    const std::map<std::string, GpuUse>& from_pods) {
  std::vector<std::string> diff;
  for (const auto& [uuid, ledger] : ledgers) {
    auto recomputed = from_pods.find(uuid);
    const GpuUse expected =
        recomputed == from_pods.end() ? GpuUse{} : recomputed->second;
    if (!(ledger.used == expected)) {
      diff.push_back(absl::StrCat(uuid, " (", ledger.node, "): ledger ",
                                  UseText(ledger.used), " != pods ",
                                  UseText(expected)));
    }
  }
  for (const auto& [uuid, use] : from_pods) {
    if (!ledgers.contains(uuid)) {
      diff.push_back(absl::StrCat(uuid, ": no ledger; pods ", UseText(use)));
    }
  }
  return diff;
}

std::map<std::string, GpuUse> UsesOf(
    const std::map<std::string, GpuLedger>& ledgers) {
  std::map<std::string, GpuUse> uses;
  for (const auto& [uuid, ledger] : ledgers) uses[uuid] = ledger.used;
  return uses;
}

}  // namespace deviceshare::bench
