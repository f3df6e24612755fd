// File: status_matchers.h
//
// gmock matchers for absl::Status / StatusOr (absl 20220623 has none).
#ifndef DEVICESHARE_TESTS_STATUS_MATCHERS_H_
#define DEVICESHARE_TESTS_STATUS_MATCHERS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"

namespace deviceshare::testing {

inline const absl::Status& GetStatus(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& GetStatus(const absl::StatusOr<T>& s) {
  return s.status();
}

MATCHER(IsOk, "is OK") {
  const absl::Status& s = GetStatus(arg);
  if (!s.ok()) *result_listener << "status: " << s.ToString();
  return s.ok();
}

// StatusIs(code) and StatusIs(code, message_matcher).
MATCHER_P(StatusIs, code, "") {
  const absl::Status& s = GetStatus(arg);
  *result_listener << "status: " << s.ToString();
  return s.code() == code;
}
MATCHER_P2(StatusIs, code, message_matcher, "") {
  const absl::Status& s = GetStatus(arg);
  *result_listener << "status: " << s.ToString();
  return s.code() == code &&
         ::testing::ExplainMatchResult(
             message_matcher, std::string(s.message()), result_listener);
}

}  // namespace deviceshare::testing

#define ASSERT_OK(expr) ASSERT_THAT((expr), ::deviceshare::testing::IsOk())
#define EXPECT_OK(expr) EXPECT_THAT((expr), ::deviceshare::testing::IsOk())

#endif  // DEVICESHARE_TESTS_STATUS_MATCHERS_H_
