// File: json_text.h
//
// JSON text for the C API's answers and messages. Strings read from YAML
// may hold bytes that are not UTF-8, on which nlohmann's dump() throws;
// here they become U+FFFD instead, so an answer is always valid JSON.
#ifndef DEVICESHARE_CAPI_JSON_TEXT_H_
#define DEVICESHARE_CAPI_JSON_TEXT_H_

#include <string>

namespace deviceshare::capi {

// Compact JSON; `Json` is nlohmann::json or nlohmann::ordered_json.
template <typename Json>
std::string DumpJson(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

}  // namespace deviceshare::capi

#endif  // DEVICESHARE_CAPI_JSON_TEXT_H_
