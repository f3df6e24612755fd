// File: testing/verdict_order.h
//
// The order a full scan ranks nodes in, for tests that compare a faster
// path with it.
#ifndef DEVICESHARE_TESTS_TESTING_VERDICT_ORDER_H_
#define DEVICESHARE_TESTS_TESTING_VERDICT_ORDER_H_

#include <string>
#include <vector>

#include "deviceshare/scheduler/decision.h"

namespace deviceshare::testing {

// The fitting nodes' names, best first (BetterVerdict).
std::vector<std::string> FittingNodesBestFirst(
    const std::vector<NodeVerdict>& verdicts);

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_VERDICT_ORDER_H_
