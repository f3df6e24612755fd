#include "nvml/xid_health.h"

#include "absl/strings/str_cat.h"

namespace deviceshare::agent {

bool IsApplicationXid(uint64_t xid) {
  switch (xid) {
    case 13:
    case 31:
    case 43:
    case 45:
    case 68:
    case 109:
      return true;
    default:
      return false;
  }
}

void XidHealth::OnXid(const std::string& uuid, uint64_t xid, absl::Time now) {
  if (IsApplicationXid(xid)) return;
  xids_[uuid] = LastXid{xid, now};
}

GpuHealth XidHealth::Poll(const std::string& uuid,
                          const std::string& poll_error, absl::Time now) {
  GpuHealth health;
  health.uuid = uuid;
  if (!poll_error.empty()) {
    health.healthy = false;
    health.reason = poll_error;
    return health;
  }
  auto it = xids_.find(uuid);
  if (it == xids_.end()) return health;
  if (now - it->second.at >= quiet_) {
    xids_.erase(it);
    return health;
  }
  health.healthy = false;
  health.reason = absl::StrCat("xid ", it->second.xid);
  return health;
}

}  // namespace deviceshare::agent
