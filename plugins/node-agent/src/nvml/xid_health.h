// File: nvml/xid_health.h
//
// XidHealth: the health rule of agent/nvml_source.h, apart from NVML so it
// reads in one place. A GPU is unhealthy while polls fail; after a critical
// xid it stays unhealthy until a poll at least `quiet` after the last one
// finds it answering.
//
// Thread safety: none; the source holds its lock around it.
#ifndef DEVICESHARE_AGENT_NVML_XID_HEALTH_H_
#define DEVICESHARE_AGENT_NVML_XID_HEALTH_H_

#include <cstdint>
#include <map>
#include <string>

#include "absl/time/time.h"
#include "deviceshare/agent/gpu_source.h"

namespace deviceshare::agent {

// Xids that application faults raise (13 graphics engine exception, 31 MMU
// fault, 43 stopped channel, 45 preemptive cleanup, 68 NVDEC, 109 context
// switch timeout): the GPU is fine; NVIDIA's device plugin skips them.
bool IsApplicationXid(uint64_t xid);

class XidHealth {
 public:
  explicit XidHealth(absl::Duration quiet) : quiet_(quiet) {}

  // A critical-error event with `xid` on `uuid` at `now`; application xids
  // are ignored.
  void OnXid(const std::string& uuid, uint64_t xid, absl::Time now);

  // The verdict of a poll at `now`: `poll_error` is empty when the GPU
  // answered. Clears a critical xid whose quiet period has passed.
  GpuHealth Poll(const std::string& uuid, const std::string& poll_error,
                 absl::Time now);

 private:
  struct LastXid {
    uint64_t xid = 0;
    absl::Time at;
  };
  absl::Duration quiet_;
  std::map<std::string, LastXid> xids_;
};

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_NVML_XID_HEALTH_H_
