#include "deviceshare/policy/policy_registry.h"

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "deviceshare/config/policy_name.h"
#include "deviceshare/policy/baselines/fgd_baselines.h"
#include "deviceshare/policy/builtin_policies.h"
#include "deviceshare/policy/fgd/fgd_policy.h"
#include "deviceshare/policy/fragaware/fragaware_policy.h"
#include "deviceshare/status_macros.h"

namespace deviceshare {

absl::Status PolicyRegistry::Register(absl::string_view name, Factory factory) {
  DS_ASSIGN_OR_RETURN(std::string parsed, ParsePolicyName(name, "policy"));
  if (parsed != name) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "policy \"%s\": register it in lower case, without blanks", name));
  }
  if (!factories_.emplace(std::string(name), std::move(factory)).second) {
    return absl::AlreadyExistsError(
        absl::StrFormat("policy \"%s\" is already registered", name));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<PlacementPolicy>> PolicyRegistry::Create(
    absl::string_view name, const Config& config) const {
  auto it = factories_.find(name);
  if (it == factories_.end()) {
    return absl::NotFoundError(
        absl::StrFormat("no policy '%s'; registered: %s", name,
                        absl::StrJoin(RegisteredNames(), ", ")));
  }
  return it->second(config);
}

bool PolicyRegistry::Contains(absl::string_view name) const {
  return factories_.find(name) != factories_.end();
}

std::vector<std::string> PolicyRegistry::RegisteredNames() const {
  std::vector<std::string> names;
  names.reserve(factories_.size());
  for (const auto& [name, factory] : factories_) names.push_back(name);
  return names;
}

absl::Status RegisterBuiltinPolicies(PolicyRegistry& registry) {
  DS_RETURN_IF_ERROR(registry.Register(kBinpackPolicyName, NewBinpackPolicy));
  DS_RETURN_IF_ERROR(registry.Register(kSpreadPolicyName, NewSpreadPolicy));
  DS_RETURN_IF_ERROR(registry.Register(kMutexPolicyName, NewMutexPolicy));
  DS_RETURN_IF_ERROR(registry.Register(kNumaPolicyName, NewNumaPolicy));
  DS_RETURN_IF_ERROR(registry.Register(kTopologyPolicyName, NewTopologyPolicy));
  DS_RETURN_IF_ERROR(registry.Register(kFgdPolicyName, NewFgdPolicy));
  DS_RETURN_IF_ERROR(registry.Register(kBestfitPolicyName, NewBestfitPolicy));
  DS_RETURN_IF_ERROR(
      registry.Register(kFragawarePolicyName, NewFragawarePolicy));
  return registry.Register(kPackingPolicyName, NewPackingPolicy);
}

const PolicyRegistry& BuiltinPolicies() {
  static const PolicyRegistry* const registry = [] {
    auto* built = new PolicyRegistry;
    // Constant names: this cannot fail.
    RegisterBuiltinPolicies(*built).IgnoreError();
    return built;
  }();
  return *registry;
}

}  // namespace deviceshare
