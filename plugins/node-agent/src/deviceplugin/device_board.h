// File: deviceplugin/device_board.h
//
// DeviceBoard: the device list a DevicePluginServer advertises, with a
// version that grows on every change so that ListAndWatch streams can wait
// for "newer than what I sent" without polling.
//
// Thread safety: every method may be called from any thread.
#ifndef DEVICESHARE_AGENT_DEVICEPLUGIN_DEVICE_BOARD_H_
#define DEVICESHARE_AGENT_DEVICEPLUGIN_DEVICE_BOARD_H_

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "deviceshare/agent/device_plugin_server.h"

namespace deviceshare::agent::deviceplugin {

struct DeviceSnapshot {
  uint64_t version = 0;
  std::vector<AdvertisedDevice> devices;
};

class DeviceBoard {
 public:
  // Replaces the list; true (and a new version) when it differs.
  bool Set(std::vector<AdvertisedDevice> devices);
  DeviceSnapshot Get() const;
  // True when `id` is in the list, healthy or not.
  bool Contains(const std::string& id) const;

  // Waits until the version is above `seen`, `stop` is true or `timeout`
  // passes; the newer list when there is one.
  std::optional<DeviceSnapshot> AwaitNewer(uint64_t seen,
                                           const std::atomic<bool>& stop,
                                           absl::Duration timeout) const;
  // Makes waiters look at their `stop` flag again.
  void Wake() const;

 private:
  mutable absl::Mutex mu_;
  uint64_t version_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<AdvertisedDevice> devices_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deviceshare::agent::deviceplugin

#endif  // DEVICESHARE_AGENT_DEVICEPLUGIN_DEVICE_BOARD_H_
