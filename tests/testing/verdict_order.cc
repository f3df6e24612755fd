#include "testing/verdict_order.h"

#include <algorithm>

namespace deviceshare::testing {

std::vector<std::string> FittingNodesBestFirst(
    const std::vector<NodeVerdict>& verdicts) {
  std::vector<const NodeVerdict*> fits;
  for (const NodeVerdict& verdict : verdicts) {
    if (verdict.fit.fits()) fits.push_back(&verdict);
  }
  std::sort(fits.begin(), fits.end(),
            [](const NodeVerdict* a, const NodeVerdict* b) {
              return BetterVerdict(*a, *b);
            });
  std::vector<std::string> names;
  for (const NodeVerdict* verdict : fits) names.push_back(verdict->node);
  return names;
}

}  // namespace deviceshare::testing
