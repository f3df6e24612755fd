#include "deviceshare/simulate/defrag_command.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "deviceshare/json_text.h"
#include "deviceshare/kube/api_client.h"
#include "deviceshare/kube/eviction.h"
#include "deviceshare/kube/kube_config.h"
#include "deviceshare/simulate/defrag_pods.h"
#include "deviceshare/simulate/defrag_report.h"
#include "deviceshare/simulate/defrag_run.h"

namespace deviceshare::simulate {

const char kDefragHelp[] =
    R"(defrag:
Plans the fewest moves that make the pending pods placeable: a move evicts
a bound pod and places it again on another node where the same policy puts
it (its best node, its own left out), as its controller and the scheduler
would. Moves are listed in the order they must happen (a move whose
destination needs room an earlier move frees comes after it); each target
is placed after the moves before it. Small clusters (at most 24 movable
pods) get a proven fewest-moves plan (iterative deepening over move
sequences); larger ones a greedy plan (per target, the node whose fewest
pods to move, lowest priority first, can all go elsewhere). Priority only
breaks ties: lower-priority pods move first.

A bound pod never moves when it carries deviceshare.io/movable: "false",
has no controller (metadata.ownerReferences controller: true) or a
DaemonSet one, or more than one PodDisruptionBudget selects it. A budget
never loses more pods than its status.disruptionsAllowed.

Inputs (one kind):
  --cluster FILE --pods FILE   as simulate reads them (bound pods carry
                        allocation records; pending pods are the targets;
                        PriorityClass objects give priorities)
  --budgets FILE        PodDisruptionBudget objects (policy/v1) for the
                        file inputs (optional; those of the --pods file
                        are read too). A budget without
                        status.disruptionsAllowed allows what minAvailable
                        or maxUnavailable leaves of the pods it selects
  --kubeconfig FILE     a live cluster, read-only: one list each of Nodes,
                        Pods, PodDisruptionBudgets and PriorityClasses
Options:
  --free-whole-gpus N   targets: N whole GPUs that nothing shares, instead
                        of the pending pods
  --max-moves N         the longest plan (default 8)
  --config FILE, --node-policy P, --gpu-policy P   as for simulate
  --output F            table (default) | json: {"moves": [{"pod", "from",
                        "to"}], "placements": [{"pod", "node",
                        "after_moves"}], "unplaceable": [{"pod",
                        "reason"}], "targets", "complete", "exact",
                        "movable_pods", "notes"}
  --apply               with --kubeconfig: evict the plan's pods in order
                        through the Eviction API (POST
                        pods/{name}/eviction; the API server honours
                        PodDisruptionBudgets); their controllers recreate
                        them and the scheduler places them. Stops at the
                        first refusal (HTTP 429 from a budget, or any
                        error) and says which move and why.

Exit status of defrag: 0 plan printed (unplaceable targets are results);
2 invalid flags or input; 1 cannot read the cluster, or internal error;
3 --apply stopped at a refused eviction.

)";

namespace {

constexpr char kCommand[] = "deviceshare-scheduler defrag: ";

int Failed(std::ostream& err, const absl::Status& status) {
  const bool input = status.code() == absl::StatusCode::kInvalidArgument ||
                     status.code() == absl::StatusCode::kNotFound ||
                     status.code() == absl::StatusCode::kResourceExhausted;
  err << kCommand << status.message() << "\n";
  return input ? 2 : 1;
}

// The notes of the run: why pods may not move, then the planner's.
std::vector<std::string> Notes(const DefragInputs& inputs,
                               const DefragPods& pods, const DefragRun& run) {
  std::vector<std::string> notes = inputs.notes;
  for (const std::string& note : inputs.workload.notes) notes.push_back(note);
  for (const auto& [why, count] : pods.unmovable) {
    notes.push_back(absl::StrCat(count, count == 1 ? " pod" : " pods",
                                 " may not move: ", why));
  }
  for (const std::string& note : run.notes) notes.push_back(note);
  return notes;
}

// Evicts each move's pod in order; the exit status.
int Apply(kube::ApiClient& client, const defrag::DefragPlan& plan,
          std::ostream& out, std::ostream& err) {
  const size_t total = plan.moves.size();
  for (size_t i = 0; i < total; ++i) {
    const defrag::Move& move = plan.moves[i];
    std::vector<std::string> key = absl::StrSplit(move.pod, '/');
    absl::Status evicted =
        key.size() == 2 ? kube::EvictPod(client, key[0], key[1])
                        : absl::InvalidArgumentError("pod key is not ns/name");
    if (!evicted.ok()) {
      err << kCommand << "move " << i + 1 << " of " << total << " (" << move.pod
          << " from " << move.from << " to " << move.to
          << ") was refused: " << evicted.message() << "; stopped after " << i
          << (i == 1 ? " eviction" : " evictions") << "\n";
      return 3;
    }
    out << "evicted " << move.pod << " (move " << i + 1 << " of " << total
        << ", from " << move.from << "; planned on " << move.to << ")\n";
  }
  return 0;
}

}  // namespace

int RunDefrag(const DefragOptions& options, std::ostream& out,
              std::ostream& err) {
  std::unique_ptr<kube::ApiClient> client;
  absl::StatusOr<DefragInputs> inputs;
  if (options.kubeconfig.empty()) {
    inputs = LoadDefragFiles(options.source);
  } else {
    absl::StatusOr<kube::KubeConfig> config =
        kube::KubeConfigFromFlag(options.kubeconfig);
    if (!config.ok()) return Failed(err, config.status());
    absl::StatusOr<std::unique_ptr<kube::ApiClient>> made =
        kube::ApiClient::Create(*config);
    if (!made.ok()) return Failed(err, made.status());
    client = *std::move(made);
    inputs = LoadDefragLive(*client, options.source);
    if (!inputs.ok() &&
        inputs.status().code() != absl::StatusCode::kInvalidArgument) {
      err << kCommand
          << "cannot read the cluster: " << inputs.status().message() << "\n";
      return 1;
    }
  }
  if (!inputs.ok()) return Failed(err, inputs.status());
  absl::StatusOr<DefragPods> pods = DefragPodsOf(*inputs);
  if (!pods.ok()) return Failed(err, pods.status());
  defrag::DefragBudget budget;
  budget.max_moves = options.max_moves;
  absl::StatusOr<DefragRun> run =
      RunDefragPlan(*inputs, *pods, options.free_whole_gpus, budget);
  if (!run.ok()) return Failed(err, run.status());
  const std::vector<std::string> notes = Notes(*inputs, *pods, *run);
  if (options.json) {
    out << JsonText(DefragJson(*run, notes), 2) << "\n";
  } else {
    out << DefragTable(*run, notes);
  }
  out.flush();
  return options.apply ? Apply(*client, run->plan, out, err) : 0;
}

}  // namespace deviceshare::simulate
