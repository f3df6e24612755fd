#include "deviceshare/model/pod_allocation.h"

namespace deviceshare {

bool SameShare(const std::vector<DeviceGrant>& a,
               const std::vector<DeviceGrant>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const DeviceGrant& x = a[i];
    const DeviceGrant& y = b[i];
    if (x.uuid != y.uuid || x.memory_mib != y.memory_mib ||
        x.cores != y.cores || x.has_partition() != y.has_partition() ||
        x.mig.profile != y.mig.profile || x.mig.start != y.mig.start) {
      return false;
    }
  }
  return true;
}

}  // namespace deviceshare
