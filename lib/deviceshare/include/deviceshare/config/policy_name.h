// File: config/policy_name.h
//
// The spelling of a placement policy's name, as the config file, a pod
// annotation or a command-line flag gives it. Whether a policy of that
// name exists is the PolicyRegistry's to say (policy/policy_registry.h),
// once the scheduler is made or a pod is decided.
#ifndef DEVICESHARE_CONFIG_POLICY_NAME_H_
#define DEVICESHARE_CONFIG_POLICY_NAME_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace deviceshare {

// The name in lower case without surrounding blanks ("Spread " ->
// "spread"). A name is a lower-case letter followed by letters, digits and
// '-' ("first-fit"); anything else is an InvalidArgument error naming
// `field` and the value.
absl::StatusOr<std::string> ParsePolicyName(absl::string_view text,
                                            absl::string_view field);

// A comma list of names (HAMi's chains, "binpack, numa"), each as
// ParsePolicyName reads it, joined by ',' without blanks; empty entries are
// skipped, as HAMi skips them. A single name reads as ParsePolicyName.
absl::StatusOr<std::string> ParsePolicyList(absl::string_view text,
                                            absl::string_view field);

}  // namespace deviceshare

#endif  // DEVICESHARE_CONFIG_POLICY_NAME_H_
