// File: input/pod_loader.h
//
// Reads pods (simulate's `--pods`): a multi-document YAML (or JSON) of
// ordinary Pod manifests (either dialect; k8s/pod_parser.h), also inside
// `kind: List` / `kind: PodList` objects, in file order. A pod without
// metadata.uid gets "namespace/name" as uid. Two pods with the same
// namespace/name (or uid) are an error, as is any other kind of object.
// Errors name the file, the document and the field.
//
// A pod that already carries an allocation record (HAMi's
// hami.io/vgpu-devices-allocated or Volcano's volcano.sh/vgpu-ids-new, or
// their to-allocate twins) is running, not to be scheduled: it is listed
// apart, with its annotations and node (spec.nodeName, else the record's
// node annotation), for the simulation to charge before it schedules the
// rest.
//
// ResourceQuota objects in the same file give namespaces their GPU quota
// (k8s/resource_quota_parser.h: limits.<gpu memory> and limits.<gpu
// cores>); one that limits no GPU resource is skipped.
//
// LoadPodObjectsYaml also reads PriorityClass objects (input/
// pod_priorities.h; a bad one is an error) and, with `resolve_priorities`,
// every pod's priority: spec.priority, else spec.priorityClassName (a name
// no class has is an error naming it), else the global default class,
// else 0; it then also keeps the PodDisruptionBudget objects (policy/v1)
// as written and the pods' metadata.labels, for the preemptor to read.
// Without it pods' priority fields are not looked at (a file that names
// classes it does not hold reads as before) and budgets are skipped.
//
// The file is read a document at a time, and a List's items one at a time
// (codec/yaml_stream.h): memory grows with the pods kept, not with the
// file's parse tree. A List is read as its items come, so an error in an
// item is found before one in the List's own kind.
//
// With `pending_limit`, the pending pods (neither running, bound nor
// finished) past the first `pending_limit` are counted but neither read
// nor checked (a bad request, a duplicate name there is not seen); every
// other object of the file is still read, so running pods, quotas,
// classes and budgets after them still count (simulate's --limit-pods).
//
// Thread safety: a pure function.
#ifndef DEVICESHARE_INPUT_POD_LOADER_H_
#define DEVICESHARE_INPUT_POD_LOADER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/config/device_config.h"
#include "deviceshare/dra/claim_spec.h"
#include "deviceshare/input/pod_priorities.h"
#include "deviceshare/model/gpu_quota.h"
#include "deviceshare/model/pod_request.h"
#include "nlohmann/json.hpp"

namespace deviceshare::input {

// A pod already placed by a scheduler (either project's): what
// Scheduler::AddBoundPod reads.
struct RecordedPod {
  PodRequest request;
  std::map<std::string, std::string> annotations;
  std::string node;
};

absl::StatusOr<std::vector<PodRequest>> LoadPodsYaml(
    absl::string_view text, absl::string_view file, const DeviceConfig& config);

struct LoadedPods {
  std::vector<PodRequest> pods;      // in file order
  std::vector<RecordedPod> running;  // in file order
  std::vector<dra::ResourceClaim> claims;
  std::vector<dra::ResourceClaimTemplate> templates;
  std::vector<GpuQuota> quotas;  // in file order
  // Pods whose status.phase is Succeeded or Failed: they hold no GPU and
  // need no node (HAMi's IsPodInTerminatedState), so they are only counted.
  int finished = 0;
  // Pods bound to a node (spec.nodeName) without an allocation record: they
  // were placed without a GPU booking, so they hold none (as upstream counts
  // them) and are not placed again; only counted.
  int bound_without_record = 0;
  // With resolve_priorities: pending and running pods' priorities, by uid
  // (those at 0 that may preempt are left out). Always: how many
  // PriorityClass objects were read.
  PodPriorityMap priorities;
  int priority_classes = 0;
  // With resolve_priorities: PodDisruptionBudget objects in file order,
  // and the non-empty metadata.labels of pending and running pods by uid.
  std::vector<nlohmann::json> disruption_budgets;
  std::map<std::string, nlohmann::json> pod_labels;
  // Pending pods past `pending_limit`, counted only; and whether `pods`
  // holds `pending_limit` pods.
  int64_t pending_past_limit = 0;
  bool pending_limit_reached = false;
};

absl::StatusOr<LoadedPods> LoadPodObjectsYaml(absl::string_view text,
                                              absl::string_view file,
                                              const DeviceConfig& config,
                                              bool resolve_priorities = false,
                                              size_t pending_limit = SIZE_MAX);

}  // namespace deviceshare::input

#endif  // DEVICESHARE_INPUT_POD_LOADER_H_
