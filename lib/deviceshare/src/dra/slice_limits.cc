#include "deviceshare/dra/slice_limits.h"

#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "dra/api_names.h"

namespace deviceshare::dra {
namespace {

absl::Status Invalid(absl::string_view path, absl::string_view value,
                     absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat(path, ": \"", value, "\" ", why));
}

absl::Status CheckPolicy(const std::string& path, const DeviceCapacity& cap) {
  const RequestPolicy& policy = *cap.policy;
  if (!policy.valid_values.empty()) {
    if (policy.valid_values.size() > kMaxValidValues) {
      return Invalid(path + ".validValues",
                     absl::StrCat(policy.valid_values.size()),
                     "values, more than 10");
    }
    bool listed = false;
    for (size_t i = 0; i < policy.valid_values.size(); ++i) {
      if (i > 0 && policy.valid_values[i] <= policy.valid_values[i - 1]) {
        return Invalid(absl::StrCat(path, ".validValues[", i, "]"),
                       absl::StrCat(policy.valid_values[i]),
                       "is not above the value before it");
      }
      listed |= policy.valid_values[i] == policy.default_value;
    }
    if (!listed) {
      return Invalid(path + ".default", absl::StrCat(policy.default_value),
                     "is not one of validValues");
    }
    return absl::OkStatus();
  }
  if (policy.min > policy.max || policy.max > cap.value) {
    return Invalid(path + ".validRange",
                   absl::StrCat(policy.min, "..", policy.max),
                   absl::StrCat("is not a range within the value ", cap.value));
  }
  if (policy.default_value < policy.min || policy.default_value > policy.max) {
    return Invalid(path + ".default", absl::StrCat(policy.default_value),
                   "is outside validRange");
  }
  if (policy.step > 0) {
    if (policy.max % policy.step != 0 ||
        policy.default_value % policy.step != 0) {
      return Invalid(path + ".validRange.step", absl::StrCat(policy.step),
                     "does not divide max and default");
    }
    if (policy.min + policy.step > cap.value) {
      return Invalid(path + ".validRange.min", absl::StrCat(policy.min),
                     "plus step exceeds the value");
    }
  }
  return absl::OkStatus();
}

absl::Status CheckDevice(const std::string& path, const Device& device,
                         const std::set<std::string>& counter_sets) {
  if (!IsDnsLabel(device.name)) {
    return Invalid(path + ".name", device.name, "is not a DNS label");
  }
  const size_t entries = device.attributes.size() + device.capacity.size();
  if (entries > kMaxAttributesAndCapacitiesPerDevice) {
    return Invalid(path, device.name,
                   absl::StrCat("has ", entries,
                                " attributes and capacities, more than 32"));
  }
  for (const auto& [name, attribute] : device.attributes) {
    const std::string at = absl::StrCat(path, ".attributes[", name, "]");
    if (!IsQualifiedName(name)) {
      return Invalid(at, name, "is not a qualified name");
    }
    if ((attribute.kind == DeviceAttribute::Kind::kString ||
         attribute.kind == DeviceAttribute::Kind::kVersion) &&
        attribute.text.size() > kMaxAttributeValueLength) {
      return Invalid(at, attribute.text, "is longer than 64 characters");
    }
  }
  for (const auto& [name, cap] : device.capacity) {
    const std::string at = absl::StrCat(path, ".capacity[", name, "]");
    if (!IsQualifiedName(name)) {
      return Invalid(at, name, "is not a qualified name");
    }
    if (cap.policy.has_value()) {
      if (!device.allow_multiple_allocations) {
        return Invalid(at + ".requestPolicy", device.name,
                       "is set on a device without allowMultipleAllocations");
      }
      if (absl::Status status = CheckPolicy(at + ".requestPolicy", cap);
          !status.ok()) {
        return status;
      }
    }
  }
  if (device.consumes_counters.size() > kMaxConsumptionsPerDevice) {
    return Invalid(path + ".consumesCounters", device.name,
                   "consumes from more than 32 counter sets");
  }
  for (const CounterConsumption& consumption : device.consumes_counters) {
    if (!counter_sets.contains(consumption.counter_set)) {
      return Invalid(path + ".consumesCounters", consumption.counter_set,
                     "is not a counter set of this slice");
    }
  }
  return absl::OkStatus();
}

}  // namespace

int ConsumedCounterCount(const Device& device) {
  int count = 0;
  for (const CounterConsumption& c : device.consumes_counters) {
    count += static_cast<int>(c.counters.size());
  }
  return count;
}

int CounterCount(const CounterSet& set) {
  return static_cast<int>(set.counters.size());
}

absl::Status CheckSliceLimits(const ResourceSlice& slice) {
  if (slice.devices.size() > kMaxDevicesPerSlice) {
    return Invalid("spec.devices", absl::StrCat(slice.devices.size()),
                   "devices, more than 128");
  }
  std::set<std::string> counter_sets;
  int counters = 0;
  for (size_t i = 0; i < slice.shared_counters.size(); ++i) {
    const CounterSet& set = slice.shared_counters[i];
    const std::string path = absl::StrCat("spec.sharedCounters[", i, "]");
    if (!IsDnsLabel(set.name) || !counter_sets.insert(set.name).second) {
      return Invalid(path + ".name", set.name, "is not a unique DNS label");
    }
    for (const auto& [name, counter] : set.counters) {
      if (!IsDnsLabel(name)) {
        return Invalid(path + ".counters", name, "is not a DNS label");
      }
    }
    counters += CounterCount(set);
  }
  if (counters > kMaxCountersPerSlice) {
    return Invalid("spec.sharedCounters", absl::StrCat(counters),
                   "counters, more than 32");
  }
  std::set<std::string> names;
  int consumed = 0;
  for (size_t i = 0; i < slice.devices.size(); ++i) {
    const Device& device = slice.devices[i];
    const std::string path = absl::StrCat("spec.devices[", i, "]");
    if (absl::Status status = CheckDevice(path, device, counter_sets);
        !status.ok()) {
      return status;
    }
    if (!names.insert(device.name).second) {
      return Invalid(path + ".name", device.name, "is not unique");
    }
    consumed += ConsumedCounterCount(device);
  }
  if (consumed > kMaxConsumedCountersPerSlice) {
    return Invalid("spec.devices", absl::StrCat(consumed),
                   "consumed counters, more than 1024");
  }
  return absl::OkStatus();
}

}  // namespace deviceshare::dra
