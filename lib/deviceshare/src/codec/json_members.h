// File: json_members.h (internal to deviceshare_core)
//
// Reading members of HAMi's JSON annotations (the node registration, the
// MIG allocations) the way Go's encoding/json fills a struct: an absent
// member is the zero value, unknown members are ignored, a value of the
// wrong type is an error. Errors read
//
//   <where> field <field>: <value as JSON> <why>
//
// e.g. `hami.io/node-nvidia-register entry 0 field migProfiles[1].memoryMB:
// "5gb" is not an integer`.
#ifndef DEVICESHARE_SRC_CODEC_JSON_MEMBERS_H_
#define DEVICESHARE_SRC_CODEC_JSON_MEMBERS_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace deviceshare::wire {

// InvalidArgument `<where> field <field>: <value> <why>`.
absl::Status JsonFieldError(absl::string_view where, absl::string_view field,
                            const nlohmann::json& value, absl::string_view why);

// InvalidArgument `<where> field <field>: is missing<why>`.
absl::Status MissingField(absl::string_view where, absl::string_view field,
                          absl::string_view why = "");

// One integer JSON value of field `field` within [0, max]; -1 is read as 0
// when `unknown_numa_is_zero`.
absl::StatusOr<int64_t> JsonIntValue(const nlohmann::json& value,
                                     absl::string_view field, int64_t max,
                                     absl::string_view where,
                                     bool unknown_numa_is_zero = false);

// An optional integer member in [0, max]; absent means 0 (Go's zero value).
absl::StatusOr<int64_t> JsonInt(const nlohmann::json& object, const char* name,
                                int64_t max, absl::string_view where,
                                bool unknown_numa_is_zero = false);

// As JsonInt, `field` naming the member in errors ("placements[0].start").
absl::StatusOr<int64_t> JsonIntNamed(const nlohmann::json& object,
                                     const char* name, absl::string_view field,
                                     int64_t max, absl::string_view where);

// An optional string member; absent means "".
absl::StatusOr<std::string> JsonString(const nlohmann::json& object,
                                       const char* name,
                                       absl::string_view where);

// A required integer member `name` of `object` in [min, max]; `field`
// names it in errors ("placement.size").
absl::StatusOr<int64_t> RequiredInt(const nlohmann::json& object,
                                    const char* name, absl::string_view field,
                                    int64_t min, int64_t max,
                                    absl::string_view where);

}  // namespace deviceshare::wire

#endif  // DEVICESHARE_SRC_CODEC_JSON_MEMBERS_H_
