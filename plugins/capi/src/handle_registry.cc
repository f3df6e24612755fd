#include "handle_registry.h"

#include <utility>

#include "absl/strings/str_format.h"

namespace deviceshare::capi {
namespace {

uintptr_t IdOf(const deviceshare_scheduler* handle) {
  return reinterpret_cast<uintptr_t>(handle);
}

absl::Status Unknown(const deviceshare_scheduler* handle) {
  return absl::InvalidArgumentError(
      absl::StrFormat("scheduler %p is not a live handle (never created by "
                      "deviceshare_scheduler_create, or already destroyed)",
                      static_cast<const void*>(handle)));
}

}  // namespace

HandleRegistry& HandleRegistry::Get() {
  static HandleRegistry* const registry = new HandleRegistry();
  return *registry;
}

deviceshare_scheduler* HandleRegistry::Add(
    std::unique_ptr<Scheduler> scheduler) {
  absl::MutexLock lock(&mu_);
  const uintptr_t id = ++last_id_;
  live_.emplace(id, std::shared_ptr<Scheduler>(std::move(scheduler)));
  return reinterpret_cast<deviceshare_scheduler*>(id);
}

absl::StatusOr<std::shared_ptr<Scheduler>> HandleRegistry::Find(
    const deviceshare_scheduler* handle) const {
  absl::ReaderMutexLock lock(&mu_);
  auto it = live_.find(IdOf(handle));
  if (it == live_.end()) return Unknown(handle);
  return it->second;
}

absl::Status HandleRegistry::Remove(const deviceshare_scheduler* handle) {
  std::shared_ptr<Scheduler> gone;  // destroyed after the lock is released
  absl::MutexLock lock(&mu_);
  auto it = live_.find(IdOf(handle));
  if (it == live_.end()) return Unknown(handle);
  gone = std::move(it->second);
  live_.erase(it);
  return absl::OkStatus();
}

}  // namespace deviceshare::capi
