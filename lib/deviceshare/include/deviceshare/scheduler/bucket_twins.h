// File: scheduler/bucket_twins.h
//
// BucketTwins: which nodes of an index bucket (cluster_state.h) a search
// must look at when many nodes are in one state (a cluster of empty
// nodes). Two nodes are twins when both are untouched -- no pod on any
// GPU, no host CPU or memory used -- and their inventories are equal but
// for the node's name and its GPUs' uuids (pair scores compared by the
// peer's position). Filter gives twins the same fit, stranded capacity and
// score: it reads the name and uuids only to write them into the
// allocation and its messages, or for pods that select GPUs by uuid, which
// must not skip twins. Twins share a bucket (same shape and utilisation),
// where nodes ascend by name, and BetterVerdict breaks equal verdicts to
// the smaller name, so a node whose twin comes earlier in its bucket
// cannot be the best, whatever the pod: Visit() leaves it out.
//
// What is known is kept between calls: a node's class while it is at its
// NodeVersion, a bucket's list while the bucket is at its version. Both
// hold within one ClusterState; the object holds one state's at a time and
// starts over when asked of another (told apart by ClusterState::id(), so
// a state made at the address of one destroyed is another state too).
//
// Thread safety: thread-safe (one mutex); a returned list is immutable.
#ifndef DEVICESHARE_SCHEDULER_BUCKET_TWINS_H_
#define DEVICESHARE_SCHEDULER_BUCKET_TWINS_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/model/node_inventory.h"
#include "deviceshare/model/node_state.h"
#include "deviceshare/scheduler/cluster_state.h"

namespace deviceshare {

// Whether `node` holds no pod and uses no host CPU or memory.
bool Untouched(const NodeState& node);

// `node`'s inventory without its name and GPU uuids (a pair score names
// its peer by position, "#<position>", or "?<uuid>" for a uuid the node
// lacks): equal for twins.
NodeInventory TwinKeyOf(const NodeState& node);

// The position of `node`'s TwinKeyOf in `classes`, appended when new while
// `classes` holds fewer than `most`; -1 for a node that is not untouched
// or whose class did not fit.
int32_t TwinClassAmong(const NodeState& node,
                       std::vector<NodeInventory>& classes, size_t most);

class BucketTwins {
 public:
  using Positions = std::vector<uint32_t>;

  // Positions in bucket.nodes (ascending) of every node that is not the
  // twin of an earlier node of the bucket. `bucket` must be one of
  // `state`'s buckets.
  std::shared_ptr<const Positions> Visit(const ClusterState& state,
                                         const IndexBucket& bucket);

 private:
  static constexpr int32_t kNoTwins = -1;
  // Classes kept at most; an untouched node of another kind then has no
  // twins (safe: it is visited).
  static constexpr size_t kMostClasses = 256;

  struct Known {
    uint64_t version = 0;
    int32_t twin_class = kNoTwins;
  };
  struct Listed {
    uint64_t version = 0;
    size_t nodes = 0;  // bucket.nodes.size() when listed
    std::shared_ptr<const Positions> visit;
  };

  int32_t ClassOf(const ClusterState& state, const NodeState& node)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StartOver(const ClusterState& state) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  uint64_t state_id_ ABSL_GUARDED_BY(mu_) = 0;  // ClusterState::id()
  absl::flat_hash_map<const NodeState*, Known> known_ ABSL_GUARDED_BY(mu_);
  std::vector<NodeInventory> classes_ ABSL_GUARDED_BY(mu_);  // TwinKeyOf
  absl::flat_hash_map<const IndexBucket*, Listed> lists_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deviceshare

#endif  // DEVICESHARE_SCHEDULER_BUCKET_TWINS_H_
