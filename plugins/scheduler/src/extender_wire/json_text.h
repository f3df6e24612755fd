// File: extender_wire/json_text.h (internal)
//
// Writing JSON text by hand, for the encoders' hot path, and describing
// values in error messages.
#ifndef DEVICESHARE_EXTENDER_WIRE_JSON_TEXT_H_
#define DEVICESHARE_EXTENDER_WIRE_JSON_TEXT_H_

#include <string>

#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace deviceshare::extender::internal {

// Appends `text` as a quoted JSON string. `"`, `\` and control characters
// are escaped; each byte that does not start a valid UTF-8 sequence becomes
// U+FFFD (Go's encoder does the same), so the output always parses.
void AppendJsonString(absl::string_view text, std::string* out);

// The value as JSON, cut to about 64 characters, for error messages.
std::string DescribeValue(const nlohmann::json& value);

}  // namespace deviceshare::extender::internal

#endif  // DEVICESHARE_EXTENDER_WIRE_JSON_TEXT_H_
