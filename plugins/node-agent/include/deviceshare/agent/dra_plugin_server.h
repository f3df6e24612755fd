// File: agent/dra_plugin_server.h
//
// DraPluginServer: the plugin side of kubelet's Dynamic Resource Allocation
// API for one DRA driver ("gpu.deviceshare.io"). It is gRPC plumbing only:
// what a claim gets is decided by the ClaimPreparer (agent/claim_preparer.h);
// both API versions map onto its types.
//
// What kubelet 1.34 expects, as read upstream:
//   - Wire (k8s.io/kubelet tag v0.34.0, pkg/apis/dra/v1/api.proto,
//     pkg/apis/dra/v1beta1/api.proto): packages
//     `k8s.io.kubelet.pkg.apis.dra.v1` and
//     `k8s.io.kubelet.pkg.apis.dra.v1beta1`, service DRAPlugin, so kubelet
//     calls e.g.
//     "/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/NodePrepareResources".
//     (Not the device plugin's bare package `v1beta1`: no clash.)
//   - Registration (pkg/apis/pluginregistration/v1/api.proto): package
//     `pluginregistration` ("This should have been v1"), methods
//     "/pluginregistration.Registration/GetInfo" and
//     ".../NotifyRegistrationStatus".
//   - PluginInfo.type is "DRAPlugin" (pluginregistration/v1/constants.go);
//     supported_versions lists gRPC services as "<package tail>.<service>":
//     "v1.DRAPlugin" (dra/v1/types.go DRAPluginService) and
//     "v1beta1.DRAPlugin" (dra/v1beta1/types.go). A 1.34 kubelet takes the
//     first entry of this list that it knows (kubernetes
//     pkg/kubelet/cm/dra/plugin/dra_plugin_manager.go,
//     validateSupportedServices; servicesSupportedByKubelet = v1, v1beta1),
//     so v1 goes first; kubelets before 1.34 know only v1beta1 (and
//     v1alpha4) and pick it from the same list.
//   - Sockets (k8s.io/dynamic-resource-allocation tag v0.34.0,
//     kubeletplugin/draplugin.go): registration on
//     `<registry-dir>/<driver>-reg.sock` (registry dir
//     /var/lib/kubelet/plugins_registry, watched by kubelet's plugin
//     watcher); DRA service on `<plugin-dir>/<driver>/dra.sock` (plugin dir
//     /var/lib/kubelet/plugins), the path GetInfo sends as `endpoint`. The
//     DRA socket is served before the registration socket appears.
//   - Kubelet rejects a whole NodePrepareResources answer that names a uid
//     it did not ask for, and calls again for claims left out
//     (pkg/kubelet/cm/dra/manager.go).
//
// Life cycle:
//   Start()  creates the folders, removes stale socket files, serves
//            DRAPlugin (the chosen versions, one grpc::Server) on the DRA
//            socket, then Registration on the registration socket, and
//            starts a watchdog.
//   watchdog every `watchdog_interval`: a socket file that is gone or is no
//            longer the one it created is served again (DRA socket first;
//            a foreign file in its place is removed, as Start() does);
//            a new registration socket means kubelet registers the plugin
//            anew, so registered() is false until it has.
//   Stop()   stops the watchdog and both servers (registration first) and
//            removes the socket files that are still its own.
//
// Every claim of a call gets an entry in the answer: the preparer promises
// it, and where it breaks the promise the server adds an error entry for
// the missing uid (and drops entries for uids kubelet did not ask for).
//
// Usage:
//   DraPluginServer server({}, &preparer);
//   DS_RETURN_IF_ERROR(server.Start());
//
// Thread safety: every method may be called from any thread at any time;
// Start/Stop are serialized. The preparer is called from gRPC's threads,
// several at once, and must outlive the server.
#ifndef DEVICESHARE_AGENT_DRA_PLUGIN_SERVER_H_
#define DEVICESHARE_AGENT_DRA_PLUGIN_SERVER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "deviceshare/agent/claim_preparer.h"

namespace deviceshare::agent {

// PluginInfo.type of a DRA driver.
inline constexpr char kDraPluginType[] = "DRAPlugin";
// PluginInfo.supported_versions entries, one per served API version.
inline constexpr char kDraV1Service[] = "v1.DRAPlugin";
inline constexpr char kDraV1beta1Service[] = "v1beta1.DRAPlugin";

struct DraPluginServerOptions {
  // The DRA driver name (a DNS subdomain), as DeviceClasses and
  // ResourceSlices name it.
  std::string driver_name = "gpu.deviceshare.io";
  // The DRA socket is `<plugin_dir>/<driver_name>/dra.sock`.
  std::string plugin_dir = "/var/lib/kubelet/plugins";
  // The registration socket is `<registry_dir>/<driver_name>-reg.sock`.
  std::string registry_dir = "/var/lib/kubelet/plugins_registry";
  // Which DRAPlugin versions to serve and advertise; at least one.
  bool serve_v1 = true;
  bool serve_v1beta1 = true;
  // How often the watchdog looks at the two socket files.
  absl::Duration watchdog_interval = absl::Seconds(1);
};

// What the server did so far; counters only grow.
struct DraPluginStats {
  int prepare_calls = 0;    // NodePrepareResources, both versions
  int unprepare_calls = 0;  // NodeUnprepareResources, both versions
  int v1beta1_calls = 0;    // of those, through v1beta1
  // Claims the preparer left out (each answered with an error entry) or
  // answered without being asked (dropped).
  int claims_left_out = 0;
  int claims_unasked = 0;
  int dra_serves = 0;              // times the DRA socket was served
  int registration_serves = 0;     // times the registration socket was served
  int registrations_notified = 0;  // NotifyRegistrationStatus calls
  // The error of the last NotifyRegistrationStatus; empty when kubelet
  // accepted the plugin (or has not answered yet).
  std::string last_registration_error;
};

class DraPluginServer {
 public:
  // `preparer` is not owned.
  DraPluginServer(DraPluginServerOptions options, ClaimPreparer* preparer);
  ~DraPluginServer();  // Stop()s

  DraPluginServer(const DraPluginServer&) = delete;
  DraPluginServer& operator=(const DraPluginServer&) = delete;

  // InvalidArgument for bad options (naming the field and value);
  // Unavailable when a folder cannot be created or a socket cannot be
  // served; FailedPrecondition when started already.
  absl::Status Start();

  // Idempotent; a stopped server may be started again. In-flight calls get
  // a second to finish.
  void Stop();

  DraPluginStats stats() const;
  // True when kubelet's last NotifyRegistrationStatus on the current
  // registration socket accepted the plugin.
  bool registered() const;
  // `<plugin_dir>/<driver_name>/dra.sock`.
  std::string dra_socket_path() const;
  // `<registry_dir>/<driver_name>-reg.sock`.
  std::string registration_socket_path() const;
  // What GetInfo advertises, in kubelet's order of preference.
  std::vector<std::string> supported_versions() const;
  const DraPluginServerOptions& options() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_DRA_PLUGIN_SERVER_H_
