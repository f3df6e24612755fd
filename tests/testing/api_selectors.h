// File: testing/api_selectors.h
//
// The subset of Kubernetes list/watch selectors FakeApiServer honours:
// a namespace, field selectors (`spec.nodeName=n1`, `status.phase!=Failed`,
// terms joined by ',') on any dotted path, and equality-based label
// selectors (`app=x`, `app!=x`, `app`, `!app`). Set-based label selectors
// (`in`, `notin`) are rejected so a test notices it relies on them.
//
// Thread safety: an ObjectFilter is immutable once parsed.
#ifndef DEVICESHARE_TESTS_TESTING_API_SELECTORS_H_
#define DEVICESHARE_TESTS_TESTING_API_SELECTORS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace deviceshare::testing {

class ObjectFilter {
 public:
  // InvalidArgument for a selector outside the subset.
  static absl::StatusOr<ObjectFilter> Parse(std::string namespace_name,
                                            absl::string_view field_selector,
                                            absl::string_view label_selector);

  bool Matches(const nlohmann::json& object) const;

 private:
  struct Term {
    enum class Op { kEquals, kNotEquals, kExists, kNotExists };
    std::string key;  // dotted field path, or label key
    std::string value;
    Op op = Op::kEquals;
  };

  std::string namespace_name_;  // "" matches every namespace
  std::vector<Term> fields_;
  std::vector<Term> labels_;
};

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_API_SELECTORS_H_
