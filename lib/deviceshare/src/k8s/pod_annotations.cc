#include "deviceshare/k8s/pod_annotations.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/codec/dialect_modes.h"
#include "deviceshare/codec/hami_codec.h"
#include "deviceshare/codec/volcano_codec.h"
#include "deviceshare/status_macros.h"

namespace deviceshare {
namespace {

using Entries = std::vector<std::vector<DeviceGrant>>;

// The keys one dialect writes at bind time.
struct DialectKeys {
  const char* allocated;
  const char* to_allocate;
  const char* node;
  const char* time;
  const char* bind_time;
  const char* bind_phase;
};

constexpr DialectKeys kHamiKeys = {
    keys::kHamiAllocated, keys::kHamiToAllocate, keys::kHamiNode,
    keys::kHamiTime,      keys::kHamiBindTime,   keys::kHamiBindPhase,
};
constexpr DialectKeys kVolcanoKeys = {
    keys::kVolcanoAllocation, keys::kVolcanoToAllocate, keys::kVolcanoNode,
    keys::kVolcanoTime,       keys::kVolcanoBindTime,   keys::kVolcanoBindPhase,
};

const DialectKeys& KeysOf(Dialect dialect) {
  return dialect == Dialect::kVolcano ? kVolcanoKeys : kHamiKeys;
}

// The allocation record of one dialect: `allocated` is the lasting record;
// `to_allocate` holds the same value at bind time but the node agent empties
// it container by container, so it is only a fallback.
const std::string* FindRecord(
    const std::map<std::string, std::string>& annotations,
    const DialectKeys& dialect_keys, const char** key) {
  for (const char* candidate :
       {dialect_keys.allocated, dialect_keys.to_allocate}) {
    auto it = annotations.find(candidate);
    if (it != annotations.end()) {
      *key = candidate;
      return &it->second;
    }
  }
  return nullptr;
}

// Codec errors already name the record key; the to-allocate fallback is
// named too so that the message points at the annotation actually read.
absl::Status PodError(const PodRequest& request, const DialectKeys& k,
                      const char* key, const absl::Status& status) {
  std::string prefix = absl::StrCat("pod ", request.Key());
  if (absl::string_view(key) != k.allocated)
    absl::StrAppend(&prefix, " (reading ", key, ")");
  return absl::Status(status.code(),
                      absl::StrCat(prefix, ": ", status.message()));
}

// HAMi's MIG JSON indexes the entries of HAMi's record, so it cannot be read
// without one.
absl::Status MigWithoutRecord(const PodRequest& request) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "pod %s: %s is set but neither %s nor %s is; its entries index that "
      "record",
      request.Key(), keys::kHamiMigAllocations, keys::kHamiAllocated,
      keys::kHamiToAllocate));
}

// Which containers of `request` the entries of `dialect` stand for.
std::vector<int> EntryContainers(const PodRequest& request, Dialect dialect) {
  std::vector<int> containers;
  for (size_t i = 0; i < request.containers.size(); ++i) {
    const ContainerRequest& container = request.containers[i];
    // HAMi writes every container; Volcano only app containers with GPUs.
    if (dialect == Dialect::kHami ||
        (!container.is_init && container.wants_gpu())) {
      containers.push_back(static_cast<int>(i));
    }
  }
  return containers;
}

absl::StatusOr<PodAllocation> MapEntries(const PodRequest& request,
                                         Dialect dialect, const char* key,
                                         Entries entries,
                                         const std::string& node_name) {
  std::vector<int> targets = EntryContainers(request, dialect);
  // Both upstreams map entries to containers by position and count neither:
  // a container past the last entry has no device, and an entry past the
  // last container holds none (upstream would charge its devices to no
  // container; deviceshare refuses such a record rather than guess).
  while (entries.size() > targets.size() && entries.back().empty()) {
    entries.pop_back();
  }
  entries.resize(std::max(entries.size(), targets.size()));
  if (targets.size() != entries.size()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "pod %s: %s has %d container entries, the %s dialect wants %d for the "
        "pod's %d containers",
        request.Key(), key, entries.size(), DialectName(dialect),
        targets.size(), request.containers.size()));
  }
  PodAllocation allocation;
  allocation.pod_uid = request.uid;
  allocation.pod_key = request.Key();
  allocation.node_name = node_name;
  allocation.containers.resize(request.containers.size());
  for (size_t i = 0; i < request.containers.size(); ++i) {
    ContainerAllocation& container = allocation.containers[i];
    container.container_index = static_cast<int32_t>(i);
    container.name = request.containers[i].name;
    container.is_init = request.containers[i].is_init;
  }
  const SharingMode mode = request.mode.value_or(kDefaultSharingMode);
  for (size_t e = 0; e < entries.size(); ++e) {
    for (DeviceGrant& grant : entries[e]) {
      // A MIG instance id (`GPU-x[g-p]`) is a MIG grant whatever the request
      // says; otherwise the string carries no mode and the request's holds.
      if (grant.mode != dialect::kMigMode) grant.mode = mode;
    }
    allocation.containers[targets[e]].devices = std::move(entries[e]);
  }
  return allocation;
}

}  // namespace

