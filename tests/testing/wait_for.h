// File: testing/wait_for.h
//
// Waiting for something another thread does, without fixed sleeps: poll a
// condition until it holds or a generous deadline passes (a loaded CI
// machine can be slow; a passing test returns as soon as it can).
#ifndef DEVICESHARE_TESTS_TESTING_WAIT_FOR_H_
#define DEVICESHARE_TESTS_TESTING_WAIT_FOR_H_

#include <functional>

#include "absl/time/time.h"

namespace deviceshare::testing {

// True as soon as `condition()` is; false if it still is not after
// `timeout`.
bool WaitFor(const std::function<bool()>& condition,
             absl::Duration timeout = absl::Seconds(10));

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_WAIT_FOR_H_
