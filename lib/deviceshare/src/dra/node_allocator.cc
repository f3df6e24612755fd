#include "deviceshare/dra/node_allocator.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "deviceshare/dra/attribute_constraint.h"
#include "deviceshare/status_macros.h"
#include "dra/allocation_search.h"

namespace deviceshare::dra {
namespace {

// Whether `result` (what a share consumes, as Try() found it) still fits
// the device's capacity and counters; the verdict carries its amounts.
CapacityVerdict ConsumedFits(const Device& device, const PoolUsage& usage,
                             const DeviceResult& result) {
  CapacityVerdict verdict;
  if (!device.allow_multiple_allocations) {
    if (usage.Holders(device.name) > 0) {
      verdict.reason = absl::StrCat(device.name, " is allocated");
      return verdict;
    }
  }
  std::string why;
  if (usage.Holders(device.name) == 0 && !usage.counters().Fits(device, &why)) {
    verdict.reason = std::move(why);
    return verdict;
  }
  const auto& in_use = usage.InUse(device.name);
  for (const auto& [name, amount] : result.consumed) {
    auto cap = device.capacity.find(name);
    if (cap == device.capacity.end()) {
      verdict.reason = absl::StrCat(name, ": not a capacity of ", device.name);
      return verdict;
    }
    auto used = in_use.find(name);
    const int64_t held = used == in_use.end() ? 0 : used->second;
    if (held + amount.value > cap->second.value) {
      verdict.reason = absl::StrCat(name, ": ", amount.value, " asked, ",
                                    cap->second.value - held, " left");
      return verdict;
    }
    verdict.consumed[name] = amount.value;
  }
  verdict.fits = true;
  return verdict;
}

// What an allocation made elsewhere holds of `device`: its consumedCapacity;
// or, for a device allocated whole (no share id) that its slice has since
// made multi-allocatable, every capacity in full, so that no share fits
// beside it (1.34 keeps such a device "in use").
std::map<std::string, int64_t> HeldAmounts(const Device& device,
                                           const DeviceResult& result) {
  std::map<std::string, int64_t> held;
  for (const auto& [name, amount] : result.consumed) held[name] = amount.value;
  if (device.allow_multiple_allocations && result.share_id.empty() &&
      held.empty()) {
    for (const auto& [name, capacity] : device.capacity) {
      held[name] = capacity.value;
    }
  }
  return held;
}

}  // namespace

absl::StatusOr<std::unique_ptr<NodeAllocator>> NodeAllocator::Create(
    std::string node_name, const std::vector<const ResourceSlice*>& slices,
    const std::map<std::string, DeviceClass>* classes, CelCache* cel,
    AllocatorOptions options) {
  std::unique_ptr<NodeAllocator> allocator(new NodeAllocator());
  allocator->node_name_ = std::move(node_name);
  allocator->pools_ = GatherPools(slices);
  for (const NodePool& pool : allocator->pools_.pools) {
    DS_ASSIGN_OR_RETURN(PoolUsage usage, PoolUsage::Create(pool));
    allocator->usage_.push_back(std::move(usage));
  }
  allocator->memo_ = std::make_unique<SelectorMemo>();
  allocator->classes_ = classes;
  allocator->cel_ = cel;
  allocator->options_ = std::move(options);
  if (!allocator->options_.new_share_id) {
    return absl::InvalidArgumentError("AllocatorOptions.new_share_id: unset");
  }
  return allocator;
}

NodeAllocator::~NodeAllocator() = default;

const PoolDevice* NodeAllocator::Find(const std::string& driver,
                                      const std::string& pool,
                                      const std::string& name,
                                      size_t* pool_index) const {
  for (size_t p = 0; p < pools_.pools.size(); ++p) {
    const NodePool& candidate = pools_.pools[p];
    if (candidate.driver != driver || candidate.name != pool) continue;
    for (const PoolDevice& device : candidate.devices) {
      if (device.device->name == name) {
        *pool_index = p;
        return &device;
      }
    }
  }
  return nullptr;
}

absl::Status NodeAllocator::Charge(const AllocationResult& allocation) {
  for (const DeviceResult& result : allocation.results) {
    if (result.admin_access) continue;
    size_t p = 0;
    const PoolDevice* device =
        Find(result.driver, result.pool, result.device, &p);
    if (device == nullptr) {
      return absl::NotFoundError(absl::StrCat("device ", result.driver, "/",
                                              result.pool, "/", result.device,
                                              " is not on node ", node_name_));
    }
    CapacityVerdict verdict;
    verdict.fits = true;
    verdict.consumed = HeldAmounts(*device->device, result);
    usage_[p].Take(*device->device, verdict);
  }
  return absl::OkStatus();
}

void NodeAllocator::Release(const AllocationResult& allocation) {
  for (const DeviceResult& result : allocation.results) {
    if (result.admin_access) continue;
    size_t p = 0;
    const PoolDevice* device =
        Find(result.driver, result.pool, result.device, &p);
    if (device == nullptr) continue;
    usage_[p].Give(*device->device, HeldAmounts(*device->device, result));
  }
}

absl::StatusOr<ClaimsVerdict> NodeAllocator::Allocate(
    const std::vector<const ResourceClaim*>& claims, bool commit) {
  AllocationSearch search(node_name_, pools_, usage_, *classes_, *cel_,
                          options_, options_.order, *memo_);
  DS_RETURN_IF_ERROR(search.Plan(claims));
  ClaimsVerdict verdict = search.Run();
  if (verdict.fits) verdict.utilisation_after = Utilisation(usage_);
  if (!verdict.fits || !commit) search.Undo();
  return verdict;
}

absl::StatusOr<ClaimsVerdict> NodeAllocator::Try(
    const std::vector<const ResourceClaim*>& claims, DeviceOrder order) const {
  std::vector<PoolUsage> scratch = usage_;
  // Share ids are given at Commit(): a tried allocation may never be.
  AllocatorOptions options = options_;
  options.new_share_id = nullptr;
  AllocationSearch search(node_name_, pools_, scratch, *classes_, *cel_,
                          options, order, *memo_);
  DS_RETURN_IF_ERROR(search.Plan(claims));
  ClaimsVerdict verdict = search.Run();
  if (verdict.fits) verdict.utilisation_after = Utilisation(scratch);
  return verdict;
}

absl::Status NodeAllocator::Commit(std::vector<AllocationResult>& allocations) {
  struct Taken {
    size_t pool;
    const Device* device;
    std::map<std::string, int64_t> consumed;
  };
  std::vector<Taken> taken;
  auto roll_back = [&] {
    for (auto it = taken.rbegin(); it != taken.rend(); ++it) {
      usage_[it->pool].Give(*it->device, it->consumed);
    }
  };
  for (AllocationResult& allocation : allocations) {
    for (DeviceResult& result : allocation.results) {
      if (result.admin_access) continue;
      size_t p = 0;
      const PoolDevice* device =
          Find(result.driver, result.pool, result.device, &p);
      if (device == nullptr) {
        roll_back();
        return absl::NotFoundError(
            absl::StrCat("device ", result.driver, "/", result.pool, "/",
                         result.device, " is not on node ", node_name_));
      }
      // The room check uses what the result consumes, not a re-rounding.
      CapacityVerdict verdict =
          ConsumedFits(*device->device, usage_[p], result);
      if (!verdict.fits) {
        roll_back();
        return absl::FailedPreconditionError(
            absl::StrCat("device ", result.pool, "/", result.device,
                         " no longer has the room: ", verdict.reason));
      }
      usage_[p].Take(*device->device, verdict);
      taken.push_back(Taken{p, device->device, verdict.consumed});
    }
  }
  for (AllocationResult& allocation : allocations) {
    for (DeviceResult& result : allocation.results) {
      size_t p = 0;
      const PoolDevice* device =
          Find(result.driver, result.pool, result.device, &p);
      if (result.share_id.empty() && !result.admin_access &&
          device->device->allow_multiple_allocations) {
        result.share_id = options_.new_share_id();
      }
    }
  }
  return absl::OkStatus();
}

int NodeAllocator::UtilisationPercent() const { return Utilisation(usage_); }

GpuTotals& GpuTotals::operator+=(const GpuTotals& other) {
  devices += other.devices;
  idle += other.idle;
  memory_capacity += other.memory_capacity;
  memory_used += other.memory_used;
  core_capacity += other.core_capacity;
  cores_used += other.cores_used;
  return *this;
}

GpuTotals NodeAllocator::Totals() const {
  GpuTotals totals;
  for (size_t p = 0; p < pools_.pools.size(); ++p) {
    for (const PoolDevice& entry : pools_.pools[p].devices) {
      const Device& device = *entry.device;
      if (!device.consumes_counters.empty()) continue;
      ++totals.devices;
      const bool held = usage_[p].Holders(device.name) > 0;
      if (!held) ++totals.idle;
      const auto& in_use = usage_[p].InUse(device.name);
      auto used_of = [&](const std::string& name, int64_t whole) -> int64_t {
        if (!held) return 0;
        if (!device.allow_multiple_allocations) return whole;
        auto it = in_use.find(name);
        return it == in_use.end() ? 0 : it->second;
      };
      auto memory = device.capacity.find("memory");
      if (memory != device.capacity.end()) {
        totals.memory_capacity += memory->second.value;
        totals.memory_used += used_of("memory", memory->second.value);
      }
      auto cores = device.capacity.find("cores");
      const int64_t core_capacity =
          cores == device.capacity.end() ? 100 : cores->second.value;
      totals.core_capacity += core_capacity;
      totals.cores_used += cores == device.capacity.end()
                               ? (held ? 100 : 0)
                               : used_of("cores", core_capacity);
    }
  }
  return totals;
}

int NodeAllocator::Utilisation(const std::vector<PoolUsage>& usage) const {
  int64_t permille = 0;
  int64_t units = 0;
  for (size_t p = 0; p < pools_.pools.size(); ++p) {
    usage[p].AddUtilisation(pools_.pools[p], &permille, &units);
  }
  return units == 0 ? 0 : static_cast<int>(permille / units / 10);
}

}  // namespace deviceshare::dra