std::map<std::string, std::string> AllocationAnnotations(
    const PodAllocation& allocation, Dialect dialect, absl::Time now,
    int32_t volcano_memory_factor) {
  const DialectKeys& k = KeysOf(dialect);
  const std::string record =
      dialect == Dialect::kVolcano
          ? EncodeVolcanoAllocation(allocation, volcano_memory_factor)
          : EncodeHamiAllocation(allocation);
  const std::string seconds = absl::StrCat(absl::ToUnixSeconds(now));
  std::map<std::string, std::string> annotations = {
      {k.allocated, record},
      {k.to_allocate, record},
      {k.node, allocation.node_name},
      {k.time, seconds},
      {k.bind_time, seconds},
      {k.bind_phase, keys::kBindPhaseAllocating},
  };
  // Volcano's MIG ids are in the record itself; HAMi's in their own JSON.
  if (dialect == Dialect::kHami) {
    std::string mig = EncodeHamiMigAllocations(allocation);
    if (!mig.empty()) annotations[keys::kHamiMigAllocations] = std::move(mig);
  }
  return annotations;
}

std::map<std::string, std::optional<std::string>> RollbackAnnotations(
    Dialect dialect) {
  const DialectKeys& k = KeysOf(dialect);
  std::map<std::string, std::optional<std::string>> annotations = {
      {k.allocated, std::nullopt}, {k.to_allocate, std::nullopt},
      {k.node, std::nullopt},      {k.time, std::nullopt},
      {k.bind_time, std::nullopt}, {k.bind_phase, keys::kBindPhaseFailed},
  };
  if (dialect == Dialect::kHami) {
    annotations[keys::kHamiMigAllocations] = std::nullopt;
  }
  return annotations;
}

std::optional<Dialect> RecordDialect(
    const std::map<std::string, std::string>& annotations) {
  for (Dialect dialect : {Dialect::kHami, Dialect::kVolcano}) {
    const char* key = nullptr;
    if (FindRecord(annotations, KeysOf(dialect), &key) != nullptr) {
      return dialect;
    }
  }
  return std::nullopt;
}

std::string RecordNode(const nlohmann::json& pod,
                       const std::map<std::string, std::string>& annotations,
                       Dialect dialect) {
  if (pod.is_object()) {
    auto spec = pod.find("spec");
    if (spec != pod.end() && spec->is_object()) {
      auto name = spec->find("nodeName");
      if (name != spec->end() && name->is_string() &&
          !name->get_ref<const std::string&>().empty()) {
        return name->get<std::string>();
      }
    }
  }
  auto recorded = annotations.find(KeysOf(dialect).node);
  return recorded == annotations.end() ? "" : recorded->second;
}

std::map<std::string, std::string> PodAnnotationMap(const nlohmann::json& pod) {
  std::map<std::string, std::string> annotations;
  if (!pod.is_object()) return annotations;
  auto metadata = pod.find("metadata");
  if (metadata == pod.end() || !metadata->is_object()) return annotations;
  auto found = metadata->find("annotations");
  if (found == metadata->end() || !found->is_object()) return annotations;
  for (const auto& [key, value] : found->items()) {
    if (value.is_string()) annotations[key] = value.get<std::string>();
  }
  return annotations;
}

absl::StatusOr<std::optional<PodAllocation>> AllocationFromAnnotations(
    const PodRequest& request,
    const std::map<std::string, std::string>& annotations,
    const std::string& node_name, int32_t volcano_memory_factor,
    std::vector<absl::Status>* unread) {
  const auto mig = annotations.find(keys::kHamiMigAllocations);
  for (Dialect dialect : {Dialect::kHami, Dialect::kVolcano}) {
    const DialectKeys& k = KeysOf(dialect);
    const char* key = nullptr;
    const std::string* record = FindRecord(annotations, k, &key);
    if (record == nullptr) continue;
    absl::StatusOr<Entries> entries =
        dialect == Dialect::kVolcano
            ? DecodeVolcanoAllocation(*record, volcano_memory_factor)
            : DecodeHamiAllocation(*record);
    if (!entries.ok()) return PodError(request, k, key, entries.status());
    if (mig != annotations.end()) {
      // A refused merge leaves the entries as they were.
      absl::Status refused =
          dialect != Dialect::kHami
              ? MigWithoutRecord(request)
              : PodError(request, k, key,
                         MergeHamiMigAllocations(mig->second, *entries));
      if (!refused.ok() && unread == nullptr) return refused;
      if (!refused.ok()) unread->push_back(std::move(refused));
    }
    DS_ASSIGN_OR_RETURN(
        PodAllocation allocation,
        MapEntries(request, dialect, key, *std::move(entries), node_name));
    return std::optional<PodAllocation>(std::move(allocation));
  }
  if (mig != annotations.end()) return MigWithoutRecord(request);
  return std::optional<PodAllocation>();
}

}  // namespace deviceshare
