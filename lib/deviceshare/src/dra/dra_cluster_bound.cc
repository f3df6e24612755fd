// DraCluster's search bounds (dra/dra_cluster.h: Bound): per node a load
// summary refreshed whenever its usage changes, and per device profile the
// most a request can add to its node's utilisation.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "deviceshare/dra/consumable_capacity.h"
#include "deviceshare/dra/dra_cluster.h"

namespace deviceshare::dra {

int DraCluster::ProfileOf(const Device& device) {
  DeviceProfile profile{device.allow_multiple_allocations,
                        !device.consumes_counters.empty(), device.capacity};
  for (size_t i = 0; i < profiles_.size(); ++i) {
    if (profiles_[i] == profile) return static_cast<int>(i);
  }
  profiles_.push_back(std::move(profile));
  return static_cast<int>(profiles_.size() - 1);
}

DraCluster::NodeLoad DraCluster::LoadOf(const NodeAllocator& allocator) {
  NodeLoad load;
  const NodePools& pools = allocator.pools();
  for (size_t p = 0; p < pools.pools.size(); ++p) {
    const PoolUsage& usage = allocator.usage()[p];
    usage.AddUtilisation(pools.pools[p], &load.permille_sum, &load.units);
    for (const PoolDevice& entry : pools.pools[p].devices) {
      const Device& device = *entry.device;
      ++load.devices;
      const int profile = ProfileOf(device);
      if (std::find(load.profiles.begin(), load.profiles.end(), profile) ==
          load.profiles.end()) {
        load.profiles.push_back(profile);
      }
      if (!device.consumes_counters.empty()) {
        load.has_partitions = true;
        continue;
      }
      if (device.allow_multiple_allocations) {
        const auto& in_use = usage.InUse(device.name);
        for (const auto& [name, capacity] : device.capacity) {
          auto used = in_use.find(name);
          const int64_t left =
              capacity.value - (used == in_use.end() ? 0 : used->second);
          int64_t& most = load.shared_free[name];
          most = std::max(most, left);
        }
      } else if (usage.Holders(device.name) == 0) {
        load.any_idle_dedicated = true;
        for (const auto& [name, capacity] : device.capacity) {
          int64_t& most = load.idle_dedicated[name];
          most = std::max(most, capacity.value);
        }
      }
    }
  }
  return load;
}

void DraCluster::Refresh(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    auto it = nodes_.find(name);
    if (it == nodes_.end() || it->second.allocator == nullptr) continue;
    it->second.load = LoadOf(*it->second.allocator);
  }
}

bool DraCluster::RequestMayFit(const ExactRequest& request,
                               const NodeLoad& load) {
  if (request.mode == ExactRequest::kAll || request.capacity.empty() ||
      load.has_partitions) {
    return true;
  }
  auto all_within = [&](const std::map<std::string, int64_t>& most) {
    for (const auto& [name, amount] : request.capacity) {
      auto it = most.find(name);
      if (it == most.end() || it->second < amount) return false;
    }
    return true;
  };
  return all_within(load.shared_free) ||
         (load.any_idle_dedicated && all_within(load.idle_dedicated));
}

int64_t DraCluster::MostAdded(const ExactRequest& request,
                              const DeviceProfile& profile) {
  if (profile.partition || !profile.shared || profile.capacity.empty()) {
    return 1000;  // a whole unit at most
  }
  int64_t sum = 0;
  int64_t counted = 0;
  for (const auto& [name, capacity] : profile.capacity) {
    if (capacity.value <= 0) continue;
    auto asked = request.capacity.find(name);
    std::string why;
    std::optional<int64_t> amount = RoundedAmount(
        capacity,
        asked == request.capacity.end() ? std::nullopt
                                        : std::optional<int64_t>(asked->second),
        &why);
    if (!amount.has_value()) return 0;  // cannot serve the request
    sum += std::min<int64_t>(*amount, capacity.value) * 1000 / capacity.value;
    ++counted;
  }
  return counted == 0 ? 0 : sum / counted;
}

ClaimsBound DraCluster::Bound(const std::vector<const ResourceClaim*>& pending,
                              const std::string& node, BoundMemo& memo) const {
  ClaimsBound bound;
  auto it = nodes_.find(node);
  if (it == nodes_.end() || it->second.allocator == nullptr) {
    bound.may_fit = pending.empty();
    return bound;
  }
  const NodeLoad& load = it->second.load;
  if (load.units == 0) {
    bound.may_fit = pending.empty();
    return bound;
  }
  int64_t added = 0;
  for (const ResourceClaim* claim : pending) {
    for (const DeviceRequest& request : claim->spec.requests) {
      bool any = false;
      int64_t most = 0;
      auto consider = [&](const ExactRequest& exact) {
        if (!RequestMayFit(exact, load)) return;
        any = true;
        if (exact.mode == ExactRequest::kAll) {
          most = std::max(most, load.devices * 1000);
          return;
        }
        int64_t per_device = 0;
        for (int profile : load.profiles) {
          auto [cached, added] = memo.added.try_emplace({&exact, profile}, 0);
          if (added) cached->second = MostAdded(exact, profiles_[profile]);
          per_device = std::max(per_device, cached->second);
        }
        most = std::max(most, per_device * exact.count);
      };
      if (request.exactly) consider(*request.exactly);
      for (const SubRequest& sub : request.first_available) {
        consider(sub.exactly);
      }
      if (!any) {
        bound.may_fit = false;
        return bound;
      }
      added += most;
    }
  }
  bound.utilisation_now = static_cast<int>(load.permille_sum / load.units / 10);
  bound.utilisation_most = static_cast<int>(
      std::min<int64_t>(100, (load.permille_sum + added) / load.units / 10));
  return bound;
}

}  // namespace deviceshare::dra
