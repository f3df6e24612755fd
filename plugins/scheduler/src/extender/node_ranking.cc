#include "deviceshare/extender/node_ranking.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"

namespace deviceshare::extender {

NodeRanking::NodeRanking(const std::vector<absl::string_view>& ranked,
                         absl::string_view reserved)
    : reserved_(reserved) {
  size_t bytes = 0;
  for (absl::string_view name : ranked) bytes += name.size();
  names_.reserve(bytes);
  ends_.reserve(ranked.size());
  for (absl::string_view name : ranked) {
    names_.append(name.data(), name.size());
    ends_.push_back(static_cast<uint32_t>(names_.size()));
  }
}

void NodeRanking::clear() {
  names_.clear();
  names_.shrink_to_fit();
  ends_.clear();
  ends_.shrink_to_fit();
  reserved_.clear();
}

std::vector<HostPriority> NodeRanking::Answer(
    const std::vector<std::string>& names) const {
  absl::flat_hash_map<absl::string_view, int> scores;
  scores.reserve(ends_.size());
  const size_t others = ends_.empty() ? 0 : ends_.size() - 1;
  size_t rank = 0;
  uint32_t begin = 0;
  for (uint32_t end : ends_) {
    const absl::string_view name(names_.data() + begin, end - begin);
    begin = end;
    if (name == reserved_) {
      scores[name] = 10;
      continue;
    }
    const int score =
        others <= 1 ? 9 : 9 - static_cast<int>(9 * rank / (others - 1));
    scores[name] = std::clamp(score, 0, 9);
    ++rank;
  }
  std::vector<HostPriority> answer;
  answer.reserve(names.size());
  for (const std::string& name : names) {
    auto found = scores.find(name);
    answer.push_back({name, found == scores.end() ? 0 : found->second});
  }
  return answer;
}

}  // namespace deviceshare::extender
