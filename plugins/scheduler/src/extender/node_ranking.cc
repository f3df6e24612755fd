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

int NodeRanking::ScoreAt(absl::string_view name, size_t& rank) const {
  if (name == reserved_) return 10;
  const size_t others = ends_.empty() ? 0 : ends_.size() - 1;
  const int score =
      others <= 1 ? 9 : 9 - static_cast<int>(9 * rank / (others - 1));
  ++rank;
  return std::clamp(score, 0, 9);
}

absl::string_view NodeRanking::NameAt(size_t position) const {
  const uint32_t begin = position == 0 ? 0 : ends_[position - 1];
  return absl::string_view(names_.data() + begin, ends_[position] - begin);
}

bool NodeRanking::ScoresInOrder(const NameList& names,
                                std::vector<int>& scores) const {
  if (names.size() != ends_.size()) return false;
  for (size_t i = 0; i < names.size(); ++i) {
    // A name ranked twice (a duplicate in the filter's request) takes its
    // last rank's score below.
    if (names[i] != NameAt(i) || (i > 0 && names[i] == names[i - 1])) {
      return false;
    }
  }
  size_t rank = 0;
  for (absl::string_view name : names) scores.push_back(ScoreAt(name, rank));
  return true;
}

std::vector<int> NodeRanking::Scores(const NameList& names) const {
  std::vector<int> scores;
  scores.reserve(names.size());
  // kube-scheduler asks for the nodes /filter passed, in the order it
  // answered them, which is this ranking's: no need for a map.
  if (ScoresInOrder(names, scores)) return scores;
  absl::flat_hash_map<absl::string_view, int> by_name;
  by_name.reserve(ends_.size());
  size_t rank = 0;
  for (size_t i = 0; i < ends_.size(); ++i) {
    const absl::string_view name = NameAt(i);
    by_name[name] = ScoreAt(name, rank);
  }
  for (absl::string_view name : names) {
    auto found = by_name.find(name);
    scores.push_back(found == by_name.end() ? 0 : found->second);
  }
  return scores;
}

std::vector<HostPriority> NodeRanking::Answer(const NameList& names) const {
  const std::vector<int> scores = Scores(names);
  std::vector<HostPriority> answer;
  answer.reserve(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    answer.push_back({std::string(names[i]), scores[i]});
  }
  return answer;
}

}  // namespace deviceshare::extender
