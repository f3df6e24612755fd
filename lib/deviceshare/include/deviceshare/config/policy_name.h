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

// A pod's policy annotation as HAMi reads it, which never refuses one: a
// comma list of names (HAMi's chains, "binpack, numa") in lower case
// without blanks, joined by ','. Empty entries are skipped, and so is an
// entry that is not a well-formed name: HAMi takes it as a policy it does
// not know, and the scheduler gives such a pod HAMi's default. A list stays
// a list ("binpack," when one name is left, since any comma makes a chain
// in HAMi); "" when the text names nothing.
std::string ReadPolicyWords(absl::string_view text);

}  // namespace deviceshare

#endif  // DEVICESHARE_CONFIG_POLICY_NAME_H_
