#include "deviceshare/simulate/reason_digest.h"

namespace deviceshare::simulate {

ReasonDigest DigestReasons(const Decision& outcome) {
  ReasonDigest digest;
  digest.examples = outcome.reasons;
  digest.counts = outcome.reason_counts;
  for (const auto& [code, count] : outcome.reason_counts) {
    digest.nodes += count;
  }
  return digest;
}

ReasonDigest RefusedDigest(absl::string_view why) {
  ReasonDigest digest;
  digest.examples.emplace("*", std::string(why));
  digest.counts.emplace("PodRefused", 1);
  digest.nodes = 1;
  return digest;
}

}  // namespace deviceshare::simulate
