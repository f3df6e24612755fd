// File: simulate/defrag_run.h
//
// One defrag plan from DefragInputs: the cluster state built as simulate
// builds it (every node registered, the DRA objects and quotas added, each
// bound pod charged from its allocation record), then
// defrag::DefragPlanner (defrag/defrag_planner.h) with the config's
// decision path, the pending pods (or `free_whole_gpus` whole-GPU pods) as
// targets and DefragPods' movable pods and budgets.
//
// A bound pod whose record cannot be charged is left out (a note says
// which), as simulate and serve leave it out. Errors: a node the state
// refuses (naming it), the planner's InvalidArgument.
//
// Thread safety: a pure function.
#ifndef DEVICESHARE_SIMULATE_DEFRAG_RUN_H_
#define DEVICESHARE_SIMULATE_DEFRAG_RUN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/defrag/defrag_planner.h"
#include "deviceshare/simulate/defrag_inputs.h"
#include "deviceshare/simulate/defrag_pods.h"

namespace deviceshare::simulate {

struct DefragRun {
  defrag::DefragPlan plan;
  size_t targets = 0;
  std::vector<std::string> notes;
};

absl::StatusOr<DefragRun> RunDefragPlan(const DefragInputs& inputs,
                                        DefragPods pods,
                                        int32_t free_whole_gpus,
                                        const defrag::DefragBudget& budget);

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_DEFRAG_RUN_H_
