#include "deviceshare/simulate/defrag_report.h"

#include "absl/strings/str_cat.h"
#include "deviceshare/simulate/text_table.h"

namespace deviceshare::simulate {
namespace {

using nlohmann::json;

// How far the plan is proven.
std::string Proof(const defrag::DefragPlan& plan) {
  if (!plan.complete) {
    return plan.exact ? "not proven fewest: the exact search ran out of budget"
                      : "not proven fewest: greedy plan (too many movable "
                        "pods for the exact search)";
  }
  if (!plan.unplaceable.empty()) {
    return "no plan of at most --max-moves moves places the rest";
  }
  if (plan.moves.empty()) return "no move needed";
  return "fewest moves, proven by the exact search";
}

}  // namespace

json DefragJson(const DefragRun& run, const std::vector<std::string>& notes) {
  const defrag::DefragPlan& plan = run.plan;
  json moves = json::array();
  for (const defrag::Move& move : plan.moves) {
    moves.push_back({{"pod", move.pod}, {"from", move.from}, {"to", move.to}});
  }
  json placements = json::array();
  for (const defrag::TargetPlacement& target : plan.placements) {
    placements.push_back({{"pod", target.pod},
                          {"node", target.node},
                          {"after_moves", target.after_moves}});
  }
  json unplaceable = json::array();
  for (const defrag::Unplaceable& target : plan.unplaceable) {
    unplaceable.push_back({{"pod", target.pod}, {"reason", target.reason}});
  }
  return {{"moves", std::move(moves)},
          {"placements", std::move(placements)},
          {"unplaceable", std::move(unplaceable)},
          {"targets", run.targets},
          {"complete", plan.complete},
          {"exact", plan.exact},
          {"movable_pods", plan.movable_pods},
          {"notes", notes}};
}

std::string DefragTable(const DefragRun& run,
                        const std::vector<std::string>& notes) {
  const defrag::DefragPlan& plan = run.plan;
  std::string out =
      absl::StrCat("defrag plan: ", plan.moves.size(),
                   plan.moves.size() == 1 ? " move makes " : " moves make ",
                   plan.placements.size(), " of ", run.targets,
                   " targets placeable (", Proof(plan), ")\n");
  if (!plan.moves.empty()) {
    TextTable moves;
    moves.AddRow({"MOVE", "POD", "FROM", "TO"});
    for (size_t i = 0; i < plan.moves.size(); ++i) {
      const defrag::Move& move = plan.moves[i];
      moves.AddRow({absl::StrCat(i + 1), move.pod, move.from, move.to});
    }
    absl::StrAppend(&out, "\n", moves.Render());
  }
  if (!plan.placements.empty()) {
    TextTable targets;
    targets.AddRow({"TARGET", "NODE", "AFTER MOVES"});
    for (const defrag::TargetPlacement& target : plan.placements) {
      targets.AddRow(
          {target.pod, target.node, absl::StrCat(target.after_moves)});
    }
    absl::StrAppend(&out, "\n", targets.Render());
  }
  if (!plan.unplaceable.empty()) {
    absl::StrAppend(&out, "\nunplaceable:\n");
    for (const defrag::Unplaceable& target : plan.unplaceable) {
      absl::StrAppend(&out, "  ", target.pod, ": ", target.reason, "\n");
    }
  }
  if (!notes.empty()) {
    absl::StrAppend(&out, "\nnotes:\n");
    for (const std::string& note : notes) {
      absl::StrAppend(&out, "  ", note, "\n");
    }
  }
  return out;
}

}  // namespace deviceshare::simulate
