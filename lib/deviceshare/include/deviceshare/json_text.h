// File: json_text.h
//
// JSON as text, for messages and outputs. A string read from YAML may hold
// bytes that are not UTF-8, on which nlohmann's dump() throws (and a
// program aborts); here they print as U+FFFD instead, so an error message
// or an output is always written and always valid JSON.
//
// Thread safety: a pure function.
#ifndef DEVICESHARE_JSON_TEXT_H_
#define DEVICESHARE_JSON_TEXT_H_

#include <string>

namespace deviceshare {

// `value` as JSON text, compact or indented by `indent` spaces; `Json` is
// nlohmann::json or nlohmann::ordered_json.
template <typename Json>
std::string JsonText(const Json& value, int indent = -1) {
  return value.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace deviceshare

#endif  // DEVICESHARE_JSON_TEXT_H_
