// File: dra/json_fields.h (private to the core's dra/ sources)
//
// Typed reads of JSON members for the resource.k8s.io decoders, each error
// InvalidArgument naming the field path and the value: `spec.driver:
// missing`, `spec.devices[2].name: 7 is not a string`. A null member counts
// as absent (what the API server writes for an unset pointer).
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_DRA_SRC_JSON_FIELDS_H_
#define DEVICESHARE_DRA_SRC_JSON_FIELDS_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace deviceshare::dra::json_fields {

absl::Status Invalid(absl::string_view path, absl::string_view why);
// "<path>: <value> is not <what>".
absl::Status NotA(absl::string_view path, const nlohmann::json& value,
                  absl::string_view what);
// "path.key", or "key" at the top.
std::string Join(const std::string& path, const char* key);
// The member, or nullptr when absent or null.
const nlohmann::json* Member(const nlohmann::json& object, const char* key);
// A string member; "" when absent and not `required`; a required one must
// not be empty.
absl::StatusOr<std::string> StringField(const nlohmann::json& object,
                                        const std::string& path,
                                        const char* key, bool required);
// An object member; nullptr when absent and not `required`.
absl::StatusOr<const nlohmann::json*> ObjectField(const nlohmann::json& object,
                                                  const std::string& path,
                                                  const char* key,
                                                  bool required);
// An array member (nullptr when absent) of at most `max` `what`s.
absl::StatusOr<const nlohmann::json*> ArrayField(
    const nlohmann::json& object, const std::string& path, const char* key,
    size_t max = std::numeric_limits<size_t>::max(),
    absl::string_view what = "entries");
absl::StatusOr<int64_t> Int64(const nlohmann::json& value,
                              const std::string& path);

}  // namespace deviceshare::dra::json_fields

#endif  // DEVICESHARE_DRA_SRC_JSON_FIELDS_H_
