// File: simulate/defrag_inputs.h
//
// What `deviceshare-scheduler defrag` plans on: the config, the nodes, the
// pending pods (the targets), the bound pods with their allocation records
// and priorities, every pod's metadata (labels, annotations, owners: what
// decides whether and how it may move) and the PodDisruptionBudgets.
//
// From files, as simulate reads them (simulate.h LoadConfig and
// LoadWorkload: --cluster, --pods with PriorityClass objects, --config,
// the policy flags), plus --budgets: PodDisruptionBudget objects (policy/v1;
// several documents and/or kind: List). Or read-only from a live cluster:
// one list each of Nodes, Pods, PodDisruptionBudgets and PriorityClasses
// (a cluster that serves no PriorityClasses has none), read by the same
// loaders.
//
// Errors: the loaders' (naming file, document and field); for a live
// cluster the API error of the list that failed.
//
// Thread safety: pure functions but for the files and the client they
// read.
#ifndef DEVICESHARE_SIMULATE_DEFRAG_INPUTS_H_
#define DEVICESHARE_SIMULATE_DEFRAG_INPUTS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/config/scheduler_config.h"
#include "deviceshare/kube/api_client.h"
#include "deviceshare/simulate/workload.h"
#include "nlohmann/json.hpp"

namespace deviceshare::simulate {

struct DefragSource {
  std::string cluster_path;
  std::string pods_path;
  std::string budgets_path;  // optional
  std::string config_path;
  std::optional<std::string> node_policy;
  std::optional<std::string> gpu_policy;
};

struct DefragInputs {
  Config config;
  Workload workload;
  // Every pod object by uid (metadata.uid, else "namespace/name", as the
  // pod loader names pods).
  std::map<std::string, nlohmann::json> pod_objects;
  std::vector<nlohmann::json> budgets;  // PodDisruptionBudget objects
  std::vector<std::string> notes;
};

absl::StatusOr<DefragInputs> LoadDefragFiles(const DefragSource& source);

// `source` gives the config and policies; its paths must be empty.
absl::StatusOr<DefragInputs> LoadDefragLive(kube::ApiClient& client,
                                            const DefragSource& source);

// The Pod objects of a pods file's text (or a PodList), by uid; objects of
// other kinds are skipped (the pod loader checks them).
absl::StatusOr<std::map<std::string, nlohmann::json>> PodObjectsByUid(
    const std::string& text);

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_DEFRAG_INPUTS_H_
