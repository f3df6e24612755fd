// File: config/config_fields.h
//
// Typed reads from a JSON tree for deviceshare's own parsers (the config
// file, and the MIG catalog file in lib/mig); namespace internal: not an
// API for embedders. Every reader takes
// the full key path of the value (`nvidia.knownMigGeometries[0].models`) and
// returns an InvalidArgument error that names the path and the value, so a
// user can find the line to fix in a config map of a hundred lines.
#ifndef DEVICESHARE_CONFIG_CONFIG_FIELDS_H_
#define DEVICESHARE_CONFIG_CONFIG_FIELDS_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace deviceshare::internal {

// `path.key`, or `key` at the top level.
std::string KeyPath(absl::string_view path, absl::string_view key);
// `path[index]`.
std::string IndexPath(absl::string_view path, size_t index);

// The value as a user would recognise it in an error: `"abc"`, `12`, `true`,
// `null`, `a mapping`, `a list`.
std::string DescribeValue(const nlohmann::json& value);

// InvalidArgument `<path>: <message>`.
absl::Status PathError(absl::string_view path, absl::string_view message);

// An error unless `value` is a mapping.
absl::Status RequireMapping(const nlohmann::json& value,
                            absl::string_view path);
// An error unless `value` is a list.
absl::Status RequireList(const nlohmann::json& value, absl::string_view path);

// An error naming the first key of the mapping `object` that is not in
// `known`: `<path>.<key>: unknown key`.
absl::Status CheckKnownKeys(const nlohmann::json& object,
                            absl::string_view path,
                            std::initializer_list<absl::string_view> known);

// A whole number in [min, max]. Integral floats (2.0) are accepted; strings
// are not, even when they hold digits (the upstream Go parsers reject them
// too, so a config that passes here also passes there).
absl::StatusOr<int64_t> ReadInteger(const nlohmann::json& value,
                                    absl::string_view path, int64_t min,
                                    int64_t max);

// A number > 0 (`1.5`) in thousandths, rounded to nearest; the result must
// be in [1, INT32_MAX].
absl::StatusOr<int32_t> ReadPositiveMilli(const nlohmann::json& value,
                                          absl::string_view path);

absl::StatusOr<bool> ReadBool(const nlohmann::json& value,
                              absl::string_view path);

// A string; `allow_empty` false rejects "".
absl::StatusOr<std::string> ReadString(const nlohmann::json& value,
                                       absl::string_view path,
                                       bool allow_empty);

// A non-empty list of non-empty strings.
absl::StatusOr<std::vector<std::string>> ReadStringList(
    const nlohmann::json& value, absl::string_view path);

}  // namespace deviceshare::internal

#endif  // DEVICESHARE_CONFIG_CONFIG_FIELDS_H_
