// File: src/mig_geometry_parser.h (internal)
//
// Reads the MIG parts of a device config map's `nvidia:` section:
// `knownMigGeometries` in both upstream shapes (Volcano's named groups and
// HAMi <= 2.9's list of lists) and HAMi >= 2.10's `migProfileAllowlist`.
#ifndef DEVICESHARE_SRC_MIG_GEOMETRY_PARSER_H_
#define DEVICESHARE_SRC_MIG_GEOMETRY_PARSER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/config/device_config.h"
#include "nlohmann/json.hpp"

namespace deviceshare::internal {

// True for a MIG GPU-instance profile name: `<N>g.<M>gb` with an optional
// variant suffix, e.g. `1g.10gb`, `7g.79gb`, `1g.10gb+me`, `1g.24gb+me.all`,
// `2g.48gb-me`. Compute-instance names (`1c.3g.20gb`) are not accepted.
bool IsMigProfileName(absl::string_view name);

// `path` is the key path of the list, for error messages.
absl::StatusOr<std::vector<KnownMigGeometries>> ParseKnownMigGeometries(
    const nlohmann::json& value, absl::string_view path);

absl::StatusOr<std::vector<MigProfileAllowlist>> ParseMigProfileAllowlist(
    const nlohmann::json& value, absl::string_view path);

}  // namespace deviceshare::internal

#endif  // DEVICESHARE_SRC_MIG_GEOMETRY_PARSER_H_
