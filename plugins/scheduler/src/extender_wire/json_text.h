// File: extender_wire/json_text.h (internal)
//
// Writing JSON text by hand, for the encoders' hot path, and describing
// values in error messages.
#ifndef DEVICESHARE_EXTENDER_WIRE_JSON_TEXT_H_
#define DEVICESHARE_EXTENDER_WIRE_JSON_TEXT_H_

#include <cstddef>
#include <string>

#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace deviceshare::extender::internal {

// The length of the valid UTF-8 sequence starting at text[i] (a byte >=
// 0x80), or 0 when it is not one (RFC 3629: no overlong forms, surrogates
// or code points above U+10FFFF; the same rules as nlohmann's parser).
size_t Utf8SequenceLength(absl::string_view text, size_t i);

// The index of the first byte at or after `i` that is not printable ASCII
// or is `"` or `\`; text.size() if none.
size_t SkipPlain(absl::string_view text, size_t i);

// Appends `text` as a quoted JSON string. `"`, `\` and control characters
// are escaped; each byte that does not start a valid UTF-8 sequence becomes
// U+FFFD (Go's encoder does the same), so the output always parses.
void AppendJsonString(absl::string_view text, std::string* out);

// The value as JSON, cut to about 64 characters, for error messages.
std::string DescribeValue(const nlohmann::json& value);

}  // namespace deviceshare::extender::internal

#endif  // DEVICESHARE_EXTENDER_WIRE_JSON_TEXT_H_
