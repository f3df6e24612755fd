#include "deviceshare/dra/consumable_capacity.h"

#include <algorithm>
#include <optional>

#include "absl/strings/str_cat.h"

namespace deviceshare::dra {
namespace {

// Rounds `amount` up to min + n * step.
int64_t RoundUpToStep(int64_t amount, int64_t min, int64_t step) {
  if (step <= 0 || amount <= min) return std::max(amount, min);
  const int64_t steps = (amount - min + step - 1) / step;
  return min + steps * step;
}

}  // namespace

std::optional<int64_t> RoundedAmount(const DeviceCapacity& capacity,
                                     std::optional<int64_t> requested,
                                     std::string* why) {
  if (!capacity.policy.has_value()) {
    return requested.value_or(capacity.value);
  }
  const RequestPolicy& policy = *capacity.policy;
  if (!requested.has_value()) return policy.default_value;
  const int64_t asked = *requested;
  if (!policy.valid_values.empty()) {
    for (int64_t value : policy.valid_values) {
      if (value >= asked) return value;
    }
    *why = absl::StrCat(asked, " is above every valid value");
    return std::nullopt;
  }
  const int64_t rounded = RoundUpToStep(asked, policy.min, policy.step);
  if (rounded > policy.max) {
    *why = absl::StrCat(asked, " rounds to ", rounded, ", above the maximum ",
                        policy.max);
    return std::nullopt;
  }
  return rounded;
}

CapacityVerdict ConsumeCapacity(const Device& device,
                                const std::map<std::string, int64_t>& requests,
                                const std::map<std::string, int64_t>& in_use) {
  CapacityVerdict verdict;
  for (const auto& [name, amount] : requests) {
    auto it = device.capacity.find(name);
    if (it == device.capacity.end()) {
      verdict.reason = absl::StrCat(name, ": not a capacity of ", device.name);
      return verdict;
    }
    if (!device.allow_multiple_allocations && it->second.value < amount) {
      verdict.reason = absl::StrCat(
          name, ": ", amount, " asked, the device has ", it->second.value);
      return verdict;
    }
  }
  if (!device.allow_multiple_allocations) {
    verdict.fits = true;
    return verdict;
  }
  for (const auto& [name, capacity] : device.capacity) {
    auto asked = requests.find(name);
    std::string why;
    std::optional<int64_t> amount = RoundedAmount(
        capacity,
        asked == requests.end() ? std::nullopt
                                : std::optional<int64_t>(asked->second),
        &why);
    if (!amount.has_value()) {
      verdict.reason = absl::StrCat(name, ": ", why);
      verdict.consumed.clear();
      return verdict;
    }
    auto used = in_use.find(name);
    const int64_t held = used == in_use.end() ? 0 : used->second;
    if (held + *amount > capacity.value) {
      verdict.reason = absl::StrCat(name, ": ", *amount, " needed, ",
                                    capacity.value - held, " left");
      verdict.consumed.clear();
      return verdict;
    }
    verdict.consumed[name] = *amount;
  }
  verdict.fits = true;
  return verdict;
}

}  // namespace deviceshare::dra
