#include "deviceshare/scheduler/bucket_tally.h"

#include <algorithm>

namespace deviceshare {

void BucketTally::Add(ReasonCode code, const NodeState* node) {
  auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& entry) {
    return entry.first == code;
  });
  if (it != counts.end()) {
    ++it->second;
    return;
  }
  counts.emplace_back(code, 1);
  first.emplace_back(code, node);
}

bool BucketTally::AnyFits() const {
  return std::any_of(counts.begin(), counts.end(), [](const auto& entry) {
    return entry.first == ReasonCode::kFits;
  });
}

const BucketTally* BucketTallies::Find(const NodeShape& shape,
                                       const BucketKey& key,
                                       const IndexBucket& bucket) const {
  auto it = tallies_.find({shape, key});
  if (it == tallies_.end() || it->second.version != bucket.version) {
    return nullptr;
  }
  return &it->second;
}

const BucketTally& BucketTallies::Put(const NodeShape& shape,
                                      const BucketKey& key, BucketTally tally) {
  BucketTally& kept = tallies_[{shape, key}];
  kept = std::move(tally);
  return kept;
}

}  // namespace deviceshare
