#include "deviceplugin/device_board.h"

#include <algorithm>
#include <utility>

namespace deviceshare::agent::deviceplugin {

bool DeviceBoard::Set(std::vector<AdvertisedDevice> devices) {
  absl::MutexLock lock(&mu_);
  if (devices == devices_) return false;
  devices_ = std::move(devices);
  ++version_;
  return true;
}

DeviceSnapshot DeviceBoard::Get() const {
  absl::MutexLock lock(&mu_);
  return {version_, devices_};
}

bool DeviceBoard::Contains(const std::string& id) const {
  absl::MutexLock lock(&mu_);
  return std::any_of(
      devices_.begin(), devices_.end(),
      [&](const AdvertisedDevice& device) { return device.id == id; });
}

std::optional<DeviceSnapshot> DeviceBoard::AwaitNewer(
    uint64_t seen, const std::atomic<bool>& stop,
    absl::Duration timeout) const {
  struct Args {
    const DeviceBoard* board;
    uint64_t seen;
    const std::atomic<bool>* stop;
  } args{this, seen, &stop};
  absl::MutexLock lock(&mu_);
  // absl::Mutex re-evaluates the condition whenever the mutex is released,
  // so Set() and Wake() need no explicit signal.
  mu_.AwaitWithTimeout(absl::Condition(
                           +[](Args* a) ABSL_NO_THREAD_SAFETY_ANALYSIS {
                             return a->board->version_ > a->seen ||
                                    a->stop->load();
                           },
                           &args),
                       timeout);
  if (version_ <= seen) return std::nullopt;
  return DeviceSnapshot{version_, devices_};
}

void DeviceBoard::Wake() const { absl::MutexLock lock(&mu_); }

}  // namespace deviceshare::agent::deviceplugin
