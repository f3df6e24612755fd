// File: extender_wire/extender_args_fields.h (internal)
//
// The two ways the fields of an ExtenderArgs body are read before
// DecodeExtenderArgs checks them. The general reader follows Go's rules
// for any JSON. The plain scanner reads only the shape kube-scheduler
// sends, about ten times faster on a list of thousands of node names
// (nlohmann's lexer is the cost): it builds no JSON value per name and
// hands only the Pod and Nodes values to nlohmann. Where the scanner
// answers, the two agree (the fuzzer checks it).
#ifndef DEVICESHARE_EXTENDER_WIRE_EXTENDER_ARGS_FIELDS_H_
#define DEVICESHARE_EXTENDER_WIRE_EXTENDER_ARGS_FIELDS_H_

#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/extender/extender_wire.h"

namespace deviceshare::extender::internal {

// The fields as Go would fill them, unchecked but for NodeNames being
// strings: `pod` is null when absent or null.
absl::StatusOr<ExtenderArgs> ReadExtenderArgsFields(absl::string_view body);

// The same fields for a body that is a JSON object whose keys fold to Pod,
// NodeNames or Nodes, each at most once, spelt without escapes, whose
// NodeNames is null or an array of strings without escapes, and which
// nests no deeper than kMaxJsonDepth. nullopt for any other body, valid or
// not: ReadExtenderArgsFields then decides.
std::optional<ExtenderArgs> ScanPlainExtenderArgs(absl::string_view body);

}  // namespace deviceshare::extender::internal

#endif  // DEVICESHARE_EXTENDER_WIRE_EXTENDER_ARGS_FIELDS_H_
