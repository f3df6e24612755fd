// File: src/dra/cel_value.h (internal)
//
// Runtime values of the CEL subset. Strings are views into the compiled
// program or the device being matched, both of which outlive one
// evaluation, so evaluation does not copy them; only lowerAscii() makes a
// string of its own.
#ifndef DEVICESHARE_SRC_DRA_CEL_VALUE_H_
#define DEVICESHARE_SRC_DRA_CEL_VALUE_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "dra/cel_ast.h"

namespace deviceshare::dra::cel_internal {

// A semantic version (semver 2.0.0). `prerelease` views the parsed text;
// build metadata is dropped, as it does not take part in ordering.
struct Semver {
  int64_t major = 0;
  int64_t minor = 0;
  int64_t patch = 0;
  absl::string_view prerelease;
};

// Strict semver 2.0.0 ("1.2.3", "1.2.3-rc.1+build"), as Kubernetes'
// semver() reads it: no leading zeros, no "v" prefix, no missing parts.
std::optional<Semver> ParseSemver(absl::string_view text);

// -1, 0 or 1, by semver precedence.
int CompareSemver(const Semver& a, const Semver& b);

struct Value {
  CelType type = CelType::kBool;
  // kBool (0/1), kInt, kQuantity (thousandths of the unit).
  int64_t number = 0;
  // kString, and the domain of kAttributeDomain / kCapacityDomain.
  absl::string_view view;
  bool owns_text = false;
  std::string owned;  // the text when owns_text
  Semver semver;      // kSemver

  absl::string_view text() const { return owns_text ? owned : view; }

  static Value Bool(bool b) {
    Value v;
    v.type = CelType::kBool;
    v.number = b ? 1 : 0;
    return v;
  }
  static Value Int(int64_t i) {
    Value v;
    v.type = CelType::kInt;
    v.number = i;
    return v;
  }
};

}  // namespace deviceshare::dra::cel_internal

#endif  // DEVICESHARE_SRC_DRA_CEL_VALUE_H_
