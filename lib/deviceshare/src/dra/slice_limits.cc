#include "deviceshare/dra/slice_limits.h"

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
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

// The counters of a counter set or of a consumption: some, at most `max`,
// named by DNS labels. `owner` names what holds them in the message.
absl::Status CheckCounters(const std::string& path,
                           const std::map<std::string, Counter>& counters,
                           size_t max, const std::string& owner) {
  if (counters.empty()) return Invalid(path, owner, "has no counters");
  if (counters.size() > max) {
    return Invalid(path, absl::StrCat(counters.size()),
                   absl::StrCat("counters, more than ", max));
  }
  for (const auto& [name, counter] : counters) {
    if (!IsDnsLabel(name)) return Invalid(path, name, "is not a DNS label");
  }
  return absl::OkStatus();
}

absl::Status CheckAttributes(const std::string& path, const Device& device) {
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
  return absl::OkStatus();
}

absl::Status CheckCapacities(const std::string& path, const Device& device) {
  for (const auto& [name, cap] : device.capacity) {
    const std::string at = absl::StrCat(path, ".capacity[", name, "]");
    if (!IsQualifiedName(name)) {
      return Invalid(at, name, "is not a qualified name");
    }
    if (!cap.policy.has_value()) continue;
    if (!device.allow_multiple_allocations) {
      return Invalid(at + ".requestPolicy", device.name,
                     "is set on a device without allowMultipleAllocations");
    }
    if (absl::Status status = CheckPolicy(at + ".requestPolicy", cap);
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

// At most two entries, one per counter set; which sets exist is a pool
// matter (CheckPoolCounters), not one slice's.
absl::Status CheckConsumptions(const std::string& path, const Device& device) {
  if (device.consumes_counters.size() > kMaxConsumptionsPerDevice) {
    return Invalid(path + ".consumesCounters", device.name,
                   "consumes from more than 2 counter sets");
  }
  std::set<std::string> sets;
  for (size_t j = 0; j < device.consumes_counters.size(); ++j) {
    const CounterConsumption& use = device.consumes_counters[j];
    const std::string at = absl::StrCat(path, ".consumesCounters[", j, "]");
    if (!IsDnsLabel(use.counter_set)) {
      return Invalid(at + ".counterSet", use.counter_set, "is not a DNS label");
    }
    if (!sets.insert(use.counter_set).second) {
      return Invalid(at + ".counterSet", use.counter_set,
                     "is consumed from twice");
    }
    if (absl::Status status =
            CheckCounters(at + ".counters", use.counters,
                          kMaxCountersPerConsumption, use.counter_set);
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

absl::Status CheckDevice(const std::string& path, const Device& device) {
  if (!IsDnsLabel(device.name)) {
    return Invalid(path + ".name", device.name, "is not a DNS label");
  }
  const size_t entries = device.attributes.size() + device.capacity.size();
  if (entries > kMaxAttributesAndCapacitiesPerDevice) {
    return Invalid(path, device.name,
                   absl::StrCat("has ", entries,
                                " attributes and capacities, more than 32"));
  }
  if (absl::Status status = CheckAttributes(path, device); !status.ok()) {
    return status;
  }
  if (absl::Status status = CheckCapacities(path, device); !status.ok()) {
    return status;
  }
  return CheckConsumptions(path, device);
}

absl::Status CheckCounterSets(const ResourceSlice& slice) {
  if (slice.shared_counters.size() > kMaxCounterSetsPerSlice) {
    return Invalid("spec.sharedCounters",
                   absl::StrCat(slice.shared_counters.size()),
                   "counter sets, more than 8");
  }
  std::set<std::string> names;
  for (size_t i = 0; i < slice.shared_counters.size(); ++i) {
    const CounterSet& set = slice.shared_counters[i];
    const std::string path = absl::StrCat("spec.sharedCounters[", i, "]");
    if (!IsDnsLabel(set.name) || !names.insert(set.name).second) {
      return Invalid(path + ".name", set.name, "is not a unique DNS label");
    }
    if (absl::Status status =
            CheckCounters(path + ".counters", set.counters,
                          kMaxCountersPerCounterSet, set.name);
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

absl::Status CheckDevices(const ResourceSlice& slice) {
  const int max_devices = MaxDevicesPerSlice(slice.devices);
  if (slice.devices.size() > static_cast<size_t>(max_devices)) {
    return Invalid(
        "spec.devices", absl::StrCat(slice.devices.size()),
        absl::StrCat("devices, more than ", max_devices,
                     max_devices == kMaxDevicesPerSlice
                         ? ""
                         : " in a slice whose devices consume counters"));
  }
  std::set<std::string> names;
  for (size_t i = 0; i < slice.devices.size(); ++i) {
    const Device& device = slice.devices[i];
    const std::string path = absl::StrCat("spec.devices[", i, "]");
    if (absl::Status status = CheckDevice(path, device); !status.ok()) {
      return status;
    }
    if (!names.insert(device.name).second) {
      return Invalid(path + ".name", device.name, "is not unique");
    }
  }
  return absl::OkStatus();
}

// What one device consumes, against the pool's counter sets.
absl::Status CheckReferences(
    const ResourceSlice& slice, size_t i,
    const std::map<std::string, const CounterSet*>& sets) {
  const Device& device = slice.devices[i];
  for (size_t j = 0; j < device.consumes_counters.size(); ++j) {
    const CounterConsumption& use = device.consumes_counters[j];
    const std::string at = absl::StrCat(slice.name, ": spec.devices[", i,
                                        "].consumesCounters[", j, "]");
    auto set = sets.find(use.counter_set);
    if (set == sets.end()) {
      return Invalid(at + ".counterSet", use.counter_set,
                     absl::StrCat("is not a counter set of pool \"",
                                  slice.pool.name, "\""));
    }
    for (const auto& [name, counter] : use.counters) {
      if (!set->second->counters.contains(name)) {
        return Invalid(
            at + ".counters", name,
            absl::StrCat("is not a counter of set \"", use.counter_set, "\""));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool UsesAdvancedFeatures(const Device& device) {
  return !device.consumes_counters.empty();
}

int MaxDevicesPerSlice(const std::vector<Device>& devices) {
  for (const Device& device : devices) {
    if (UsesAdvancedFeatures(device)) {
      return kMaxDevicesPerSliceWithAdvancedFeatures;
    }
  }
  return kMaxDevicesPerSlice;
}

absl::Status CheckSliceLimits(const ResourceSlice& slice) {
  if (!slice.shared_counters.empty() && !slice.devices.empty()) {
    return Invalid("spec", "",
                   "only one of `sharedCounters` or `devices` is allowed");
  }
  if (absl::Status status = CheckCounterSets(slice); !status.ok()) {
    return status;
  }
  return CheckDevices(slice);
}

absl::Status CheckPoolCounters(const std::vector<ResourceSlice>& pool) {
  std::map<std::string, const CounterSet*> sets;
  for (const ResourceSlice& slice : pool) {
    if (slice.driver != pool.front().driver ||
        slice.pool.name != pool.front().pool.name) {
      return Invalid(absl::StrCat(slice.name, ": spec.pool.name"),
                     slice.pool.name,
                     absl::StrCat("is not pool \"", pool.front().pool.name,
                                  "\" of driver ", pool.front().driver));
    }
    for (size_t i = 0; i < slice.shared_counters.size(); ++i) {
      const CounterSet& set = slice.shared_counters[i];
      if (!sets.emplace(set.name, &set).second) {
        return Invalid(
            absl::StrCat(slice.name, ": spec.sharedCounters[", i, "].name"),
            set.name,
            absl::StrCat("is defined twice in pool \"", slice.pool.name, "\""));
      }
    }
  }
  for (const ResourceSlice& slice : pool) {
    for (size_t i = 0; i < slice.devices.size(); ++i) {
      if (absl::Status status = CheckReferences(slice, i, sets); !status.ok()) {
        return status;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace deviceshare::dra
