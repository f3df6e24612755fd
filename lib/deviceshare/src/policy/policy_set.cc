#include "deviceshare/policy/policy_set.h"

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "deviceshare/status_macros.h"

namespace deviceshare {

absl::StatusOr<PolicySet> PolicySet::Create(const PolicyRegistry& registry,
                                            const Config& config) {
  PolicySet set;
  for (const std::string& name : registry.RegisteredNames()) {
    DS_ASSIGN_OR_RETURN(std::unique_ptr<PlacementPolicy> policy,
                        registry.Create(name, config));
    set.policies_.emplace(name, std::move(policy));
  }
  auto pick = [&](absl::string_view field, const std::string& name,
                  const PlacementPolicy*& out) -> absl::Status {
    out = set.Find(name);
    if (out != nullptr) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: \"%s\" is not a registered policy (registered: "
                        "%s)",
                        field, name, set.Names()));
  };
  DS_RETURN_IF_ERROR(pick("scheduler.nodePolicy", config.scheduler.node_policy,
                          set.node_default_));
  DS_RETURN_IF_ERROR(pick("scheduler.gpuPolicy", config.scheduler.gpu_policy,
                          set.gpu_default_));
  return set;
}

const PlacementPolicy* PolicySet::Find(absl::string_view name) const {
  auto it = policies_.find(name);
  return it == policies_.end() ? nullptr : it->second.get();
}

std::string PolicySet::Names() const {
  std::vector<absl::string_view> names;
  for (const auto& [name, policy] : policies_) names.push_back(name);
  return absl::StrJoin(names, ", ");
}

void PolicySet::ObservePod(const PodRequest& pod) const {
  for (const auto& [name, policy] : policies_) policy->ObservePod(pod);
}

uint64_t PolicySet::ScoresVersion() const {
  uint64_t sum = 0;
  for (const auto& [name, policy] : policies_) sum += policy->scores_version();
  return sum;
}

}  // namespace deviceshare
