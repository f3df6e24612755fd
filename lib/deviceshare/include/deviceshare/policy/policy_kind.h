// File: policy/policy_kind.h
//
// The names of the placement policies. Node level (which node) and GPU level
// (which GPUs on the chosen node) are separate choices, each configurable in
// the scheduler config and overridable per pod with
// `hami.io/node-scheduler-policy` / `hami.io/gpu-scheduler-policy`.
#ifndef DEVICESHARE_POLICY_POLICY_KIND_H_
#define DEVICESHARE_POLICY_POLICY_KIND_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace deviceshare {

enum class PolicyKind {
  kBinpack,  // fill the fullest node / GPU first: keeps whole GPUs free
  kSpread,   // use the emptiest node / GPU first: least interference
};

// "binpack" or "spread".
absl::string_view PolicyKindName(PolicyKind kind);

// Parses "binpack" or "spread" (case-insensitive). Any other name is an
// InvalidArgument error naming `field` and the value.
absl::StatusOr<PolicyKind> ParsePolicyKind(absl::string_view text,
                                           absl::string_view field);

}  // namespace deviceshare

#endif  // DEVICESHARE_POLICY_POLICY_KIND_H_
