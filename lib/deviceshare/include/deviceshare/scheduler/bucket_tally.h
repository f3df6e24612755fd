// File: scheduler/bucket_tally.h
//
// BucketTally: what the GPU steps of Filter() (DecisionPath: the backends,
// past the node's CPU and memory) said of every node of one index bucket
// (scheduler/cluster_state.h, IndexBucket) for one pod GPU shape: how many
// nodes gave each code, the first node by name of each, and each node's
// code. It holds while the bucket is at the version it was taken at.
//
// The node's CPU and memory are left out on purpose: pods that ask the same
// of the GPUs but different CPU or memory (most shapes differ only there)
// share one tally. A failed pod's reasons are then counted bucket by
// bucket: from the tally's totals where every node has the CPU and memory
// the pod asks (min_host), node by node from the kept codes and the host
// room beside each node otherwise. A bucket that changed is tallied again,
// and only its nodes whose version changed are filtered (a node's code
// holds while it is at its version: versions are never reused). Search
// skips a bucket whose tally has no node whose GPUs fit, without touching
// its nodes. A failed pod then costs O(buckets), not O(nodes x GPUs),
// while the cluster stands still.
//
// BucketTallies: the tallies of one GPU shape, one per bucket (by its
// address: a bucket made again where one was comes with a new version).
// The Scheduler keeps them per shape (scheduler.cc).
//
// Thread safety: none; the owner guards them.
#ifndef DEVICESHARE_SCHEDULER_BUCKET_TALLY_H_
#define DEVICESHARE_SCHEDULER_BUCKET_TALLY_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "deviceshare/model/node_state.h"
#include "deviceshare/model/reason_code.h"
#include "deviceshare/scheduler/cluster_state.h"

namespace deviceshare {

// How many nodes gave `code`, and the first of them by name.
struct CodeCount {
  ReasonCode code;
  int64_t count = 0;
  const NodeState* first = nullptr;
};

struct BucketTally {
  uint64_t version = 0;  // IndexBucket::version it was taken at
  // The least CPU and memory room of its nodes, each figure on its own.
  HostRoom min_host{std::numeric_limits<int64_t>::max(),
                    std::numeric_limits<int64_t>::max()};
  // In the order the codes were met (nodes by name).
  absl::InlinedVector<CodeCount, 4> codes;
  // Per node of the bucket, in its order: the position of its code in
  // `codes`, and the node's version (IndexedNode::version).
  std::vector<uint16_t> code_at;
  std::vector<uint64_t> node_versions;

  // Empty, version 0; the vectors keep their capacity.
  void Clear();
  // One more node (the next of the bucket, by name) and its GPUs' code.
  void Add(ReasonCode code, const IndexedNode& node);
  // The code of the node at `version` if it is the node at one of the
  // positions `*next` .. `*next` + 2 (a bucket changed by a node or two
  // keeps the others in order), moving `*next` past it; nullopt otherwise.
  std::optional<ReasonCode> CodeAt(uint64_t version, size_t* next) const;
  // Whether the GPUs of some node fit.
  bool AnyFits() const;
};

class BucketTallies {
 public:
  // The tally of `bucket` at its current version; nullptr when none.
  const BucketTally* Find(const IndexBucket& bucket) const;
  // The tally kept for `bucket`, of any version (version 0: none yet), to
  // be brought up to date in place.
  BucketTally& For(const IndexBucket& bucket) { return by_bucket_[&bucket]; }
  // Drops every tally when more are kept than twice `live_buckets` (the
  // buckets there are now) and a few: tallies of buckets gone.
  void Trim(size_t live_buckets);
  size_t size() const { return by_bucket_.size(); }

 private:
  absl::flat_hash_map<const IndexBucket*, BucketTally> by_bucket_;
};

}  // namespace deviceshare

#endif  // DEVICESHARE_SCHEDULER_BUCKET_TALLY_H_
