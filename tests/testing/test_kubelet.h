// File: testing/test_kubelet.h
//
// TestKubelet: the kubelet side of the device plugin API (v1beta1), as
// kubelet's device manager drives it, for tests of device plugins:
//
//   - serves Registration on `<dir>/kubelet.sock`; on Register (version
//     must be "v1beta1") it dials `<dir>/<endpoint>`, calls
//     GetDevicePluginOptions before answering, then keeps a ListAndWatch
//     stream open on a thread of its own, keeping the latest list of each
//     resource. A second Register of a resource replaces the first.
//   - AdmitContainer() does what the device manager does before a
//     container starts: picks `count` healthy ids no other container
//     holds (asking GetPreferredAllocation first when the plugin offers it
//     and taking its answer when it is valid), calls Allocate, records the
//     hold, writes `<dir>/kubelet_internal_checkpoint` (temp file + rename),
//     then calls PreStartContainer when the plugin asked for it.
//   - Restart() does what a kubelet restart does to the directory: stops
//     serving, deletes every file but the checkpoint (the plugins' sockets
//     and kubelet.sock), serves kubelet.sock again. Holds survive, as
//     kubelet reads them back from its checkpoint.
//
// The checkpoint's "Checksum" is FNV-1a (32 bit) of the compact JSON of
// "Data"; kubelet's own checksum (a hash of Go's printed struct) cannot be
// reproduced outside Go, and nothing in deviceshare checks it.
//
// Thread safety: every method may be called from any thread. Several
// AdmitContainer calls may run at once (the real kubelet serializes them;
// tests stress more): ids are reserved under a mutex, gRPC calls are made
// outside it.
#ifndef DEVICESHARE_TESTS_TESTING_TEST_KUBELET_H_
#define DEVICESHARE_TESTS_TESTING_TEST_KUBELET_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "deviceshare/agent/container_allocator.h"
#include "deviceshare/agent/device_plugin_server.h"

namespace deviceshare::testing {

// A Register call as kubelet received it.
struct KubeletRegistration {
  std::string version;
  std::string endpoint;
  std::string resource_name;
  bool pre_start_required = false;
  bool get_preferred_allocation_available = false;
};

// What a container was given, in plain C++.
struct AdmittedContainer {
  std::vector<std::string> device_ids;
  // What GetPreferredAllocation answered; empty when it was not asked.
  std::vector<std::string> preferred;
  std::map<std::string, std::string> envs;
  std::vector<Mount> mounts;
  std::vector<agent::ContainerGrant::DeviceNode> devices;
  std::map<std::string, std::string> annotations;
  std::vector<std::string> cdi_devices;
};

// One hold, as the checkpoint records it.
struct HeldDevices {
  std::string pod_uid;
  std::string container_name;
  std::string resource_name;
  std::vector<std::string> device_ids;
};

class TestKubelet {
 public:
  // `dir` is the device plugin directory; it is created when missing.
  explicit TestKubelet(std::string dir,
                       absl::Duration rpc_timeout = absl::Seconds(5));
  ~TestKubelet();  // Stop()s

  TestKubelet(const TestKubelet&) = delete;
  TestKubelet& operator=(const TestKubelet&) = delete;

  // Serves kubelet.sock (replacing a stale file).
  absl::Status Start();
  // Ends every ListAndWatch stream, stops serving, removes kubelet.sock.
  // Idempotent.
  void Stop();
  // Stop, delete every file in the directory but the checkpoint, Start.
  absl::Status Restart();

  // Successful Register calls so far, all resources, and each of them.
  int registrations() const;
  std::vector<KubeletRegistration> registration_log() const;

  // The last list `resource` sent (empty when none yet).
  std::vector<agent::AdvertisedDevice> devices(
      const std::string& resource) const;
  // ListAndWatch messages received for `resource`, over all its streams.
  int device_updates(const std::string& resource) const;
  // True once `predicate` holds for the latest list of `resource` (checked
  // at once and on every message), false after `timeout`.
  bool WaitForDevices(
      const std::string& resource,
      const std::function<bool(const std::vector<agent::AdvertisedDevice>&)>&
          predicate,
      absl::Duration timeout = absl::Seconds(5));
  // True while the stream of `resource` is open.
  bool stream_open(const std::string& resource) const;

  // Allocates `count` ids of `resource` to the container. Asking again for
  // a container that holds ids of `resource` returns its grant unchanged.
  // Errors: NotFound for a resource never registered, ResourceExhausted
  // when too few healthy free ids are left, else the plugin's own status.
  absl::StatusOr<AdmittedContainer> AdmitContainer(
      const std::string& pod_uid, const std::string& container_name,
      const std::string& resource, int count);
  // Forgets every hold of the pod and rewrites the checkpoint.
  absl::Status ReleasePod(const std::string& pod_uid);
  std::vector<HeldDevices> holds() const;

  const std::string& dir() const;
  std::string checkpoint_path() const;
  std::string kubelet_socket() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_TEST_KUBELET_H_
