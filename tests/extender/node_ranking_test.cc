// NodeRanking::Answer: the reserved node 10, the others 9 down to 0 by
// rank, 0 for a node not ranked; asked in the ranking's own order (what
// kube-scheduler does after our /filter) or in any other, the same scores.
#include "deviceshare/extender/node_ranking.h"

#include <algorithm>
#include <map>
#include <random>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deviceshare::extender {
namespace {

using ::testing::ElementsAre;

std::vector<absl::string_view> Views(const std::vector<std::string>& names) {
  return std::vector<absl::string_view>(names.begin(), names.end());
}

std::map<std::string, int> ByHost(const std::vector<HostPriority>& answer) {
  std::map<std::string, int> scores;
  for (const HostPriority& priority : answer) {
    scores[priority.host] = priority.score;
  }
  return scores;
}

std::vector<int> Scores(const std::vector<HostPriority>& answer) {
  std::vector<int> scores;
  for (const HostPriority& priority : answer) scores.push_back(priority.score);
  return scores;
}

TEST(NodeRankingTest, ScoresByRankWithTheReservedNodeOnTop) {
  const std::vector<std::string> ranked = {"a", "b", "c", "d"};
  const NodeRanking ranking(Views(ranked), "a");
  EXPECT_THAT(Scores(ranking.Answer(NameList(ranked))),
              ElementsAre(10, 9, 5, 0));
  // Another order, a node not ranked, and one asked twice.
  EXPECT_THAT(Scores(ranking.Answer(NameList{"d", "x", "b", "a", "c", "b"})),
              ElementsAre(0, 0, 9, 10, 5, 9));
}

TEST(NodeRankingTest, AReservedNodeAfterTheFirstKeepsTheOthersRanks) {
  const std::vector<std::string> ranked = {"a", "b", "c", "d"};
  const NodeRanking ranking(Views(ranked), "c");
  EXPECT_THAT(Scores(ranking.Answer(NameList(ranked))),
              ElementsAre(9, 5, 10, 0));
}

TEST(NodeRankingTest, ANameRankedTwiceTakesItsLastRank) {
  const std::vector<std::string> ranked = {"a", "b", "b", "c", "d"};
  const NodeRanking ranking(Views(ranked), "a");
  EXPECT_THAT(Scores(ranking.Answer(NameList(ranked))),
              ElementsAre(10, 6, 6, 3, 0));
}

TEST(NodeRankingTest, InOrderAndShuffledAnswersAgree) {
  std::mt19937 random(5);
  for (int round = 0; round < 50; ++round) {
    std::vector<std::string> ranked;
    const int count = 1 + static_cast<int>(random() % 40);
    for (int i = 0; i < count; ++i) {
      ranked.push_back(absl::StrCat("node-", random() % 100));
    }
    // As /filter ranks: sorted, so that a name listed twice is listed
    // consecutively.
    std::sort(ranked.begin(), ranked.end());
    const std::string reserved =
        random() % 4 == 0 ? "" : ranked[random() % ranked.size()];
    const NodeRanking ranking(Views(ranked), reserved);
    std::vector<std::string> shuffled = ranked;
    std::shuffle(shuffled.begin(), shuffled.end(), random);
    const std::vector<HostPriority> in_order = ranking.Answer(NameList(ranked));
    ASSERT_EQ(in_order.size(), ranked.size());
    for (size_t i = 0; i < ranked.size(); ++i) {
      EXPECT_EQ(in_order[i].host, ranked[i]);
    }
    const std::map<std::string, int> scores = ByHost(in_order);
    for (const HostPriority& priority : in_order) {
      EXPECT_EQ(priority.score, scores.at(priority.host));
    }
    EXPECT_EQ(scores, ByHost(ranking.Answer(NameList(shuffled))));
  }
}

}  // namespace
}  // namespace deviceshare::extender
