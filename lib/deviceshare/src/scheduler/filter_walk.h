// File: src/scheduler/filter_walk.h (internal)
//
// The filter step of the Scheduler's Filter() and FilterForReserve(), node
// by node, from what is remembered (verdict_memory.h) and from twins
// (twin_classes.h) where it can: what one node's step found is either a
// full verdict (the pod's remembered one, or filtered now) or a fit as the
// shape memory keeps it (code, score, stranded capacity, mode), which a
// host that holds the names itself need not turn into a NodeVerdict.
//
// Thread safety: none; the Scheduler calls these under its locks.
#ifndef DEVICESHARE_SRC_SCHEDULER_FILTER_WALK_H_
#define DEVICESHARE_SRC_SCHEDULER_FILTER_WALK_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "deviceshare/scheduler/cluster_state.h"
#include "deviceshare/scheduler/decision.h"
#include "deviceshare/scheduler/decision_path.h"
#include "twin_classes.h"
#include "verdict_memory.h"

namespace deviceshare::internal {

// A verdict as the filter step hands it out: the allocation stays behind.
NodeVerdict WithoutAllocation(const NodeVerdict& verdict);

// A fitting verdict as the shape memory keeps it: no allocation, no text.
NodeVerdict RememberedFit(const NodeState& node,
                          const VerdictMemory::ShapeEntry& entry);

// The filter step for a node at `version` whose verdict the pod does not
// remember: the shape's when it fits (a rejection needs its reason, which
// the shape memory does not keep), else a twin's fit met earlier in this
// request, into `fit` (true); else filtered now into `fresh` (false).
// Remembered for the shape either way.
bool FilterForShape(const DecisionPath& path, const PodCycle& cycle,
                    const NodeState& node, uint64_t version,
                    VerdictMemory::ShapeVerdicts& shape, TwinFits& twins,
                    VerdictMemory::ShapeEntry& fit, NodeVerdict& fresh);

// What the filter step found for one known node.
struct Found {
  const NodeVerdict* full = nullptr;  // null: `fit` holds a fit
  VerdictMemory::ShapeEntry fit;

  bool fits() const { return full == nullptr || full->fit.fits(); }
  int score() const { return full != nullptr ? full->score : fit.score; }
  int stranded_percent() const {
    return full != nullptr ? full->stranded_percent : fit.stranded_percent;
  }
};

// Whether a fit of `found` on `node` comes before `best` in BetterVerdict()
// order.
inline bool Beats(const Found& found, const NodeState& node,
                  const NodeVerdict& best) {
  if (found.stranded_percent() != best.stranded_percent) {
    return found.stranded_percent() < best.stranded_percent;
  }
  if (found.score() != best.score) return found.score() > best.score;
  return node.name() < best.node;
}

// FilterForReserve's walk over `names` (every node by name when empty), in
// order: per name `emit(name, node, found)`, with node and found null for
// a name the state does not know. A node's step is the pod's remembered
// verdict while the node is unchanged, else FilterForShape's. Afterwards
// the pod remembers only its best fitting node's verdict, with the
// allocation (the reserve step commits it), or every rejection when
// nothing fits. `Name`: std::string or absl::string_view.
template <typename Name, typename Emit>
void WalkForReserve(const DecisionPath& path, const PodCycle& cycle,
                    const ClusterState& state, absl::Span<const Name> names,
                    VerdictMemory::PodVerdicts& pod,
                    VerdictMemory::ShapeVerdicts& shape, TwinFits& twins,
                    Emit emit) {
  const NodeState* best_node = nullptr;
  VerdictMemory::PodEntry best;
  // Until one fits: each rejection, to remember them all if none does.
  std::vector<std::pair<const NodeState*, VerdictMemory::PodEntry>> rejected;
  auto visit = [&](absl::string_view name, const NodeState& node) {
    const uint64_t version = state.NodeVersion(node);
    Found found;
    NodeVerdict fresh;
    auto mine = pod.find(&node);
    if (mine != pod.end() && mine->second.version == version) {
      found.full = &mine->second.verdict;
    } else if (!FilterForShape(path, cycle, node, version, shape, twins,
                               found.fit, fresh)) {
      found.full = &fresh;
    }
    emit(name, &node, &found);
    if (!found.fits()) {
      if (best_node == nullptr) {
        rejected.emplace_back(
            &node,
            VerdictMemory::PodEntry{version, WithoutAllocation(*found.full)});
      }
      return;
    }
    if (best_node != nullptr && !Beats(found, node, best.verdict)) return;
    best_node = &node;
    best.version = version;
    if (found.full == &fresh) {
      best.verdict = std::move(fresh);
    } else if (found.full != nullptr) {
      best.verdict = *found.full;
    } else {
      best.verdict = RememberedFit(node, found.fit);
    }
  };
  if (names.empty()) {
    for (const NodeState* node : state.nodes_by_name()) {
      visit(node->name(), *node);
    }
  } else {
    for (const Name& name : names) {
      const NodeState* node = state.FindNode(name);
      if (node == nullptr) {
        emit(name, nullptr, nullptr);
      } else {
        visit(name, *node);
      }
    }
  }
  if (best_node != nullptr) {
    pod[best_node] = std::move(best);
    return;
  }
  for (auto& [node, entry] : rejected) pod[node] = std::move(entry);
}

}  // namespace deviceshare::internal

#endif  // DEVICESHARE_SRC_SCHEDULER_FILTER_WALK_H_
