#include "deviceshare/input/pod_loader.h"

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deviceshare/codec/yaml_stream.h"
#include "deviceshare/input/input_file.h"
#include "deviceshare/input/kube_objects.h"
#include "deviceshare/input/libyaml_stream.h"
#include "deviceshare/input/pod_priorities.h"
#include "deviceshare/input/yaml_document_lines.h"
#include "deviceshare/k8s/pod_annotations.h"
#include "deviceshare/k8s/pod_parser.h"
#include "deviceshare/k8s/resource_quota_parser.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::input {
namespace {

using Json = nlohmann::json;

// A pod that carries an allocation record (of `dialect`) as a running one.
RecordedPod Running(const Json& pod, const PodRequest& request,
                    std::map<std::string, std::string> annotations,
                    Dialect dialect) {
  RecordedPod running;
  running.request = request;
  running.node = RecordNode(pod, annotations, dialect);
  running.annotations = std::move(annotations);
  return running;
}

// A pod that has run to its end; a pod being deleted (deletionTimestamp)
// still holds its GPUs until it is gone, as in HAMi's scheduler.
bool Finished(const Json& pod) {
  auto status = pod.find("status");
  if (status == pod.end() || !status->is_object()) return false;
  auto phase = status->find("phase");
  return phase != status->end() && phase->is_string() &&
         (*phase == "Succeeded" || *phase == "Failed");
}

bool HasNodeName(const Json& pod) {
  auto spec = pod.find("spec");
  if (spec == pod.end() || !spec->is_object()) return false;
  auto node = spec->find("nodeName");
  return node != spec->end() && node->is_string() &&
         !node->get_ref<const std::string&>().empty();
}

class PodCollector {
 public:
  PodCollector(absl::string_view file, absl::string_view text,
               const DeviceConfig& config, size_t pending_limit)
      : errors_(file, text), config_(config), pending_limit_(pending_limit) {}

  absl::Status Add(const Json& object, absl::string_view where,
                   size_t document) {
    std::string kind = KindOf(object);
    if (dra_objects_ &&
        (kind == "ResourceClaim" || kind == "ResourceClaimTemplate")) {
      return AddClaimObject(object, kind, where, document);
    }
    if (kind == "ResourceQuota") return AddQuota(object, where, document);
    if (dra_objects_ && kind == "PriorityClass") {
      return priorities_.AddClass(object, document, errors_);
    }
    if (dra_objects_ && kind == "PodDisruptionBudget") {
      if (preemption_inputs_) loaded_.disruption_budgets.push_back(object);
      return absl::OkStatus();
    }
    if (!kind.empty() && kind != "Pod") {
      return Error(
          document,
          absl::StrFormat("%skind: %s, want %s", where, kind,
                          dra_objects_ ? "Pod, ResourceQuota, PriorityClass, "
                                         "PodDisruptionBudget, ResourceClaim "
                                         "or ResourceClaimTemplate"
                                       : "Pod or ResourceQuota"));
    }
    if (Finished(object)) {
      ++loaded_.finished;
      return absl::OkStatus();
    }
    std::map<std::string, std::string> annotations = PodAnnotationMap(object);
    const std::optional<Dialect> record_dialect = RecordDialect(annotations);
    if (!record_dialect && HasNodeName(object)) {
      ++loaded_.bound_without_record;
      return absl::OkStatus();
    }
    if (!record_dialect && pods_.size() >= pending_limit_) {
      // Past the limit: only counted, so neither read nor checked.
      ++loaded_.pending_past_limit;
      return absl::OkStatus();
    }
    auto request = ParsePodRequest(object, config_);
    if (!request.ok()) {
      return errors_.At(
          document,
          absl::Status(request.status().code(),
                       absl::StrCat(where, request.status().message())));
    }
    const std::string key = request->Key();
    if (auto it = document_by_key_.find(key); it != document_by_key_.end()) {
      return Error(document,
                   absl::StrFormat("%spod %s is already defined in document "
                                   "%d",
                                   where, key, it->second));
    }
    if (auto it = key_by_uid_.find(request->uid); it != key_by_uid_.end()) {
      return Error(document,
                   absl::StrFormat("%spod %s: metadata.uid %s is also pod %s's",
                                   where, key, request->uid, it->second));
    }
    document_by_key_.emplace(key, document);
    key_by_uid_.emplace(request->uid, key);
    if (preemption_inputs_) {
      priorities_.AddPod(object, request->uid, document);
      uids_.push_back(request->uid);
      KeepLabels(object, request->uid);
    }
    if (record_dialect) {
      loaded_.running.push_back(
          Running(object, *request, std::move(annotations), *record_dialect));
    } else {
      pods_.push_back(*std::move(request));
    }
    return absl::OkStatus();
  }

