#include "deviceshare/model/pod_request.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace deviceshare {

absl::string_view DialectName(Dialect dialect) {
  return dialect == Dialect::kVolcano ? "volcano" : "hami";
}

int64_t ContainerRequest::MemoryOn(int64_t capacity_mib) const {
  if (memory_mib > 0) return memory_mib;
  int32_t percent = memory_percent > 0 ? memory_percent : 100;
  return capacity_mib * percent / 100;
}

std::string PodRequest::Key() const {
  return absl::StrCat(namespace_name, "/", name);
}

bool PodRequest::HasGpuRequest() const {
  return std::any_of(containers.begin(), containers.end(),
                     [](const ContainerRequest& c) { return c.wants_gpu(); });
}

}  // namespace deviceshare
