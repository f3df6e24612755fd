#include "deviceshare/simulate/reason_digest.h"

#include <vector>

namespace deviceshare::simulate {

absl::string_view ReasonCodeOf(absl::string_view reason) {
  return reason.substr(0, reason.find(' '));
}

ReasonDigest DigestReasons(const std::map<std::string, std::string>& reasons,
                           size_t max_examples) {
  ReasonDigest digest;
  digest.nodes = static_cast<int64_t>(reasons.size());
  std::vector<const std::pair<const std::string, std::string>*> rest;
  for (const auto& entry : reasons) {
    int64_t& count = digest.counts[std::string(ReasonCodeOf(entry.second))];
    if (count++ == 0 && digest.examples.size() < max_examples) {
      digest.examples.insert(entry);
    } else {
      rest.push_back(&entry);
    }
  }
  for (const auto* entry : rest) {
    if (digest.examples.size() >= max_examples) break;
    digest.examples.insert(*entry);
  }
  return digest;
}

}  // namespace deviceshare::simulate
