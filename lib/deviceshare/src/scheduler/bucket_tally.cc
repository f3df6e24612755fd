#include "deviceshare/scheduler/bucket_tally.h"

#include <algorithm>
#include <utility>

namespace deviceshare {

void BucketTally::Add(ReasonCode code, const IndexedNode& node) {
  min_host.cpu_milli = std::min(min_host.cpu_milli, node.host.cpu_milli);
  min_host.memory_mib = std::min(min_host.memory_mib, node.host.memory_mib);
  for (size_t i = 0; i < codes.size(); ++i) {
    if (codes[i].code == code) {
      ++codes[i].count;
      code_at.push_back(static_cast<uint16_t>(i));
      return;
    }
  }
  // A node's GPUs give one of a few dozen codes: far fewer than 2^16.
  code_at.push_back(static_cast<uint16_t>(codes.size()));
  codes.push_back(CodeCount{code, 1, node.node});
}

bool BucketTally::AnyFits() const {
  return std::any_of(codes.begin(), codes.end(), [](const CodeCount& entry) {
    return entry.code == ReasonCode::kFits;
  });
}

const BucketTally* BucketTallies::Find(const IndexBucket& bucket) const {
  auto it = by_version_.find(bucket.version);
  return it != by_version_.end() ? &it->second : nullptr;
}

std::optional<BucketTally> BucketTallies::Take(const IndexBucket& bucket) {
  auto it = by_version_.find(bucket.version);
  if (it == by_version_.end()) return std::nullopt;
  std::optional<BucketTally> taken = std::move(it->second);
  by_version_.erase(it);
  return taken;
}

}  // namespace deviceshare
