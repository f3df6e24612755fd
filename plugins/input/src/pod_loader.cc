#include "deviceshare/input/pod_loader.h"

#include <map>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deviceshare/codec/yaml_json.h"
#include "deviceshare/input/input_file.h"
#include "deviceshare/input/kube_objects.h"
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
               const DeviceConfig& config)
      : errors_(file, text), config_(config) {}

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

  void AcceptDraObjects() { dra_objects_ = true; }
  // The pods with their priorities resolved (PriorityClasses may follow
  // the pods that name them).
  void AcceptPreemptionInputs() { preemption_inputs_ = true; }
  absl::StatusOr<LoadedPods> Take() {
    if (preemption_inputs_) {
      DS_ASSIGN_OR_RETURN(loaded_.priorities,
                          priorities_.Resolve(uids_, errors_));
    }
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

absl::StatusOr<LoadedPods> LoadObjects(absl::string_view text,
                                       absl::string_view file,
                                       const DeviceConfig& config,
                                       bool dra_objects,
                                       bool resolve_priorities) {
  auto documents = ParseYamlDocuments(text);
  if (!documents.ok()) return InFile(file, documents.status());
  PodCollector collector(file, text, config);
  if (dra_objects) collector.AcceptDraObjects();
  if (resolve_priorities) collector.AcceptPreemptionInputs();
  for (size_t d = 0; d < documents->size(); ++d) {
    const Json& document = (*documents)[d];
    const size_t number = d + 1;
    if (!document.is_object()) {
      return collector.Error(
          number, absl::StrFormat("a %s, want a Pod object or a List",
                                  document.type_name()));
    }
    std::string item_kind = "Pod";
    for (const char* kind : {"ResourceClaim", "ResourceClaimTemplate"}) {
      if (KindOf(document) == absl::StrCat(kind, "List")) item_kind = kind;
    }
    auto objects = DocumentObjects(document, item_kind);
    if (!objects.ok()) {
      return collector.Error(number, std::string(objects.status().message()));
    }
    for (const DocumentObject& object : *objects) {
      DS_RETURN_IF_ERROR(collector.Add(*object.object, object.where, number));
    }
  }
  return collector.Take();
}

}  // namespace

absl::StatusOr<std::vector<PodRequest>> LoadPodsYaml(
    absl::string_view text, absl::string_view file,
    const DeviceConfig& config) {
  DS_ASSIGN_OR_RETURN(LoadedPods loaded,
                      LoadObjects(text, file, config, /*dra_objects=*/false,
                                  /*resolve_priorities=*/false));
  return std::move(loaded.pods);
}

absl::StatusOr<LoadedPods> LoadPodObjectsYaml(absl::string_view text,
                                              absl::string_view file,
                                              const DeviceConfig& config,
                                              bool resolve_priorities) {
  return LoadObjects(text, file, config, /*dra_objects=*/true,
                     resolve_priorities);
}

}  // namespace deviceshare::input
