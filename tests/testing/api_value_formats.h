// File: testing/api_value_formats.h
//
// The string formats the Kubernetes API server checks
// (k8s.io/apimachinery/pkg/util/validation and pkg/api/resource), written
// out again for FakeApiServer's validation. Each *Errors function returns
// the server's messages for a bad value ("must be no more than 63
// characters", "a lowercase RFC 1123 label must consist of ..."); empty
// when the value is fine.
//
// Deliberately independent of deviceshare's own code: these checks judge
// what deviceshare writes.
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_TESTS_TESTING_API_VALUE_FORMATS_H_
#define DEVICESHARE_TESTS_TESTING_API_VALUE_FORMATS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace deviceshare::testing {

// RFC 1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, at most 63 characters.
std::vector<std::string> DnsLabelErrors(absl::string_view value);
// RFC 1123 subdomain: dot-separated labels, at most 253 characters.
std::vector<std::string> DnsSubdomainErrors(absl::string_view value);
// C identifier: [A-Za-z_][A-Za-z0-9_]* (no length limit here).
std::vector<std::string> CIdentifierErrors(absl::string_view value);
// Label key / qualified name: [DNS subdomain "/"] name, name at most 63
// characters of [A-Za-z0-9._-] starting and ending alphanumeric.
std::vector<std::string> QualifiedNameErrors(absl::string_view value);
// Label value: empty, or like a qualified name's name part.
std::vector<std::string> LabelValueErrors(absl::string_view value);

// Semantic Versioning 2.0.0 (https://semver.org), no leading "v".
bool IsSemVer(absl::string_view value);

// A resource.Quantity: an optional sign, digits with an optional decimal
// point, and a suffix: binary (Ki Mi Gi Ti Pi Ei), decimal (n u m "" k M G T
// P E) or an exponent (e3, E-2).
struct Quantity {
  // The value in units of 1e-9, rounded up; saturated far beyond any real
  // quantity, where comparisons stop being exact.
  __int128 nanos = 0;
  std::string text;  // as written

  // The value rounded up to an integer, as Quantity.Value() does.
  int64_t Value() const;
  // <0, 0, >0 as this is less than, equal to, more than `other`.
  int Compare(const Quantity& other) const;
};

// The parsed quantity, or the server's message for a malformed one in
// `*error`.
std::optional<Quantity> ParseQuantity(absl::string_view text,
                                      std::string* error);

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_API_VALUE_FORMATS_H_
