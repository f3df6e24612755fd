// File: backend/backend_set.h
//
// BackendSet: the sharing backends one scheduler uses, made from the
// registry: every registered backend, in name order, or those of the modes
// the config's scheduler.modes lists, in its order. A mode's backend is
// registered under the mode's name ("hami-core", "mig", "mps").
//
// Thread safety: immutable after Create(); safe to share.
#ifndef DEVICESHARE_BACKEND_BACKEND_SET_H_
#define DEVICESHARE_BACKEND_BACKEND_SET_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/backend/backend_registry.h"
#include "deviceshare/backend/sharing_backend.h"
#include "deviceshare/config/scheduler_config.h"

namespace deviceshare {

class BackendSet {
 public:
  // NotFound if an enabled mode has no registered backend.
  static absl::StatusOr<BackendSet> Create(const BackendRegistry& registry,
                                           const Config& config);

  // The backend for `mode`, or nullptr when the mode is not enabled.
  const SharingBackend* ForMode(SharingMode mode) const;
  // Whether some registered backend serves `mode`, enabled or not: a GPU or
  // pod may name a mode this scheduler leaves off, never one nobody knows.
  bool Knows(SharingMode mode) const;
  // The registered modes, "hami-core, mig, mps": for error messages.
  std::string KnownNames() const;
  // Enabled backends in config order (name order without scheduler.modes).
  const std::vector<std::unique_ptr<SharingBackend>>& all() const {
    return backends_;
  }

 private:
  std::vector<std::unique_ptr<SharingBackend>> backends_;
  std::vector<std::string> known_;  // sorted
};

}  // namespace deviceshare

#endif  // DEVICESHARE_BACKEND_BACKEND_SET_H_
