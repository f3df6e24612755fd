// File: dra/device_class.h
//
// DeviceClass: what a DRA allocator reads of a resource.k8s.io/v1
// DeviceClass -- its CEL selectors, its configs (kept whole) and the
// extended resource it stands for -- and DecodeCelSelectors, the selector
// list reader that claims (dra/claim_spec.h) share.
//
// Decoding is strict about what it uses and ignores the rest: every error
// is InvalidArgument and names the field path and the value, e.g.
// `spec.selectors[1].cel.expression: 3 is not a string`. The decoder never
// throws, whatever the input.
//
// Thread safety: value types and pure functions.
#ifndef DEVICESHARE_DRA_DEVICE_CLASS_H_
#define DEVICESHARE_DRA_DEVICE_CLASS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace deviceshare::dra {

inline constexpr int kMaxSelectors = 32;

struct DeviceClass {
  std::string name;
  std::vector<std::string> selectors;  // CEL expressions, all must hold
  // spec.config entries ({"opaque": {"driver", "parameters"}}), kept whole.
  std::vector<nlohmann::json> config;
  std::string extended_resource_name;  // "" when none

  bool operator==(const DeviceClass& other) const = default;
};

absl::StatusOr<DeviceClass> DecodeDeviceClass(
    const nlohmann::json& device_class);

// A `selectors` list, [{"cel": {"expression": "..."}}, ...] (null: none),
// as its expressions. At most kMaxSelectors; an expression must not be
// empty. `path` names the list: `<path>[1].cel.expression: missing`.
absl::StatusOr<std::vector<std::string>> DecodeCelSelectors(
    const nlohmann::json& selectors, const std::string& path);

}  // namespace deviceshare::dra

#endif  // DEVICESHARE_DRA_DEVICE_CLASS_H_
