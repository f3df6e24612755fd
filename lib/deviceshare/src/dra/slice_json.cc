#include "deviceshare/dra/slice_json.h"

#include "absl/strings/str_cat.h"

namespace deviceshare::dra {
namespace {

using nlohmann::json;

json AttributeToJson(const DeviceAttribute& attribute) {
  switch (attribute.kind) {
    case DeviceAttribute::Kind::kInt:
      return {{"int", attribute.int_value}};
    case DeviceAttribute::Kind::kBool:
      return {{"bool", attribute.bool_value}};
    case DeviceAttribute::Kind::kVersion:
      return {{"version", attribute.text}};
    case DeviceAttribute::Kind::kString:
      break;
  }
  return {{"string", attribute.text}};
}

json PolicyToJson(const RequestPolicy& policy, QuantityFormat format) {
  json out = {{"default", FormatQuantity(policy.default_value, format)}};
  if (!policy.valid_values.empty()) {
    json values = json::array();
    for (int64_t value : policy.valid_values) {
      values.push_back(FormatQuantity(value, format));
    }
    out["validValues"] = std::move(values);
    return out;
  }
  json range = {{"min", FormatQuantity(policy.min, format)},
                {"max", FormatQuantity(policy.max, format)}};
  if (policy.step > 0) range["step"] = FormatQuantity(policy.step, format);
  out["validRange"] = std::move(range);
  return out;
}

json CountersToJson(const std::map<std::string, Counter>& counters) {
  json out = json::object();
  for (const auto& [name, counter] : counters) {
    out[name] = {{"value", FormatQuantity(counter.value, counter.format)}};
  }
  return out;
}

json DeviceToJson(const Device& device) {
  json out = {{"name", device.name}};
  if (device.allow_multiple_allocations) {
    out["allowMultipleAllocations"] = true;
  }
  if (!device.attributes.empty()) {
    json& attributes = out["attributes"] = json::object();
    for (const auto& [name, attribute] : device.attributes) {
      attributes[name] = AttributeToJson(attribute);
    }
  }
  if (!device.capacity.empty()) {
    json& capacity = out["capacity"] = json::object();
    for (const auto& [name, cap] : device.capacity) {
      json entry = {{"value", FormatQuantity(cap.value, cap.format)}};
      if (cap.policy.has_value()) {
        entry["requestPolicy"] = PolicyToJson(*cap.policy, cap.format);
      }
      capacity[name] = std::move(entry);
    }
  }
  if (!device.consumes_counters.empty()) {
    json& consumes = out["consumesCounters"] = json::array();
    for (const CounterConsumption& consumption : device.consumes_counters) {
      consumes.push_back({{"counterSet", consumption.counter_set},
                          {"counters", CountersToJson(consumption.counters)}});
    }
  }
  return out;
}

}  // namespace

std::string FormatQuantity(int64_t value, QuantityFormat format) {
  if (format == QuantityFormat::kBinary && value != 0) {
    static constexpr const char* kSuffixes[] = {"Ei", "Pi", "Ti",
                                                "Gi", "Mi", "Ki"};
    int64_t unit = int64_t{1} << 60;
    for (const char* suffix : kSuffixes) {
      if (value % unit == 0) return absl::StrCat(value / unit, suffix);
      unit >>= 10;
    }
  }
  return absl::StrCat(value);
}

nlohmann::json ResourceSliceToJson(const ResourceSlice& slice) {
  json spec = {{"driver", slice.driver},
               {"nodeName", slice.node_name},
               {"pool",
                {{"name", slice.pool.name},
                 {"generation", slice.pool.generation},
                 {"resourceSliceCount", slice.pool.resource_slice_count}}}};
  if (!slice.shared_counters.empty()) {
    json& sets = spec["sharedCounters"] = json::array();
    for (const CounterSet& set : slice.shared_counters) {
      sets.push_back(
          {{"name", set.name}, {"counters", CountersToJson(set.counters)}});
    }
  }
  // A counter-set slice has no devices list at all: the API server takes
  // an empty list as set and refuses it beside sharedCounters.
  if (!slice.devices.empty() || slice.shared_counters.empty()) {
    json& devices = spec["devices"] = json::array();
    for (const Device& device : slice.devices) {
      devices.push_back(DeviceToJson(device));
    }
  }
  return {{"apiVersion", kResourceApiVersion},
          {"kind", "ResourceSlice"},
          {"metadata", {{"name", slice.name}}},
          {"spec", std::move(spec)}};
}

}  // namespace deviceshare::dra
