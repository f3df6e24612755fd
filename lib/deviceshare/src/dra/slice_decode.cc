#include "deviceshare/dra/slice_decode.h"

#include <limits>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "deviceshare/json_text.h"
#include "deviceshare/model/units.h"
#include "deviceshare/status_macros.h"
#include "dra/json_fields.h"

namespace deviceshare::dra {
namespace {

using json_fields::ArrayField;
using json_fields::Int64;
using json_fields::Invalid;
using json_fields::Join;
using json_fields::Member;
using json_fields::NotA;
using json_fields::ObjectField;
using json_fields::StringField;
using nlohmann::json;

absl::StatusOr<DeviceAttribute> DecodeAttribute(const json& value,
                                                const std::string& path) {
  if (!value.is_object()) return NotA(path, value, "an object");
  int kinds = 0;
  DeviceAttribute out;
  for (const char* key : {"int", "bool", "string", "version"}) {
    const json* field = Member(value, key);
    if (field == nullptr) continue;
    ++kinds;
    const std::string at = absl::StrCat(path, ".", key);
    if (key[0] == 'i') {
      DS_ASSIGN_OR_RETURN(int64_t number, Int64(*field, at));
      out = DeviceAttribute::Int(number);
    } else if (key[0] == 'b') {
      if (!field->is_boolean()) return NotA(at, *field, "a bool");
      out = DeviceAttribute::Bool(field->get<bool>());
    } else {
      if (!field->is_string()) return NotA(at, *field, "a string");
      out = key[0] == 's' ? DeviceAttribute::String(field->get<std::string>())
                          : DeviceAttribute::Version(field->get<std::string>());
    }
  }
  if (kinds != 1) {
    return Invalid(path, absl::StrCat(JsonText(value),
                                      " has not exactly one of int, bool, "
                                      "string and version"));
  }
  return out;
}

absl::StatusOr<int64_t> QuantityValue(const json& value,
                                      const std::string& path) {
  DS_ASSIGN_OR_RETURN(CapacityAmount amount, DecodeQuantity(value, path));
  return amount.value;
}

absl::StatusOr<RequestPolicy> DecodePolicy(const json& value,
                                           const std::string& path) {
  if (!value.is_object()) return NotA(path, value, "an object");
  RequestPolicy policy;
  if (const json* def = Member(value, "default"); def != nullptr) {
    DS_ASSIGN_OR_RETURN(policy.default_value,
                        QuantityValue(*def, path + ".default"));
  }
  DS_ASSIGN_OR_RETURN(const json* values,
                      ArrayField(value, path, "validValues"));
  DS_ASSIGN_OR_RETURN(const json* range,
                      ObjectField(value, path, "validRange", false));
  if (values != nullptr && range != nullptr) {
    return Invalid(path, "has both validValues and validRange");
  }
  if (values != nullptr) {
    for (size_t i = 0; i < values->size(); ++i) {
      DS_ASSIGN_OR_RETURN(
          int64_t v,
          QuantityValue((*values)[i],
                        absl::StrCat(path, ".validValues[", i, "]")));
      policy.valid_values.push_back(v);
    }
  }
  if (range != nullptr) {
    const std::string at = path + ".validRange";
    if (const json* min = Member(*range, "min"); min != nullptr) {
      DS_ASSIGN_OR_RETURN(policy.min, QuantityValue(*min, at + ".min"));
    }
    if (const json* max = Member(*range, "max"); max != nullptr) {
      DS_ASSIGN_OR_RETURN(policy.max, QuantityValue(*max, at + ".max"));
    }
    if (const json* step = Member(*range, "step"); step != nullptr) {
      DS_ASSIGN_OR_RETURN(policy.step, QuantityValue(*step, at + ".step"));
    }
  }
  return policy;
}

absl::StatusOr<DeviceCapacity> DecodeCapacity(const json& value,
                                              const std::string& path) {
  if (!value.is_object()) return NotA(path, value, "an object");
  const json* amount = Member(value, "value");
  if (amount == nullptr) return Invalid(path + ".value", "missing");
  DS_ASSIGN_OR_RETURN(CapacityAmount parsed,
                      DecodeQuantity(*amount, path + ".value"));
  DeviceCapacity out{parsed.value, parsed.format, std::nullopt};
  if (const json* policy = Member(value, "requestPolicy"); policy != nullptr) {
    DS_ASSIGN_OR_RETURN(out.policy,
                        DecodePolicy(*policy, path + ".requestPolicy"));
    // validRange.max is optional: without it the capacity itself bounds a
    // request (a policy with max 0 would refuse every one).
    const json* range = Member(*policy, "validRange");
    if (range != nullptr && Member(*range, "max") == nullptr) {
      out.policy->max = out.value;
    }
  }
  return out;
}

// {"<counter>": {"value": "<quantity>"}}
absl::StatusOr<std::map<std::string, Counter>> DecodeCounters(
    const json& object, const std::string& path) {
  const json* counters = Member(object, "counters");
  const std::string at = path + ".counters";
  if (counters == nullptr) return Invalid(at, "missing");
  if (!counters->is_object()) return NotA(at, *counters, "an object");
  std::map<std::string, Counter> out;
  for (const auto& [name, counter] : counters->items()) {
    const std::string counter_at = absl::StrCat(at, "[", name, "]");
    if (!counter.is_object()) return NotA(counter_at, counter, "an object");
    const json* value = Member(counter, "value");
    if (value == nullptr) return Invalid(counter_at + ".value", "missing");
    DS_ASSIGN_OR_RETURN(CapacityAmount amount,
                        DecodeQuantity(*value, counter_at + ".value"));
    out[name] = Counter{amount.value, amount.format};
  }
  return out;
}

absl::StatusOr<Device> DecodeDevice(const json& value,
                                    const std::string& path) {
  if (!value.is_object()) return NotA(path, value, "an object");
  Device device;
  DS_ASSIGN_OR_RETURN(device.name, StringField(value, path, "name", true));
  if (const json* multiple = Member(value, "allowMultipleAllocations");
      multiple != nullptr) {
    if (!multiple->is_boolean()) {
      return NotA(path + ".allowMultipleAllocations", *multiple, "a bool");
    }
    device.allow_multiple_allocations = multiple->get<bool>();
  }
  DS_ASSIGN_OR_RETURN(const json* attributes,
                      ObjectField(value, path, "attributes", false));
  if (attributes != nullptr) {
    for (const auto& [name, attribute] : attributes->items()) {
      DS_ASSIGN_OR_RETURN(
          device.attributes[name],
          DecodeAttribute(attribute,
                          absl::StrCat(path, ".attributes[", name, "]")));
    }
  }
  DS_ASSIGN_OR_RETURN(const json* capacity,
                      ObjectField(value, path, "capacity", false));
  if (capacity != nullptr) {
    for (const auto& [name, cap] : capacity->items()) {
      DS_ASSIGN_OR_RETURN(
          device.capacity[name],
          DecodeCapacity(cap, absl::StrCat(path, ".capacity[", name, "]")));
    }
  }
  DS_ASSIGN_OR_RETURN(const json* consumes,
                      ArrayField(value, path, "consumesCounters"));
  if (consumes != nullptr) {
    for (size_t i = 0; i < consumes->size(); ++i) {
      const json& entry = (*consumes)[i];
      const std::string at = absl::StrCat(path, ".consumesCounters[", i, "]");
      if (!entry.is_object()) return NotA(at, entry, "an object");
      CounterConsumption consumption;
      DS_ASSIGN_OR_RETURN(consumption.counter_set,
                          StringField(entry, at, "counterSet", true));
      DS_ASSIGN_OR_RETURN(consumption.counters, DecodeCounters(entry, at));
      device.consumes_counters.push_back(std::move(consumption));
    }
  }
  return device;
}

absl::Status DecodePool(const json& spec, ResourcePool& pool) {
  DS_ASSIGN_OR_RETURN(const json* value,
                      ObjectField(spec, "spec", "pool", true));
  DS_ASSIGN_OR_RETURN(pool.name,
                      StringField(*value, "spec.pool", "name", true));
  if (const json* generation = Member(*value, "generation");
      generation != nullptr) {
    DS_ASSIGN_OR_RETURN(pool.generation,
                        Int64(*generation, "spec.pool.generation"));
  }
  const json* count = Member(*value, "resourceSliceCount");
  if (count == nullptr) {
    return Invalid("spec.pool.resourceSliceCount", "missing");
  }
  DS_ASSIGN_OR_RETURN(pool.resource_slice_count,
                      Int64(*count, "spec.pool.resourceSliceCount"));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CapacityAmount> DecodeQuantity(const json& value,
                                              const std::string& path) {
  std::string text;
  if (value.is_string()) {
    text = value.get<std::string>();
  } else if (value.is_number_integer()) {
    text = JsonText(value);
  } else {
    return NotA(path, value, "a quantity");
  }
  DS_ASSIGN_OR_RETURN(int64_t milli, ParseQuantityMilli(text, path));
  CapacityAmount out;
  out.value = milli / 1000 + (milli % 1000 != 0 ? 1 : 0);
  if (text.size() >= 2 && text.back() == 'i' &&
      absl::StrContains("KMGTPE", text[text.size() - 2])) {
    out.format = QuantityFormat::kBinary;
  }
  return out;
}

absl::StatusOr<DecodedSlice> DecodeResourceSlice(const json& slice) {
  if (!slice.is_object()) return NotA("slice", slice, "an object");
  DecodedSlice out;
  DS_ASSIGN_OR_RETURN(const json* metadata,
                      ObjectField(slice, "", "metadata", true));
  DS_ASSIGN_OR_RETURN(out.slice.name,
                      StringField(*metadata, "metadata", "name", true));
  DS_ASSIGN_OR_RETURN(const json* spec, ObjectField(slice, "", "spec", true));
  DS_ASSIGN_OR_RETURN(out.slice.driver,
                      StringField(*spec, "spec", "driver", true));
  DS_ASSIGN_OR_RETURN(out.slice.node_name,
                      StringField(*spec, "spec", "nodeName", false));
  if (const json* all = Member(*spec, "allNodes"); all != nullptr) {
    if (!all->is_boolean()) return NotA("spec.allNodes", *all, "a bool");
    out.all_nodes = all->get<bool>();
  }
  DS_ASSIGN_OR_RETURN(const json* selector,
                      ObjectField(*spec, "spec", "nodeSelector", false));
  if (selector != nullptr) out.node_selector = *selector;
  DS_RETURN_IF_ERROR(DecodePool(*spec, out.slice.pool));
  DS_ASSIGN_OR_RETURN(const json* sets,
                      ArrayField(*spec, "spec", "sharedCounters"));
  if (sets != nullptr) {
    for (size_t i = 0; i < sets->size(); ++i) {
      const json& entry = (*sets)[i];
      const std::string at = absl::StrCat("spec.sharedCounters[", i, "]");
      if (!entry.is_object()) return NotA(at, entry, "an object");
      CounterSet set;
      DS_ASSIGN_OR_RETURN(set.name, StringField(entry, at, "name", true));
      DS_ASSIGN_OR_RETURN(set.counters, DecodeCounters(entry, at));
      out.slice.shared_counters.push_back(std::move(set));
    }
  }
  DS_ASSIGN_OR_RETURN(const json* devices,
                      ArrayField(*spec, "spec", "devices"));
  if (devices != nullptr) {
    for (size_t i = 0; i < devices->size(); ++i) {
      DS_ASSIGN_OR_RETURN(
          Device device,
          DecodeDevice((*devices)[i], absl::StrCat("spec.devices[", i, "]")));
      out.slice.devices.push_back(std::move(device));
    }
  }
  return out;
}

}  // namespace deviceshare::dra
