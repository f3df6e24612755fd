// File: dra/attribute_constraint.h
//
// The two constraints a ResourceClaim can put across its requests:
// matchAttribute (every device chosen for the named requests has the same
// value of an attribute) and distinctAttribute (no two have the same
// value). Both are monotonic, as the allocator assumes: a device is
// refused as soon as adding it would break the constraint, and removing it
// (on backtracking) restores the state before it was added.
//
// Values are compared by value, kind included: the 1.34 allocator compared
// string pointers for distinctAttribute, so two GPUs with equal uuids
// strings at different addresses passed (fixed in 1.35).
//
// An attribute is named fully qualified ("gpu.deviceshare.io/uuid"); a
// device stores its own driver's attributes without the domain, so the
// lookup tries both. A device without the attribute never satisfies the
// constraint.
//
// Thread safety: not thread-safe; one owner (one allocation attempt).
#ifndef DEVICESHARE_DRA_ATTRIBUTE_CONSTRAINT_H_
#define DEVICESHARE_DRA_ATTRIBUTE_CONSTRAINT_H_

#include <map>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "deviceshare/dra/resource_slice.h"

namespace deviceshare::dra {

// The value of `qualified` on `device` of `driver`, or nullopt.
std::optional<DeviceAttribute> FindAttribute(const Device& device,
                                             absl::string_view driver,
                                             absl::string_view qualified);

// A value as a comparable key: its kind and its value ("s:GPU-1", "i:3").
std::string AttributeKey(const DeviceAttribute& value);

class AttributeConstraint {
 public:
  enum class Kind { kMatch, kDistinct };

  AttributeConstraint(Kind kind, std::string attribute)
      : kind_(kind), attribute_(std::move(attribute)) {}

  // Adds `device` when the constraint still holds with it; false (and
  // `why` set) otherwise, leaving the state as it was.
  bool Add(const Device& device, absl::string_view driver, std::string* why);
  // REQUIRES: `device` was added and not removed since.
  void Remove(const Device& device, absl::string_view driver);

  const std::string& attribute() const { return attribute_; }

 private:
  const Kind kind_;
  const std::string attribute_;
  std::map<std::string, int> values_;  // key -> devices holding it
};

}  // namespace deviceshare::dra

#endif  // DEVICESHARE_DRA_ATTRIBUTE_CONSTRAINT_H_
