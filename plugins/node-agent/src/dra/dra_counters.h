// File: dra/dra_counters.h
//
// DraCounters: DraPluginStats and the "kubelet accepted us" flag, written
// from gRPC's threads (calls, NotifyRegistrationStatus) and the watchdog
// (serves), read by DraPluginServer::stats() and registered().
//
// Thread safety: every method may be called from any thread.
#ifndef DEVICESHARE_AGENT_DRA_DRA_COUNTERS_H_
#define DEVICESHARE_AGENT_DRA_DRA_COUNTERS_H_

#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/agent/dra_plugin_server.h"

namespace deviceshare::agent::dra {

class DraCounters {
 public:
  // Runs `update(DraPluginStats&)` under the lock.
  template <typename Update>
  void Count(Update&& update) {
    absl::MutexLock lock(&mu_);
    std::forward<Update>(update)(stats_);
  }

  // Records one NotifyRegistrationStatus.
  void Notified(bool registered, std::string error) {
    absl::MutexLock lock(&mu_);
    ++stats_.registrations_notified;
    stats_.last_registration_error = std::move(error);
    registered_ = registered;
  }

  // A new registration socket is unknown to kubelet until it registers it.
  void Unregistered() {
    absl::MutexLock lock(&mu_);
    registered_ = false;
  }

  DraPluginStats Snapshot() const {
    absl::MutexLock lock(&mu_);
    return stats_;
  }

  bool registered() const {
    absl::MutexLock lock(&mu_);
    return registered_;
  }

 private:
  mutable absl::Mutex mu_;
  DraPluginStats stats_ ABSL_GUARDED_BY(mu_);
  bool registered_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace deviceshare::agent::dra

#endif  // DEVICESHARE_AGENT_DRA_DRA_COUNTERS_H_
