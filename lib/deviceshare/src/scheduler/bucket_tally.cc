#include "deviceshare/scheduler/bucket_tally.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace deviceshare {

void BucketTally::Clear() {
  version = 0;
  min_host = HostRoom{std::numeric_limits<int64_t>::max(),
                      std::numeric_limits<int64_t>::max()};
  codes.clear();
  code_at.clear();
  node_versions.clear();
}

void BucketTally::Add(ReasonCode code, const IndexedNode& node) {
  min_host.cpu_milli = std::min(min_host.cpu_milli, node.host.cpu_milli);
  min_host.memory_mib = std::min(min_host.memory_mib, node.host.memory_mib);
  node_versions.push_back(node.version);
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

std::optional<ReasonCode> BucketTally::CodeAt(uint64_t version,
                                              size_t* next) const {
  const size_t end = std::min(*next + 3, node_versions.size());
  for (size_t at = *next; at < end; ++at) {
    if (node_versions[at] == version) {
      *next = at + 1;
      return codes[code_at[at]].code;
    }
  }
  return std::nullopt;
}

bool BucketTally::AnyFits() const {
  return std::any_of(codes.begin(), codes.end(), [](const CodeCount& entry) {
    return entry.code == ReasonCode::kFits;
  });
}

const BucketTally* BucketTallies::Find(const IndexBucket& bucket) const {
  auto it = by_bucket_.find(&bucket);
  if (it == by_bucket_.end() || it->second.version != bucket.version) {
    return nullptr;
  }
  return &it->second;
}

void BucketTallies::Trim(size_t live_buckets) {
  if (by_bucket_.size() > 2 * live_buckets + 64) by_bucket_.clear();
}

}  // namespace deviceshare
