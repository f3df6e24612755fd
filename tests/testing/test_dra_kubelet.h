// File: testing/test_dra_kubelet.h
//
// TestDraKubelet: the kubelet side of the DRA plugin API, as kubelet 1.34's
// plugin watcher and DRA plugin manager drive it, for tests of DRA drivers'
// kubelet plugins:
//
//   - WaitForPlugin() does what the plugin watcher does when a socket
//     appears in the registry folder: waits for `<registry_dir>/<driver>-
//     reg.sock`, calls GetInfo, checks type "DRAPlugin" and the name, picks
//     the first of the plugin's supported_versions it knows (1.34 knows
//     "v1.DRAPlugin" and "v1beta1.DRAPlugin") and calls
//     NotifyRegistrationStatus: plugin_registered = true, or false with
//     kubelet's reason when a check failed (then FailedPrecondition).
//   - Prepare() / Unprepare() call NodePrepareResources /
//     NodeUnprepareResources of the given version ("v1" or "v1beta1") on
//     the endpoint of the last plugin registered, with a deadline, and
//     check the answer as kubelet does: an entry for a uid not asked for, or
//     a claim left out, is an Internal error (kubelet's wording). The
//     version need not be the one kubelet chose, so that tests can probe
//     what the plugin does not serve (gRPC's Unimplemented comes back).
//
// Each call dials afresh, so a plugin that served its socket again is
// reached without waiting for gRPC's reconnect backoff.
//
// Thread safety: every method may be called from any thread.
#ifndef DEVICESHARE_TESTS_TESTING_TEST_DRA_KUBELET_H_
#define DEVICESHARE_TESTS_TESTING_TEST_DRA_KUBELET_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "deviceshare/agent/claim_preparer.h"

namespace deviceshare::testing {

// GetInfo's answer, and the service kubelet chose from it.
struct DraPluginInfo {
  std::string type;
  std::string name;
  std::string endpoint;
  std::vector<std::string> supported_versions;
  std::string chosen_service;  // e.g. "v1.DRAPlugin"
};

class TestDraKubelet {
 public:
  // What a 1.34 kubelet knows, most recent first.
  static std::vector<std::string> Kubelet134Services();

  // `registry_dir` is where plugins create their registration sockets.
  // `known_services` replaces Kubelet134Services(), to play another
  // kubelet.
  explicit TestDraKubelet(
      std::string registry_dir,
      std::vector<std::string> known_services = Kubelet134Services(),
      absl::Duration rpc_timeout = absl::Seconds(10));

  TestDraKubelet(const TestDraKubelet&) = delete;
  TestDraKubelet& operator=(const TestDraKubelet&) = delete;

  // Registers the plugin of `driver` (see above). DeadlineExceeded when no
  // registration socket answers GetInfo within `timeout`.
  absl::StatusOr<DraPluginInfo> WaitForPlugin(
      const std::string& driver, absl::Duration timeout = absl::Seconds(10));

  // Keyed by claim uid. FailedPrecondition before a plugin registered,
  // InvalidArgument for another version, else the gRPC status or Internal
  // for an answer kubelet would reject.
  absl::StatusOr<std::map<std::string, agent::ClaimPrepareResult>> Prepare(
      const std::string& version, const std::vector<agent::ClaimRef>& claims);
  // Keyed by claim uid; the value is the error, empty when unprepared.
  absl::StatusOr<std::map<std::string, std::string>> Unprepare(
      const std::string& version, const std::vector<agent::ClaimRef>& claims);

  // `<registry_dir>/<driver>-reg.sock`.
  std::string registration_socket(const std::string& driver) const;
  const std::string& registry_dir() const { return registry_dir_; }

 private:
  absl::StatusOr<std::string> Endpoint() const;

  const std::string registry_dir_;
  const std::vector<std::string> known_services_;
  const absl::Duration rpc_timeout_;
  mutable absl::Mutex mu_;
  std::optional<DraPluginInfo> plugin_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_TEST_DRA_KUBELET_H_
