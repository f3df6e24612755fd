// File: scheduler/bucket_tally.h
//
// BucketTally: what Filter() said of every node of one index bucket
// (scheduler/cluster_state.h, IndexBucket) for one pod shape: how many
// nodes gave each reason code, and the first node by name of each code. It
// holds while the bucket is at the version it was taken at, so a pod of a
// remembered shape that fits nowhere is explained from the tallies of the
// buckets that did not change, filtering only the nodes of those that did;
// and Search skips a bucket whose tally has no node that fits without
// touching its nodes. A failed pod then costs O(buckets), not
// O(nodes x GPUs), while the cluster stands still.
//
// BucketTallies: the tallies of one pod shape (the Scheduler keeps them for
// shapes that failed with reasons counted; scheduler.cc). A bucket that
// changed is tallied again whole: a per-node code memo was measured and
// dropped (on the synthetic 5,000-node run 0.16 % of its lookups hit, and
// its upkeep cost more than it saved).
//
// Thread safety: none; the owner guards them.
#ifndef DEVICESHARE_SCHEDULER_BUCKET_TALLY_H_
#define DEVICESHARE_SCHEDULER_BUCKET_TALLY_H_

#include <cstdint>
#include <map>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "deviceshare/model/node_state.h"
#include "deviceshare/model/reason_code.h"
#include "deviceshare/scheduler/cluster_state.h"

namespace deviceshare {

struct BucketTally {
  uint64_t version = 0;  // IndexBucket::version it was taken at
  absl::InlinedVector<std::pair<ReasonCode, int64_t>, 4> counts;
  // The first node by name of each code, in the order codes were met.
  absl::InlinedVector<std::pair<ReasonCode, const NodeState*>, 4> first;

  // One more node, met in name order.
  void Add(ReasonCode code, const NodeState* node);
  bool AnyFits() const;
};

class BucketTallies {
 public:
  // The tally of the bucket `key` of `shape`, while `bucket` is at the
  // version it was taken at; nullptr otherwise.
  const BucketTally* Find(const NodeShape& shape, const BucketKey& key,
                          const IndexBucket& bucket) const;
  // Keeps `tally` for the bucket, replacing an older one.
  const BucketTally& Put(const NodeShape& shape, const BucketKey& key,
                         BucketTally tally);
  size_t size() const { return tallies_.size(); }

 private:
  std::map<std::pair<NodeShape, BucketKey>, BucketTally> tallies_;
};

}  // namespace deviceshare

#endif  // DEVICESHARE_SCHEDULER_BUCKET_TALLY_H_
