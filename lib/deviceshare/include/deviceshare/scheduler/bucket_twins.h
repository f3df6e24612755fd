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
// cannot be the best, whatever the pod: Visit() leaves it out. Nor can
// one whose twin lies in an earlier bucket of its class (a class's
// buckets split it by name range, BucketKey): Visit() names each node's
// twin class, for the search to skip the classes it has met (TwinsMet).
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

#include <bitset>
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
  static constexpr int32_t kNoTwins = -1;
  // Classes kept at most; an untouched node of another kind then has no
  // twins (safe: it is visited).
  static constexpr size_t kMostClasses = 256;

  // The nodes of a bucket a search looks at.
  struct Visits {
    // Positions in bucket.nodes (ascending) of every node that is not the
    // twin of an earlier node of the bucket.
    std::vector<uint32_t> positions;
    // The twin class of each (0 .. kMostClasses - 1), or kNoTwins. Two
    // nodes are twins when their classes are equal and of one epoch.
    std::vector<int32_t> twin_classes;
    // Class numbers hold until the object starts over for another state.
    uint64_t epoch = 0;
  };

  // `bucket` must be one of `state`'s buckets.
  std::shared_ptr<const Visits> Visit(const ClusterState& state,
                                      const IndexBucket& bucket);

 private:
  struct Known {
    uint64_t version = 0;
    int32_t twin_class = kNoTwins;
  };
  struct Listed {
    uint64_t version = 0;
    size_t nodes = 0;  // bucket.nodes.size() when listed
    std::shared_ptr<const Visits> visit;
  };

  int32_t ClassOf(const ClusterState& state, const NodeState& node)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StartOver(const ClusterState& state) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  absl::Mutex mu_;
  uint64_t state_id_ ABSL_GUARDED_BY(mu_) = 0;  // ClusterState::id()
  uint64_t epoch_ ABSL_GUARDED_BY(mu_) = 0;     // StartOver()s so far
  absl::flat_hash_map<const NodeState*, Known> known_ ABSL_GUARDED_BY(mu_);
  std::vector<NodeInventory> classes_ ABSL_GUARDED_BY(mu_);  // TwinKeyOf
  absl::flat_hash_map<const IndexBucket*, Listed> lists_ ABSL_GUARDED_BY(mu_);
};

// The twin classes one search has met, in the buckets it visited, so that
// a twin in a later bucket of its class (a larger name) is skipped: its
// verdict and bounds are those of the one met, which won or lost already.
class TwinsMet {
 public:
  // Whether the node at `i` of `visits` is a twin of one met; if not, it
  // is met now.
  bool MetBefore(const BucketTwins::Visits& visits, size_t i) {
    if (visits.epoch != epoch_) {
      met_.reset();
      epoch_ = visits.epoch;
    }
    const int32_t twin_class = visits.twin_classes[i];
    if (twin_class == BucketTwins::kNoTwins) return false;
    if (met_.test(twin_class)) return true;
    met_.set(twin_class);
    return false;
  }

 private:
  uint64_t epoch_ = 0;
  std::bitset<BucketTwins::kMostClasses> met_;
};

}  // namespace deviceshare

#endif  // DEVICESHARE_SCHEDULER_BUCKET_TWINS_H_
