// File: src/json_fields.h (internal)
//
// Typed reads from a JSON tree for the catalog file: the core's, plus those
// whose messages the catalog words its own way (unknown keys list the
// known ones; ranges read `9 is outside 0..7`). Every reader takes the
// full path of the value (`models[0].profiles[2].starts[1]`) and fails with
// InvalidArgument `<path>: <what is wrong with which value>`.
#ifndef DEVICESHARE_MIG_SRC_JSON_FIELDS_H_
#define DEVICESHARE_MIG_SRC_JSON_FIELDS_H_

#include <cstdint>
#include <initializer_list>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/config/config_fields.h"
#include "nlohmann/json.hpp"

namespace deviceshare::mig::internal {

// The core's readers (config/config_fields.h), where the catalog file wants
// the same message.
using ::deviceshare::internal::DescribeValue;
using ::deviceshare::internal::IndexPath;
using ::deviceshare::internal::KeyPath;
using ::deviceshare::internal::PathError;
using ::deviceshare::internal::RequireList;
using ::deviceshare::internal::RequireMapping;

// `<path>.<key>: unknown key (known: a, b, c)` for the first stray key.
absl::Status CheckKnownKeys(const nlohmann::json& object,
                            absl::string_view path,
                            std::initializer_list<absl::string_view> known);

// The member `key` of `object`, nullptr when absent or null.
const nlohmann::json* FindKey(const nlohmann::json& object,
                              absl::string_view key);
// As FindKey, but absence is `<path>.<key>: missing`.
absl::StatusOr<const nlohmann::json*> RequireKey(const nlohmann::json& object,
                                                 absl::string_view path,
                                                 absl::string_view key);

// A whole number in [min, max] (integral floats such as 2.0 pass; strings
// do not): `<path>: 9 is outside 0..7`.
absl::StatusOr<int64_t> ReadInteger(const nlohmann::json& value,
                                    absl::string_view path, int64_t min,
                                    int64_t max);

// A non-empty string.
absl::StatusOr<std::string> ReadString(const nlohmann::json& value,
                                       absl::string_view path);

}  // namespace deviceshare::mig::internal

#endif  // DEVICESHARE_MIG_SRC_JSON_FIELDS_H_
