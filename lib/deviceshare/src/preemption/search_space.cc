#include "preemption/search_space.h"

#include <algorithm>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "deviceshare/backend/container_placement.h"
#include "deviceshare/preemption/victim_order.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::preemption::internal {
namespace {

// The GPUs the pod could take: a mode one of the cycle's backends serves,
// and past the usage-independent checks (health, cordon, filters).
uint64_t UsableMask(const PodCycle& cycle, const NodeState& node) {
  const PodRequest& request = cycle.pod();
  if (!request.HasGpuRequest()) return 0;
  uint64_t mask = 0;
  for (size_t g = 0; g < node.gpu_count(); ++g) {
    const Gpu& gpu = node.inventory().gpus[g];
    for (const SharingBackend* backend : cycle.backends) {
      if (backend->mode() == gpu.mode &&
          EligibilityCode(request, gpu, gpu.mode) == ReasonCode::kFits) {
        mask |= uint64_t{1} << g;
        break;
      }
    }
  }
  return mask;
}

// The host resources the pod lacks on the node, as the decision path's
// host check sees them.
struct HostShort {
  bool cpu = false;
  bool memory = false;
};

HostShort HostShortOf(const PodRequest& request, const NodeState& node) {
  const NodeInventory& inventory = node.inventory();
  return HostShort{
      .cpu = inventory.cpu_milli > 0 &&
             node.used_cpu_milli() + request.cpu_milli > inventory.cpu_milli,
      .memory =
          inventory.memory_mib > 0 &&
          node.used_memory_mib() + request.memory_mib > inventory.memory_mib};
}

absl::Status CheckBudgets(const VictimQuery& query) {
  for (const auto& [group, left] : query.disruptions_left) {
    if (left < 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "disruptions_left[\"%s\"]: %d is negative", group, left));
    }
  }
  if (query.budget.filter_calls < 0 || query.budget.steps < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "budget: filter_calls %d and steps %d must not be negative",
        query.budget.filter_calls, query.budget.steps));
  }
  return absl::OkStatus();
}

// The record of candidate `i`, or InvalidArgument naming what is wrong.
absl::StatusOr<const PodRecord*> CheckCandidate(
    const ClusterState& state, const VictimQuery& query, size_t i,
    absl::flat_hash_map<std::string, size_t>& seen) {
  const VictimCandidate& candidate = query.candidates[i];
  if (candidate.uid.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("candidates[%d].uid: empty", i));
  }
  if (auto [it, added] = seen.emplace(candidate.uid, i); !added) {
    return absl::InvalidArgumentError(
        absl::StrFormat("candidates[%d].uid \"%s\": listed twice (also "
                        "candidates[%d])",
                        i, candidate.uid, it->second));
  }
  if (candidate.uid == query.cycle->pod().uid) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "candidates[%d].uid \"%s\": is the pending pod", i, candidate.uid));
  }
  const PodRecord* record = state.FindPod(candidate.uid);
  if (record == nullptr || record->allocation.node_name != query.node) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "candidates[%d].uid \"%s\": no pod with this uid is bound on node "
        "\"%s\"",
        i, candidate.uid, query.node));
  }
  if (!candidate.disruption_group.empty() &&
      !query.disruptions_left.contains(candidate.disruption_group)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("candidates[%d].disruption_group \"%s\": no entry in "
                        "disruptions_left",
                        i, candidate.disruption_group));
  }
  return record;
}

// What the victim frees on the usable GPUs, and whether it matters at all.
bool FillReleases(const NodeState& node, uint64_t usable_mask,
                  HostShort host_short, Victim& victim) {
  for (size_t g = 0; g < node.gpu_count(); ++g) {
    if ((usable_mask >> g & 1) == 0) continue;
    absl::Span<const ContainerShare> shares =
        node.ledger(g).SharesOf(victim.uid());
    if (shares.empty()) continue;
    const PodCharge charge = ChargeOf(shares);
    victim.gpu_mask |= uint64_t{1} << g;
    victim.releases.push_back(
        GpuRelease{g, charge.memory_mib, charge.cores, charge.slots});
  }
  const PodRequest& request = victim.record->request;
  const bool frees_host = (host_short.cpu && request.cpu_milli > 0) ||
                          (host_short.memory && request.memory_mib > 0);
  return victim.gpu_mask != 0 || frees_host;
}

}  // namespace

absl::StatusOr<SearchSpace> BuildSearchSpace(const ClusterState& state,
                                             const NodeState& node,
                                             const VictimQuery& query) {
  if (node.gpu_count() > kMaxGpus) {
    return absl::InvalidArgumentError(
        absl::StrFormat("node \"%s\": %d GPUs; the victim search takes at "
                        "most %d",
                        query.node, node.gpu_count(), kMaxGpus));
  }
  DS_RETURN_IF_ERROR(CheckBudgets(query));
  SearchSpace space;
  space.usable_mask = UsableMask(*query.cycle, node);
  const HostShort host_short = HostShortOf(query.cycle->pod(), node);
  space.host_short = host_short.cpu || host_short.memory;
  absl::flat_hash_map<std::string, int> group_index;
  absl::flat_hash_map<std::string, size_t> seen;
  for (size_t i = 0; i < query.candidates.size(); ++i) {
    DS_ASSIGN_OR_RETURN(const PodRecord* record,
                        CheckCandidate(state, query, i, seen));
    const VictimCandidate& candidate = query.candidates[i];
    const std::string& group = candidate.disruption_group;
    // A pod off the ledger holds nothing; releasing it would only undo
    // host usage it was never charged.
    if (candidate.priority >= query.priority || !candidate.evictable ||
        !record->on_ledger ||
        (!group.empty() && query.disruptions_left.find(group)->second == 0)) {
      ++space.dropped;
      continue;
    }
    Victim victim{.record = record, .priority = candidate.priority};
    if (!FillReleases(node, space.usable_mask, host_short, victim)) {
      ++space.dropped;
      continue;
    }
    victim.freed_milli = PodShareMilli(node, victim.uid());
    if (!group.empty()) {
      auto [it, added] = group_index.emplace(group, space.group_left.size());
      if (added) {
        space.group_left.push_back(query.disruptions_left.find(group)->second);
      }
      victim.group = it->second;
    }
    space.victims.push_back(std::move(victim));
  }
  std::sort(space.victims.begin(), space.victims.end(),
            [](const Victim& a, const Victim& b) {
              return std::tie(a.priority, a.freed_milli, a.uid()) <
                     std::tie(b.priority, b.freed_milli, b.uid());
            });
  return space;
}

}  // namespace deviceshare::preemption::internal
