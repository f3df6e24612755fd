#include "deviceshare/simulate/defrag_inputs.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "deviceshare/codec/yaml_json.h"
#include "deviceshare/input/cluster_loader.h"
#include "deviceshare/input/input_file.h"
#include "deviceshare/input/kube_objects.h"
#include "deviceshare/input/pod_loader.h"
#include "deviceshare/kube/api_status.h"
#include "deviceshare/kube/object_paths.h"
#include "deviceshare/simulate/simulate.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::simulate {
namespace {

using nlohmann::json;

constexpr char kBudgetsPath[] = "/apis/policy/v1/poddisruptionbudgets";
constexpr char kPriorityClassesPath[] =
    "/apis/scheduling.k8s.io/v1/priorityclasses";

SimulateOptions AsSimulate(const DefragSource& source) {
  SimulateOptions options;
  options.cluster_path = source.cluster_path;
  options.pods_path = source.pods_path;
  options.config_path = source.config_path;
  options.node_policy = source.node_policy;
  options.gpu_policy = source.gpu_policy;
  options.preemption = true;  // read the pods' priorities
  return options;
}

std::string StringAt(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

// The uid the pod loader gives a pod: metadata.uid, else namespace/name.
std::string UidOf(const json& pod) {
  const json metadata = pod.value("metadata", json::object());
  if (!metadata.is_object()) return "";
  std::string uid = StringAt(metadata, "uid");
  if (!uid.empty()) return uid;
  std::string ns = StringAt(metadata, "namespace");
  return absl::StrCat(ns.empty() ? "default" : ns, "/",
                      StringAt(metadata, "name"));
}

// The PodDisruptionBudget objects of a file's text. `only_budgets`: any
// other kind is an error (--budgets); else it is skipped (the pods file,
// whose other objects the pod loader reads).
absl::StatusOr<std::vector<json>> BudgetsIn(const std::string& text,
                                            const std::string& path,
                                            bool only_budgets) {
  std::vector<json> budgets;
  absl::StatusOr<std::vector<json>> documents = ParseYamlDocuments(text);
  if (!documents.ok()) return input::InFile(path, documents.status());
  for (size_t d = 0; d < documents->size(); ++d) {
    const json& document = (*documents)[d];
    if (!document.is_object()) {
      if (!only_budgets) continue;
      return input::InDocument(path, d + 1,
                               absl::InvalidArgumentError("is not an object"));
    }
    absl::StatusOr<std::vector<input::DocumentObject>> objects =
        input::DocumentObjects(document, "PodDisruptionBudget");
    if (!objects.ok()) {
      if (!only_budgets) continue;
      return input::InDocument(path, d + 1, objects.status());
    }
    for (const input::DocumentObject& object : *objects) {
      const std::string kind = input::KindOf(*object.object);
      if (kind == "PodDisruptionBudget" || (only_budgets && kind.empty())) {
        budgets.push_back(*object.object);
      } else if (only_budgets) {
        return input::InDocument(
            path, d + 1,
            absl::InvalidArgumentError(absl::StrCat(
                object.where, "kind: ", kind, ", want PodDisruptionBudget")));
      }
    }
  }
  return budgets;
}

// The items of a list answer, each with `kind` set (a list's items carry
// none).
json ItemsOf(const json& list, const char* kind) {
  json items = json::array();
  if (!list.is_object() || !list.contains("items") ||
      !list["items"].is_array()) {
    return items;
  }
  for (json item : list["items"]) {
    if (item.is_object()) item["kind"] = kind;
    items.push_back(std::move(item));
  }
  return items;
}

}  // namespace

absl::StatusOr<std::map<std::string, json>> PodObjectsByUid(
    const std::string& text) {
  DS_ASSIGN_OR_RETURN(std::vector<json> documents, ParseYamlDocuments(text));
  std::map<std::string, json> pods;
  for (const json& document : documents) {
    if (!document.is_object()) continue;
    absl::StatusOr<std::vector<input::DocumentObject>> objects =
        input::DocumentObjects(document, "Pod");
    if (!objects.ok()) continue;  // the pod loader says why
    for (const input::DocumentObject& object : *objects) {
      const std::string kind = input::KindOf(*object.object);
      if (!kind.empty() && kind != "Pod") continue;
      pods.emplace(UidOf(*object.object), *object.object);
    }
  }
  return pods;
}

absl::StatusOr<DefragInputs> LoadDefragFiles(const DefragSource& source) {
  const SimulateOptions options = AsSimulate(source);
  DefragInputs inputs;
  DS_ASSIGN_OR_RETURN(inputs.config, LoadConfig(options));
  DS_ASSIGN_OR_RETURN(inputs.workload, LoadWorkload(options, inputs.config));
  DS_ASSIGN_OR_RETURN(std::string pods_text,
                      input::ReadInputFile("--pods", source.pods_path));
  absl::StatusOr<std::map<std::string, json>> pods = PodObjectsByUid(pods_text);
  if (!pods.ok()) return input::InFile(source.pods_path, pods.status());
  inputs.pod_objects = *std::move(pods);
  DS_ASSIGN_OR_RETURN(inputs.budgets, BudgetsIn(pods_text, source.pods_path,
                                                /*only_budgets=*/false));
  if (!source.budgets_path.empty()) {
    DS_ASSIGN_OR_RETURN(std::string text,
                        input::ReadInputFile("--budgets", source.budgets_path));
    DS_ASSIGN_OR_RETURN(std::vector<json> more,
                        BudgetsIn(text, source.budgets_path,
                                  /*only_budgets=*/true));
    for (json& budget : more) inputs.budgets.push_back(std::move(budget));
  }
  return inputs;
}

absl::StatusOr<DefragInputs> LoadDefragLive(kube::ApiClient& client,
                                            const DefragSource& source) {
  DefragInputs inputs;
  DS_ASSIGN_OR_RETURN(inputs.config, LoadConfig(AsSimulate(source)));
  DS_ASSIGN_OR_RETURN(json nodes, client.Get(kube::NodesPath()));
  DS_ASSIGN_OR_RETURN(json pods, client.Get(kube::PodsPath()));
  DS_ASSIGN_OR_RETURN(json budgets, client.Get(kBudgetsPath));
  absl::StatusOr<json> classes = client.Get(kPriorityClassesPath);
  if (!classes.ok() && kube::HttpStatusOf(classes.status()) != 404) {
    return classes.status();
  }
  json node_list = {{"kind", "List"}, {"items", ItemsOf(nodes, "Node")}};
  DS_ASSIGN_OR_RETURN(input::LoadedCluster cluster,
                      input::LoadClusterYaml(node_list.dump(), "nodes (API)",
                                             inputs.config.device));
  json pod_list = {{"kind", "List"}, {"items", ItemsOf(pods, "Pod")}};
  if (classes.ok()) {
    for (json& item : ItemsOf(*classes, "PriorityClass")) {
      pod_list["items"].push_back(std::move(item));
    }
  } else {
    inputs.notes.push_back(
        "the API server serves no PriorityClasses: pods keep spec.priority");
  }
  DS_ASSIGN_OR_RETURN(input::LoadedPods loaded,
                      input::LoadPodObjectsYaml(pod_list.dump(), "pods (API)",
                                                inputs.config.device,
                                                /*resolve_priorities=*/true));
  Workload& workload = inputs.workload;
  workload.nodes = std::move(cluster.nodes);
  workload.pods = std::move(loaded.pods);
  workload.running = std::move(loaded.running);
  workload.priorities = std::move(loaded.priorities);
  workload.quotas = std::move(loaded.quotas);
  size_t with_claims = 0;
  for (const PodRequest& pod : workload.pods) with_claims += pod.HasClaims();
  if (with_claims > 0) {
    inputs.notes.push_back(absl::StrCat(
        with_claims,
        " pending pods use DRA claims: a live plan reads no ResourceSlices "
        "or ResourceClaims, so they are judged without them"));
  }
  for (json& pod : ItemsOf(pods, "Pod")) {
    inputs.pod_objects.emplace(UidOf(pod), std::move(pod));
  }
  for (json& budget : ItemsOf(budgets, "PodDisruptionBudget")) {
    inputs.budgets.push_back(std::move(budget));
  }
  return inputs;
}

}  // namespace deviceshare::simulate
