#include "filter_walk.h"

namespace deviceshare::internal {

NodeVerdict WithoutAllocation(const NodeVerdict& verdict) {
  NodeVerdict out;
  out.node = verdict.node;
  out.fit.code = verdict.fit.code;
  out.fit.message = verdict.fit.message;
  out.fit.gpu_verdicts = verdict.fit.gpu_verdicts;
  out.score = verdict.score;
  out.mode = verdict.mode;
  out.stranded_percent = verdict.stranded_percent;
  out.mode_choice = verdict.mode_choice;
  return out;
}

NodeVerdict RememberedFit(const NodeState& node,
                          const VerdictMemory::ShapeEntry& entry) {
  NodeVerdict verdict;
  verdict.node = node.name();
  verdict.score = entry.score;
  verdict.stranded_percent = entry.stranded_percent;
  verdict.mode = entry.mode;
  return verdict;
}

bool FilterForShape(const DecisionPath& path, const PodCycle& cycle,
                    const NodeState& node, uint64_t version,
                    VerdictMemory::ShapeVerdicts& shape, TwinFits& twins,
                    VerdictMemory::ShapeEntry& fit, NodeVerdict& fresh) {
  VerdictMemory::ShapeEntry& shared = shape[&node];
  if (shared.version == version && shared.code == ReasonCode::kFits) {
    fit = shared;
    return true;
  }
  const int32_t twin_class = twins.ClassOf(node, version);
  if (const VerdictMemory::ShapeEntry* twin = twins.FitOf(twin_class)) {
    shared = *twin;
    shared.version = version;
    fit = shared;
    return true;
  }
  fresh = path.Filter(cycle, node, /*explain=*/true);
  shared = VerdictMemory::ShapeEntry{version, fresh.fit.code, fresh.score,
                                     fresh.stranded_percent, fresh.mode};
  twins.Remember(twin_class, shared);
  return false;
}

}  // namespace deviceshare::internal
