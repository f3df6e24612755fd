// File: extender/node_ranking.h
//
// NodeRanking: what /filter leaves for the /prioritize call that follows --
// the fitting nodes, best first, and the node the pod was reserved on. The
// reserved node scores 10; the others 9 down to 0 by rank, spread evenly;
// a node not ranked scores 0.
//
// It is kept per filtered pod until the bind, so it is compact: the names
// in one buffer, best first (some 15 bytes a node; a hash map of names and
// scores took about 65). The map is built only while /prioritize answers.
//
// Thread safety: a value type; const methods may run concurrently.
#ifndef DEVICESHARE_EXTENDER_NODE_RANKING_H_
#define DEVICESHARE_EXTENDER_NODE_RANKING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "deviceshare/extender/extender_wire.h"
#include "deviceshare/extender/name_list.h"

namespace deviceshare::extender {

class NodeRanking {
 public:
  NodeRanking() = default;
  // `ranked`: the fitting nodes, best first; `reserved` is among them (or
  // "" when the pod was reserved nowhere). A name listed twice must be
  // listed consecutively (BetterVerdict() order keeps equal names
  // together); it scores by its last rank.
  NodeRanking(const std::vector<absl::string_view>& ranked,
              absl::string_view reserved);

  bool empty() const { return ends_.empty(); }
  void clear();

  // The score of each of `names`, in their order.
  std::vector<HostPriority> Answer(const NameList& names) const;
  // Answer()'s scores alone, names[i]'s at i.
  std::vector<int> Scores(const NameList& names) const;

 private:
  // The score of the ranked `name` whose rank among the nodes other than
  // the reserved one is `rank` (counted up past it).
  int ScoreAt(absl::string_view name, size_t& rank) const;
  absl::string_view NameAt(size_t position) const;
  // Scores() when `names` are the ranked names in their order, each once;
  // false (nothing added) otherwise.
  bool ScoresInOrder(const NameList& names, std::vector<int>& scores) const;

  std::string names_;           // the ranked names, concatenated
  std::vector<uint32_t> ends_;  // where each name ends in names_
  std::string reserved_;
};

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_NODE_RANKING_H_
