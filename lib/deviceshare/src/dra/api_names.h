// File: dra/api_names.h (private to the core's dra/ sources)
//
// The name syntaxes of resource.k8s.io/v1: DNS labels (device, request and
// counter names), C identifiers (attribute and capacity names after the
// domain) and qualified names ("domain/identifier").
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_DRA_SRC_API_NAMES_H_
#define DEVICESHARE_DRA_SRC_API_NAMES_H_

#include "absl/strings/string_view.h"

namespace deviceshare::dra {

// Lower-case alphanumerics and '-', not at either end, at most 63.
bool IsDnsLabel(absl::string_view name);
// Alphanumerics and '_', not starting with a digit, at most 32.
bool IsIdentifier(absl::string_view name);
// Dot-separated DNS labels, at most 63 characters.
bool IsDomain(absl::string_view domain);
// "domain/identifier", or a bare identifier unless `fully`.
bool IsQualifiedName(absl::string_view name, bool fully = false);

}  // namespace deviceshare::dra

#endif  // DEVICESHARE_DRA_SRC_API_NAMES_H_
