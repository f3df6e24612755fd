#include "deviceshare/dra/pool_usage.h"

#include "absl/strings/str_cat.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::dra {

absl::StatusOr<PoolUsage> PoolUsage::Create(const NodePool& pool) {
  PoolUsage usage;
  for (const ResourceSlice* slice : pool.slices) {
    for (const CounterSet& set : slice->shared_counters) {
      DS_RETURN_IF_ERROR(usage.counters_.AddSet(set));
    }
  }
  return usage;
}

CapacityVerdict PoolUsage::Check(
    const Device& device,
    const std::map<std::string, int64_t>& requests) const {
  const int holders = Holders(device.name);
  if (!device.allow_multiple_allocations && holders > 0) {
    CapacityVerdict taken;
    taken.reason = absl::StrCat(device.name, " is allocated");
    return taken;
  }
  // Counters are charged by the first allocation only.
  if (holders == 0) {
    std::string why;
    if (!counters_.Fits(device, &why)) {
      CapacityVerdict short_of;
      short_of.reason = std::move(why);
      return short_of;
    }
  }
  return ConsumeCapacity(device, requests, InUse(device.name));
}

void PoolUsage::Take(const Device& device, const CapacityVerdict& verdict) {
  DeviceUse& use = devices_[device.name];
  if (use.holders == 0) counters_.Take(device);
  ++use.holders;
  for (const auto& [name, amount] : verdict.consumed) {
    use.consumed[name] += amount;
  }
}

void PoolUsage::Give(const Device& device,
                     const std::map<std::string, int64_t>& consumed) {
  auto it = devices_.find(device.name);
  if (it == devices_.end() || it->second.holders == 0) return;
  DeviceUse& use = it->second;
  for (const auto& [name, amount] : consumed) use.consumed[name] -= amount;
  if (--use.holders == 0) {
    counters_.Give(device);
    devices_.erase(it);
  }
}

const std::map<std::string, int64_t>& PoolUsage::InUse(
    const std::string& device) const {
  static const std::map<std::string, int64_t> kNothing;
  auto it = devices_.find(device);
  return it == devices_.end() ? kNothing : it->second.consumed;
}

int PoolUsage::Holders(const std::string& device) const {
  auto it = devices_.find(device);
  return it == devices_.end() ? 0 : it->second.holders;
}

void PoolUsage::AddUtilisation(const NodePool& pool, int64_t* permille_sum,
                               int64_t* units) const {
  for (const auto& [set, permille] : counters_.UsedPermille()) {
    *permille_sum += permille;
    ++*units;
  }
  for (const PoolDevice& entry : pool.devices) {
    const Device& device = *entry.device;
    if (!device.consumes_counters.empty()) continue;
    ++*units;
    const int holders = Holders(device.name);
    if (holders == 0) continue;
    if (!device.allow_multiple_allocations || device.capacity.empty()) {
      *permille_sum += 1000;
      continue;
    }
    const auto& in_use = InUse(device.name);
    int64_t sum = 0;
    int64_t counted = 0;
    for (const auto& [name, capacity] : device.capacity) {
      if (capacity.value <= 0) continue;
      auto used = in_use.find(name);
      if (used != in_use.end()) sum += used->second * 1000 / capacity.value;
      ++counted;
    }
    *permille_sum += counted == 0 ? 1000 : sum / counted;
  }
}

}  // namespace deviceshare::dra
