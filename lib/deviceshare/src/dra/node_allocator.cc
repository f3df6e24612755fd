#include "deviceshare/dra/node_allocator.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "deviceshare/dra/attribute_constraint.h"
#include "deviceshare/status_macros.h"
#include "dra/allocation_search.h"

namespace deviceshare::dra {

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
    for (const auto& [name, amount] : result.consumed) {
      verdict.consumed[name] = amount.value;
    }
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
    std::map<std::string, int64_t> consumed;
    for (const auto& [name, amount] : result.consumed) {
      consumed[name] = amount.value;
    }
    usage_[p].Give(*device->device, consumed);
  }
}

absl::StatusOr<ClaimsVerdict> NodeAllocator::Allocate(
    const std::vector<const ResourceClaim*>& claims, bool commit) {
  AllocationSearch search(node_name_, pools_, usage_, *classes_, *cel_,
                          options_, *memo_);
  DS_RETURN_IF_ERROR(search.Plan(claims));
  ClaimsVerdict verdict = search.Run();
  if (!verdict.fits || !commit) search.Undo();
  return verdict;
}

}  // namespace deviceshare::dra
