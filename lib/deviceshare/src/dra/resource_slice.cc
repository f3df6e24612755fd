#include "deviceshare/dra/resource_slice.h"

#include <utility>

namespace deviceshare::dra {

DeviceAttribute DeviceAttribute::Int(int64_t value) {
  DeviceAttribute a;
  a.kind = Kind::kInt;
  a.int_value = value;
  return a;
}

DeviceAttribute DeviceAttribute::Bool(bool value) {
  DeviceAttribute a;
  a.kind = Kind::kBool;
  a.bool_value = value;
  return a;
}

DeviceAttribute DeviceAttribute::String(std::string value) {
  DeviceAttribute a;
  a.kind = Kind::kString;
  a.text = std::move(value);
  return a;
}

DeviceAttribute DeviceAttribute::Version(std::string semver) {
  DeviceAttribute a;
  a.kind = Kind::kVersion;
  a.text = std::move(semver);
  return a;
}

}  // namespace deviceshare::dra
