// spec.priority of a Pod object, read by the watch feed (each charged pod's
// priority) and by /preempt (the pending pod's). kube-scheduler reads only
// this field: the API server's priority admission fills it from
// spec.priorityClassName when a pod is created.
#ifndef DEVICESHARE_EXTENDER_SPEC_PRIORITY_H_
#define DEVICESHARE_EXTENDER_SPEC_PRIORITY_H_

#include <cstdint>
#include <limits>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "deviceshare/json_text.h"
#include "nlohmann/json.hpp"

namespace deviceshare::extender {

// 0 when spec.priority is absent or null; InvalidArgument naming the field
// and the value when it is not a whole number in int32 range.
inline absl::StatusOr<int32_t> SpecPriority(const nlohmann::json& pod) {
  if (!pod.is_object()) return 0;
  auto spec = pod.find("spec");
  if (spec == pod.end() || !spec->is_object()) return 0;
  auto priority = spec->find("priority");
  if (priority == spec->end() || priority->is_null()) return 0;
  constexpr int64_t kMin = std::numeric_limits<int32_t>::min();
  constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
  if (priority->is_number_unsigned()) {
    if (priority->get<uint64_t>() <= static_cast<uint64_t>(kMax)) {
      return static_cast<int32_t>(priority->get<uint64_t>());
    }
  } else if (priority->is_number_integer()) {
    const int64_t value = priority->get<int64_t>();
    if (value >= kMin && value <= kMax) return static_cast<int32_t>(value);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("spec.priority: ", JsonText(*priority), " is not an int32"));
}

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_SPEC_PRIORITY_H_
