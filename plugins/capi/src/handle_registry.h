// File: handle_registry.h
//
// The handles the C API has handed out (schedulers, prepared pods). A
// handle is not a pointer to anything: it is a number its table assigned,
// never reused, so a handle the library did not make -- or one already
// destroyed, even after its memory went to a new object -- is found
// missing (InvalidArgument) instead of being dereferenced. The core keeps
// no global state; these process-wide tables are the C API's own.
//
// Thread safety: all methods are; a call holds its object through a
// shared_ptr, so destroying a handle while another thread still uses it
// (which deviceshare.h forbids) frees the object only after that call.
#ifndef DEVICESHARE_CAPI_HANDLE_REGISTRY_H_
#define DEVICESHARE_CAPI_HANDLE_REGISTRY_H_

#include <cstdint>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/c/deviceshare.h"
#include "deviceshare/scheduler/scheduler.h"
#include "text_input.h"

namespace deviceshare::capi {

template <typename Handle, typename Object>
class HandleTable {
 public:
  // `what` and `maker` name the handle and the call that makes it in the
  // message of an unknown one ("scheduler", "deviceshare_scheduler_create").
  HandleTable(const char* what, const char* maker)
      : what_(what), maker_(maker) {}

  Handle* Add(std::shared_ptr<Object> object) ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    const uintptr_t id = ++last_id_;
    live_.emplace(id, std::move(object));
    return reinterpret_cast<Handle*>(id);
  }

  // InvalidArgument naming the handle when it is unknown or destroyed.
  absl::StatusOr<std::shared_ptr<Object>> Find(const Handle* handle) const
      ABSL_LOCKS_EXCLUDED(mu_) {
    absl::ReaderMutexLock lock(&mu_);
    auto it = live_.find(reinterpret_cast<uintptr_t>(handle));
    if (it == live_.end()) return Unknown(handle);
    return it->second;
  }

  absl::Status Remove(const Handle* handle) ABSL_LOCKS_EXCLUDED(mu_) {
    std::shared_ptr<Object> gone;  // destroyed after the lock is released
    absl::MutexLock lock(&mu_);
    auto it = live_.find(reinterpret_cast<uintptr_t>(handle));
    if (it == live_.end()) return Unknown(handle);
    gone = std::move(it->second);
    live_.erase(it);
    return absl::OkStatus();
  }

 private:
  absl::Status Unknown(const Handle* handle) const {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s %p is not a live handle (never created by %s, or already "
        "destroyed)",
        what_, static_cast<const void*>(handle), maker_));
  }

  const char* const what_;
  const char* const maker_;
  mutable absl::Mutex mu_;
  uintptr_t last_id_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<uintptr_t, std::shared_ptr<Object>> live_
      ABSL_GUARDED_BY(mu_);
};

// The process's tables (never destroyed, so a handle used during exit
// still finds them).
HandleTable<deviceshare_scheduler, Scheduler>& SchedulerHandles();
HandleTable<deviceshare_pod, ParsedPod>& PodHandles();

}  // namespace deviceshare::capi

#endif  // DEVICESHARE_CAPI_HANDLE_REGISTRY_H_
