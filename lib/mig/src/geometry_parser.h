// File: src/geometry_parser.h (internal)
//
// Reads the MIG keys of a device config map's `nvidia:` section:
// `knownMigGeometries` in both upstream shapes (Volcano's named groups and
// HAMi <= 2.9's list of lists) and HAMi >= 2.10's `migProfileAllowlist`.
// Errors name the key path and the value.
#ifndef DEVICESHARE_MIG_SRC_GEOMETRY_PARSER_H_
#define DEVICESHARE_MIG_SRC_GEOMETRY_PARSER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/mig/mig_config.h"
#include "nlohmann/json.hpp"

namespace deviceshare::mig::internal {

// `path` is the key path of the list, for error messages.
absl::StatusOr<std::vector<KnownMigGeometries>> ParseKnownMigGeometries(
    const nlohmann::json& value, absl::string_view path);

absl::StatusOr<std::vector<MigProfileAllowlist>> ParseMigProfileAllowlist(
    const nlohmann::json& value, absl::string_view path);

}  // namespace deviceshare::mig::internal

#endif  // DEVICESHARE_MIG_SRC_GEOMETRY_PARSER_H_