  absl::Status Error(size_t document, std::string message) {
    return errors_.At(document, absl::InvalidArgumentError(std::move(message)));
  }

  void SetLine(size_t document, size_t line) {
    errors_.SetLine(document, line);
  }

  void AcceptDraObjects() { dra_objects_ = true; }
  // The pods with their priorities resolved (PriorityClasses may follow
  // the pods that name them).
  void AcceptPreemptionInputs() { preemption_inputs_ = true; }
  absl::StatusOr<LoadedPods> Take() {
    if (preemption_inputs_) {
      DS_ASSIGN_OR_RETURN(loaded_.priorities,
                          priorities_.Resolve(uids_, errors_));
    }
    loaded_.pending_limit_reached = pods_.size() >= pending_limit_;
    loaded_.priority_classes = priorities_.classes_read();
    return std::move(loaded_);
  }

 private:
  void KeepLabels(const Json& pod, const std::string& uid) {
    auto metadata = pod.find("metadata");
    if (metadata == pod.end() || !metadata->is_object()) return;
    auto labels = metadata->find("labels");
    if (labels == metadata->end() || !labels->is_object() || labels->empty()) {
      return;
    }
    loaded_.pod_labels.emplace(uid, *labels);
  }

  absl::Status AddClaimObject(const Json& object, const std::string& kind,
                              absl::string_view where, size_t document) {
    std::string ns;
    std::string name;
    if (kind == "ResourceClaim") {
      absl::StatusOr<dra::ResourceClaim> claim =
          dra::DecodeResourceClaim(object);
      if (!claim.ok()) return Located(document, where, kind, claim.status());
      ns = claim->ns;
      name = claim->name;
      loaded_.claims.push_back(*std::move(claim));
    } else {
      absl::StatusOr<dra::ResourceClaimTemplate> decoded =
          dra::DecodeResourceClaimTemplate(object);
      if (!decoded.ok()) {
        return Located(document, where, kind, decoded.status());
      }
      ns = decoded->ns;
      name = decoded->name;
      loaded_.templates.push_back(*std::move(decoded));
    }
    const std::string key = absl::StrCat(kind, " ", ns, "/", name);
    if (!claim_keys_.insert(key).second) {
      return Error(document,
                   absl::StrFormat("%s%s is defined twice", where, key));
    }
    return absl::OkStatus();
  }

  absl::Status AddQuota(const Json& object, absl::string_view where,
                        size_t document) {
    absl::StatusOr<std::optional<GpuQuota>> quota =
        ParseResourceQuota(object, config_);
    if (!quota.ok()) {
      return errors_.At(
          document,
          absl::Status(quota.status().code(),
                       absl::StrCat(where, quota.status().message())));
    }
    if (!*quota) return absl::OkStatus();
    const std::string key = absl::StrCat(
        "ResourceQuota ", (*quota)->namespace_name, "/", (*quota)->name);
    if (!claim_keys_.insert(key).second) {
      return Error(document,
                   absl::StrFormat("%s%s is defined twice", where, key));
    }
    loaded_.quotas.push_back(**std::move(quota));
    return absl::OkStatus();
  }

  absl::Status Located(size_t document, absl::string_view where,
                       absl::string_view kind, const absl::Status& status) {
    return errors_.At(
        document, absl::Status(status.code(), absl::StrCat(where, kind, ": ",
                                                           status.message())));
  }

  YamlDocumentErrors errors_;
  const DeviceConfig& config_;
  const size_t pending_limit_;
  bool dra_objects_ = false;
  bool preemption_inputs_ = false;
  LoadedPods loaded_;
  std::vector<PodRequest>& pods_ = loaded_.pods;
  absl::flat_hash_set<std::string> claim_keys_;
  absl::flat_hash_map<std::string, size_t> document_by_key_;
  absl::flat_hash_map<std::string, std::string> key_by_uid_;
  PriorityCollector priorities_;
  std::vector<std::string> uids_;  // pending and running pods, for priorities
};

}  // namespace

