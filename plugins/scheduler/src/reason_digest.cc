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

}  // namespace deviceshare::simulate
