// File: kube/leader_elector.h
//
// LeaderElector: leader election on a coordination.k8s.io/v1 Lease, with
// the semantics of client-go's leaderelection package, so that several
// replicas of a process can run and only one acts.
//
//   LeaderElector elector(client, &RealClock(), {.name =
//   "deviceshare-scheduler",
//                                               .identity = "host_1234"});
//   std::thread loop([&] { elector.Run(stop); });  // attempts every
//   retry_period if (elector.IsLeader()) { ...act... }
//
// The lease (spec.holderIdentity, leaseDurationSeconds, acquireTime,
// renewTime, leaseTransitions) is created when absent, renewed by its
// holder every retry_period, and taken over by another candidate only when
// that candidate has seen the same lease record unchanged for
// lease_duration, measured on its own clock from when it first saw that
// record (so clocks of different machines need not agree, only their
// rates). Every write is conditional on the resourceVersion read, so two
// candidates never both win one round (the loser gets 409).
//
// Safety: a leader counts itself leader only until renew_deadline after the
// start of its last successful renewal. Because renew_deadline <
// lease_duration, a leader that cannot renew (API server unreachable, a
// partition, a stalled process) stops acting before any other candidate
// may take the lease. IsLeader reads the clock each call, so this holds
// even while Run is blocked in a slow request.
//
// Release (called by Run when asked to stop) gives the lease up at once:
// it clears the holder, so another replica takes over without waiting out
// the lease.
//
// Errors: Create-time InvalidArgument for empty name/identity/namespace or
// durations that break retry_period < renew_deadline < lease_duration.
// Request failures are not errors to the caller: the attempt fails, and
// last_error() tells why.
//
// Thread safety: IsLeader, last_error and the observers may be called from
// any thread while Run runs on one thread. TryAcquireOrRenew and Release
// must not run concurrently with each other or with Run.
#ifndef DEVICESHARE_KUBE_LEADER_ELECTOR_H_
#define DEVICESHARE_KUBE_LEADER_ELECTOR_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "deviceshare/clock.h"
#include "deviceshare/kube/api_client.h"
#include "nlohmann/json.hpp"

namespace deviceshare::kube {

struct LeaderElectionOptions {
  std::string lease_namespace = "kube-system";
  std::string name;      // the Lease's name
  std::string identity;  // this candidate's holderIdentity; unique per replica
  absl::Duration lease_duration = absl::Seconds(15);
  absl::Duration renew_deadline = absl::Seconds(10);
  absl::Duration retry_period = absl::Seconds(2);
};

// Why leadership changed, for the log.
using LeadershipHandler = std::function<void(bool leading)>;

class LeaderElector {
 public:
  // `client` and `clock` must outlive the elector. `on_change` (optional)
  // runs on the thread of TryAcquireOrRenew/Release when this candidate
  // starts or stops leading; IsLeader may turn false earlier, by time alone.
  static absl::StatusOr<std::unique_ptr<LeaderElector>> Create(
      ApiClient* client, const Clock* clock, LeaderElectionOptions options,
      LeadershipHandler on_change = nullptr);

  // One round: create the lease, renew it, or take it over when it
  // expired. Returns whether this candidate leads afterwards.
  bool TryAcquireOrRenew();

  // True while this candidate holds the lease and its last successful
  // renewal started less than renew_deadline ago.
  bool IsLeader() const;

  // Rounds every retry_period until `stop` is true, then Release().
  // Blocks; `stop` is checked about every 50 ms.
  void Run(const std::atomic<bool>& stop);

  // Gives the lease up if this candidate holds it (holderIdentity cleared,
  // a short lease). A failure is only logged through last_error: the lease
  // then expires by itself.
  void Release();

  // The holder seen in the last lease read ("" when none or never read).
  std::string observed_holder() const;
  // How often this candidate took the lease (created or took over).
  int64_t acquisitions() const;
  // The last failed request of a round, OK if the last round's requests
  // succeeded.
  absl::Status last_error() const;

  const LeaderElectionOptions& options() const { return options_; }

 private:
  LeaderElector(ApiClient* client, const Clock* clock,
                LeaderElectionOptions options, LeadershipHandler on_change);

  bool TryRound(absl::Time started);
  bool WriteLease(const nlohmann::json* current, absl::Time now);
  void SetLeading(bool leading, absl::Time renewed);
  void RecordError(const absl::Status& status);

  ApiClient* const client_;
  const Clock* const clock_;
  const LeaderElectionOptions options_;
  const LeadershipHandler on_change_;
  const std::string path_;

  // The lease record last read (spec only, as text) and when this
  // candidate first saw it: takeover waits lease_duration from then.
  std::string observed_record_;
  absl::Time observed_at_ = absl::InfinitePast();

  mutable absl::Mutex mu_;
  bool leading_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time renewed_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  std::string observed_holder_ ABSL_GUARDED_BY(mu_);
  int64_t acquisitions_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status last_error_ ABSL_GUARDED_BY(mu_);
};

// The Lease's API path.
std::string LeasePath(const std::string& lease_namespace,
                      const std::string& name);

}  // namespace deviceshare::kube

#endif  // DEVICESHARE_KUBE_LEADER_ELECTOR_H_