namespace {

// "an" before "array" and "object", "a" before the other JSON types.
absl::string_view Article(absl::string_view word) {
  return !word.empty() && (word[0] == 'a' || word[0] == 'o') ? "an" : "a";
}

// The kinds whose `items` are objects of a pods file: List and the
// <Kind>List of each kind read here.
bool IsListKind(absl::string_view kind) {
  return IsListOf(kind, "Pod") || IsListOf(kind, "ResourceClaim") ||
         IsListOf(kind, "ResourceClaimTemplate");
}

// Hands each document, and each item of a List as soon as it is read, to
// the collector: a big file is never held as one tree.
class PodStream final : public YamlDocumentVisitor {
 public:
  // `make` sets up a fresh collector, in place (it points into itself).
  explicit PodStream(std::function<void(std::optional<PodCollector>&)> make)
      : make_(std::move(make)) {
    make_(collector_);
  }

  PodCollector& collector() { return *collector_; }

  absl::Status OnDocumentStart(size_t document, size_t line) override {
    collector_->SetLine(document, line);
    return absl::OkStatus();
  }

  void OnRestart() override { make_(collector_); }

  // Whether reading stopped at an error of the collector's (which names
  // the file) rather than the reader's.
  bool failed() const { return failed_; }

  absl::Status OnItem(size_t document, size_t index, Json item) override {
    return Noted(Item(document, index, std::move(item)));
  }

  absl::Status OnDocument(size_t document, Json value,
                          bool items_split) override {
    return Noted(Document(document, std::move(value), items_split));
  }

 private:
  absl::Status Noted(absl::Status status) {
    failed_ |= !status.ok();
    return status;
  }

  absl::Status Item(size_t document, size_t index, Json item) {
    const std::string where = ItemWhere(index);
    if (!item.is_object()) {
      return collector_->Error(
          document,
          absl::StrFormat("%s%s %s, want an object", where,
                          Article(item.type_name()), item.type_name()));
    }
    return collector_->Add(item, where, document);
  }

  absl::Status Document(size_t document, Json value, bool items_split) {
    if (!value.is_object()) {
      return collector_->Error(
          document, absl::StrFormat("a %s, want a Pod object or a List",
                                    value.type_name()));
    }
    const std::string kind = KindOf(value);
    if (items_split) {
      // The items have been read already: kubectl prints `kind` after them.
      if (IsListKind(kind)) return absl::OkStatus();
      return collector_->Error(
          document,
          absl::StrFormat("kind: %s has a list of items; only List, PodList, "
                          "ResourceClaimList and ResourceClaimTemplateList "
                          "have items",
                          kind.empty() ? "(none)" : kind));
    }
    if (IsListKind(kind)) {
      return collector_->Error(document,
                               std::string(ListWithoutItems(kind).message()));
    }
    return collector_->Add(value, "", document);
  }

  std::function<void(std::optional<PodCollector>&)> make_;
  std::optional<PodCollector> collector_;
  bool failed_ = false;
};

absl::StatusOr<LoadedPods> LoadObjects(
    absl::string_view text, absl::string_view file, const DeviceConfig& config,
    bool dra_objects, bool resolve_priorities, size_t pending_limit) {
  PodStream stream([&](std::optional<PodCollector>& collector) {
    collector.emplace(file, text, config, pending_limit);
    if (dra_objects) collector->AcceptDraObjects();
    if (resolve_priorities) collector->AcceptPreemptionInputs();
  });
  absl::Status read =
      StreamYamlDocuments(text, stream, /*split_items=*/true, LibyamlParser());
  if (!read.ok()) {
    // The collector's own errors already name the file; the reader's do not.
    return stream.failed() ? read : InFile(file, read);
  }
  return stream.collector().Take();
}

}  // namespace

absl::StatusOr<std::vector<PodRequest>> LoadPodsYaml(
    absl::string_view text, absl::string_view file,
    const DeviceConfig& config) {
  DS_ASSIGN_OR_RETURN(
      LoadedPods loaded,
      LoadObjects(text, file, config, /*dra_objects=*/false,
                  /*resolve_priorities=*/false, /*pending_limit=*/SIZE_MAX));
  return std::move(loaded.pods);
}

absl::StatusOr<LoadedPods> LoadPodObjectsYaml(absl::string_view text,
                                              absl::string_view file,
                                              const DeviceConfig& config,
                                              bool resolve_priorities,
                                              size_t pending_limit) {
  return LoadObjects(text, file, config, /*dra_objects=*/true,
                     resolve_priorities, pending_limit);
}

}  // namespace deviceshare::input
