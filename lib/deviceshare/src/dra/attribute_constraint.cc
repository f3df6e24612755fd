#include "deviceshare/dra/attribute_constraint.h"

#include "absl/strings/str_cat.h"

namespace deviceshare::dra {

std::optional<DeviceAttribute> FindAttribute(const Device& device,
                                             absl::string_view driver,
                                             absl::string_view qualified) {
  if (auto it = device.attributes.find(std::string(qualified));
      it != device.attributes.end()) {
    return it->second;
  }
  const size_t slash = qualified.rfind('/');
  if (slash == absl::string_view::npos ||
      qualified.substr(0, slash) != driver) {
    return std::nullopt;
  }
  auto it = device.attributes.find(std::string(qualified.substr(slash + 1)));
  if (it == device.attributes.end()) return std::nullopt;
  return it->second;
}

std::string AttributeKey(const DeviceAttribute& value) {
  switch (value.kind) {
    case DeviceAttribute::Kind::kInt:
      return absl::StrCat("i:", value.int_value);
    case DeviceAttribute::Kind::kBool:
      return value.bool_value ? "b:1" : "b:0";
    case DeviceAttribute::Kind::kVersion:
      return absl::StrCat("v:", value.text);
    case DeviceAttribute::Kind::kString:
      break;
  }
  return absl::StrCat("s:", value.text);
}

bool AttributeConstraint::Add(const Device& device, absl::string_view driver,
                              std::string* why) {
  std::optional<DeviceAttribute> value =
      FindAttribute(device, driver, attribute_);
  if (!value.has_value()) {
    *why = absl::StrCat(device.name, " has no attribute ", attribute_);
    return false;
  }
  const std::string key = AttributeKey(*value);
  if (kind_ == Kind::kMatch && !values_.empty() && !values_.contains(key)) {
    *why = absl::StrCat(device.name, ": ", attribute_, " ", key.substr(2),
                        " differs from the other devices' ",
                        values_.begin()->first.substr(2));
    return false;
  }
  if (kind_ == Kind::kDistinct && values_.contains(key)) {
    *why = absl::StrCat(device.name, ": ", attribute_, " ", key.substr(2),
                        " is taken by another device of the claim");
    return false;
  }
  ++values_[key];
  return true;
}

void AttributeConstraint::Remove(const Device& device,
                                 absl::string_view driver) {
  std::optional<DeviceAttribute> value =
      FindAttribute(device, driver, attribute_);
  if (!value.has_value()) return;
  auto it = values_.find(AttributeKey(*value));
  if (it != values_.end() && --it->second == 0) values_.erase(it);
}

}  // namespace deviceshare::dra
