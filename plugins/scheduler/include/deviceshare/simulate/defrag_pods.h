// File: simulate/defrag_pods.h
//
// Which bound pods `defrag` may move, and under which disruption budget:
// the Kubernetes objects of DefragInputs turned into the planner's
// BoundPods (defrag/defrag_planner.h). A bound pod (one with an
// allocation record) never moves when
//   - it carries deviceshare.io/movable: "false" (the opt-out);
//   - it has no controller (no metadata.ownerReferences entry with
//     controller: true): evicted, nothing would create it again;
//   - its controller is a DaemonSet: it would come back on the same node;
//   - more than one PodDisruptionBudget selects it: the Eviction API
//     refuses such a pod.
// Otherwise its priority is the pods file's (or the API's), and the one
// budget that selects it (same namespace, spec.selector) is its
// disruption group "namespace/name", with status.disruptionsAllowed
// disruptions left. A budget without that status (a file's, written by
// hand) gets what the disruption controller would compute with every
// bound pod it selects healthy and expected: those pods less
// spec.minAvailable, or spec.maxUnavailable (an integer, or a percent of
// those pods rounded up); 0 with neither.
//
// Errors: InvalidArgument naming the budget for a selector that does not
// read (kube/label_selector.h) or a minAvailable / maxUnavailable that is
// neither an integer nor a percent.
//
// Thread safety: a pure function.
#ifndef DEVICESHARE_SIMULATE_DEFRAG_PODS_H_
#define DEVICESHARE_SIMULATE_DEFRAG_PODS_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/defrag/defrag_planner.h"
#include "deviceshare/simulate/defrag_inputs.h"

namespace deviceshare::simulate {

inline constexpr char kMovableAnnotation[] = "deviceshare.io/movable";

struct DefragPods {
  std::vector<defrag::BoundPod> pods;  // every bound pod, in file order
  std::map<std::string, int32_t, std::less<>> disruptions_left;
  // How many bound pods may not move, by why.
  std::map<std::string, int> unmovable;
};

absl::StatusOr<DefragPods> DefragPodsOf(const DefragInputs& inputs);

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_DEFRAG_PODS_H_
