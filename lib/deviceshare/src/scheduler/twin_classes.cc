#include "twin_classes.h"

#include <algorithm>
#include <utility>

#include "deviceshare/scheduler/bucket_twins.h"

namespace deviceshare::internal {
namespace {

// Entries kept for nodes that are gone are dropped once the map outgrows
// the state by this factor.
constexpr size_t kSlack = 4;

}  // namespace

int32_t TwinClasses::Of(const ClusterState& state, const NodeState& node,
                        uint64_t version) {
  if (state_id_ != state.id()) {
    state_id_ = state.id();
    known_.clear();
    classes_.clear();
  }
  if (known_.size() > kSlack * state.nodes_by_name().size() + 1024) {
    known_.clear();
  }
  Known& known = known_[&node];
  if (known.version == version && version != 0) return known.twin_class;
  known.version = version;
  known.twin_class = TwinClassAmong(node, classes_, kMostClasses);
  return known.twin_class;
}

}  // namespace deviceshare::internal
