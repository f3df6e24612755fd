// File: policy/policy_set.h
//
// PolicySet: the placement policies one scheduler can use: one instance of
// every policy registered when it was made, so that the config's defaults
// and any pod's override are a lookup by name.
//
// Thread safety: immutable after Create(); safe to share.
#ifndef DEVICESHARE_POLICY_POLICY_SET_H_
#define DEVICESHARE_POLICY_POLICY_SET_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/config/scheduler_config.h"
#include "deviceshare/policy/placement_policy.h"
#include "deviceshare/policy/policy_registry.h"

namespace deviceshare {

class PolicySet {
 public:
  // Makes every registered policy. InvalidArgument naming
  // scheduler.nodePolicy / scheduler.gpuPolicy when the config names a
  // policy that is not registered; a factory's own error otherwise.
  static absl::StatusOr<PolicySet> Create(const PolicyRegistry& registry,
                                          const Config& config);

  // The policy registered as `name`, or nullptr.
  const PlacementPolicy* Find(absl::string_view name) const;
  // The config's choices.
  const PlacementPolicy& node_default() const { return *node_default_; }
  const PlacementPolicy& gpu_default() const { return *gpu_default_; }
  // Shows `pod` to every policy (PlacementPolicy::ObservePod).
  void ObservePod(const PodRequest& pod) const;
  // The sum of every policy's scores_version(): it changes whenever what
  // some policy learnt from ObservePod() may change a verdict, and stays
  // put while none learns (binpack, spread, fgd, fragaware with a
  // typicalWorkload).
  uint64_t ScoresVersion() const;
  // "binpack, spread": for error messages.
  std::string Names() const;

 private:
  std::map<std::string, std::unique_ptr<PlacementPolicy>, std::less<>>
      policies_;
  const PlacementPolicy* node_default_ = nullptr;
  const PlacementPolicy* gpu_default_ = nullptr;
};

}  // namespace deviceshare

#endif  // DEVICESHARE_POLICY_POLICY_SET_H_
