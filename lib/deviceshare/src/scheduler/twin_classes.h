// File: src/scheduler/twin_classes.h (internal)
//
// TwinClasses: which nodes are twins (scheduler/bucket_twins.h: untouched,
// inventories equal but for the node's name and its GPUs' uuids), as a
// class number per node, so that the filter step of one request can
// evaluate each class once and give its other nodes the same fit, score,
// stranded capacity and mode. A node's class is kept while the node is at
// its ClusterState::NodeVersion; everything starts over for another state
// (ClusterState::id()).
//
// A twin's verdict may be shared only by what the filter does not read
// from names or uuids: a fit's code, score, stranded capacity and mode (a
// rejection's message and every allocation name them), and only for pods
// that name no GPU by uuid and have no claims (DRA devices are not part
// of the inventory).
//
// Thread safety: none; the Scheduler guards it.
#ifndef DEVICESHARE_SRC_SCHEDULER_TWIN_CLASSES_H_
#define DEVICESHARE_SRC_SCHEDULER_TWIN_CLASSES_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "deviceshare/model/node_inventory.h"
#include "deviceshare/model/node_state.h"
#include "deviceshare/model/pod_request.h"
#include "deviceshare/scheduler/cluster_state.h"
#include "verdict_memory.h"

namespace deviceshare::internal {

class TwinClasses {
 public:
  static constexpr int32_t kNoTwins = -1;
  // Classes kept at most: an untouched node of yet another kind then has
  // no class (safe: it is filtered itself).
  static constexpr size_t kMostClasses = 256;

  // Whether the pod's verdicts may be shared between twins.
  static bool Shareable(const PodRequest& request) {
    return !request.HasClaims() && request.use_uuids.empty() &&
           request.avoid_uuids.empty();
  }

  // `node`'s class, 0 .. kMostClasses - 1, or kNoTwins (touched, or one
  // class too many). `version` is state.NodeVersion(node).
  int32_t Of(const ClusterState& state, const NodeState& node,
             uint64_t version);

 private:
  struct Known {
    uint64_t version = 0;
    int32_t twin_class = kNoTwins;
  };

  uint64_t state_id_ = 0;
  absl::flat_hash_map<const NodeState*, Known> known_;
  std::vector<NodeInventory> classes_;  // TwinKeyOf, by class
};

// One request's fits by twin class: the first node of a class met is
// filtered, its twins then take that fit (as the shape memory keeps it).
// Not shareable pods (TwinClasses::Shareable) share nothing.
class TwinFits {
 public:
  TwinFits(const ClusterState& state, const PodRequest& request,
           TwinClasses& classes)
      : state_(state),
        classes_(TwinClasses::Shareable(request) ? &classes : nullptr) {}

  // The class of `node` at `version`, or TwinClasses::kNoTwins.
  int32_t ClassOf(const NodeState& node, uint64_t version) {
    if (classes_ == nullptr) return TwinClasses::kNoTwins;
    return classes_->Of(state_, node, version);
  }
  // The fit of a twin of class `twin_class` met before, or nullptr.
  const VerdictMemory::ShapeEntry* FitOf(int32_t twin_class) const {
    if (twin_class < 0 || static_cast<size_t>(twin_class) >= fits_.size()) {
      return nullptr;
    }
    const VerdictMemory::ShapeEntry& fit = fits_[twin_class];
    return fit.version != 0 ? &fit : nullptr;
  }
  // What a node of `twin_class` was found to be; kept when it fits.
  void Remember(int32_t twin_class, const VerdictMemory::ShapeEntry& entry) {
    if (twin_class < 0 || entry.code != ReasonCode::kFits) return;
    if (fits_.size() <= static_cast<size_t>(twin_class)) {
      fits_.resize(twin_class + 1);
    }
    fits_[twin_class] = entry;
  }

 private:
  const ClusterState& state_;
  TwinClasses* const classes_;
  // By class; version 0: none met yet (or it did not fit).
  std::vector<VerdictMemory::ShapeEntry> fits_;
};

}  // namespace deviceshare::internal

#endif  // DEVICESHARE_SRC_SCHEDULER_TWIN_CLASSES_H_
