// File: handle_registry.h
//
// The schedulers the C API has handed out. A deviceshare_scheduler* is not
// a pointer to anything: it is a number this registry assigned, never
// reused, so a handle the library did not make -- or one already destroyed,
// even after its memory went to a new scheduler -- is found missing
// (InvalidArgument) instead of being dereferenced. The core keeps no global
// state; this process-wide table is the C API's own.
//
// Thread safety: all methods are; a call holds its scheduler through a
// shared_ptr, so destroying a handle while another thread still uses it
// (which deviceshare.h forbids) frees the scheduler only after that call.
#ifndef DEVICESHARE_CAPI_HANDLE_REGISTRY_H_
#define DEVICESHARE_CAPI_HANDLE_REGISTRY_H_

#include <cstdint>
#include <memory>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/c/deviceshare.h"
#include "deviceshare/scheduler/scheduler.h"

namespace deviceshare::capi {

class HandleRegistry {
 public:
  // The process's registry (never destroyed, so a handle used during exit
  // still finds it).
  static HandleRegistry& Get();

  deviceshare_scheduler* Add(std::unique_ptr<Scheduler> scheduler)
      ABSL_LOCKS_EXCLUDED(mu_);
  // InvalidArgument naming the handle when it is unknown or destroyed.
  absl::StatusOr<std::shared_ptr<Scheduler>> Find(
      const deviceshare_scheduler* handle) const ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status Remove(const deviceshare_scheduler* handle)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  HandleRegistry() = default;

  mutable absl::Mutex mu_;
  uintptr_t last_id_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<uintptr_t, std::shared_ptr<Scheduler>> live_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace deviceshare::capi

#endif  // DEVICESHARE_CAPI_HANDLE_REGISTRY_H_
