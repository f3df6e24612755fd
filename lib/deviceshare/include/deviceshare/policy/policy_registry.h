// File: policy/policy_registry.h
//
// PolicyRegistry: makes placement policies by name. Explicit, like
// BackendRegistry: nothing registers itself from a static initializer.
// RegisterBuiltinPolicies() registers the policies of the core (binpack,
// spread); a host or a test registers its own beside them, and a config
// or a pod annotation then selects it by name.
//
// Adding a policy: one file with a PlacementPolicy and its factory, and one
// Register() line (in RegisterBuiltinPolicies for a built-in one).
//
// Thread safety: Register() must finish before Create() is called from
// several threads; Create() and RegisteredNames() are const.
#ifndef DEVICESHARE_POLICY_POLICY_REGISTRY_H_
#define DEVICESHARE_POLICY_POLICY_REGISTRY_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/config/scheduler_config.h"
#include "deviceshare/policy/placement_policy.h"

namespace deviceshare {

class PolicyRegistry {
 public:
  using Factory =
      std::function<absl::StatusOr<std::unique_ptr<PlacementPolicy>>(
          const Config&)>;

  // AlreadyExists if `name` is taken; InvalidArgument unless `name` is a
  // policy name (policy/policy_name.h).
  absl::Status Register(absl::string_view name, Factory factory);

  // NotFound("no policy 'x'; registered: a, b") for an unknown name, or the
  // factory's own error.
  absl::StatusOr<std::unique_ptr<PlacementPolicy>> Create(
      absl::string_view name, const Config& config) const;

  bool Contains(absl::string_view name) const;
  std::vector<std::string> RegisteredNames() const;  // sorted

 private:
  std::map<std::string, Factory, std::less<>> factories_;
};

// Registers binpack and spread.
absl::Status RegisterBuiltinPolicies(PolicyRegistry& registry);

// A registry holding the built-in policies only.
const PolicyRegistry& BuiltinPolicies();

}  // namespace deviceshare

#endif  // DEVICESHARE_POLICY_POLICY_REGISTRY_H_
