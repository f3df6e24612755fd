// File: agent/device_plugin_server.h
//
// DevicePluginServer: the plugin side of kubelet's device plugin API
// (v1beta1) for one extended resource ("nvidia.com/gpu",
// "volcano.sh/vgpu-number"). It is gRPC plumbing only: which ids exist and
// whether they are healthy comes from SetDevices(); what a container gets
// is decided by the ContainerAllocator (agent/container_allocator.h).
//
// Life cycle, as kubelet expects it:
//   Start()  removes a stale `<dir>/<endpoint>`, serves DevicePlugin on it,
//            calls Register on `<dir>/kubelet.sock` and starts a watchdog.
//   watchdog every `watchdog_interval`: when the socket file is gone or is
//            not the one it created (kubelet deletes every socket when it
//            restarts), serves again on a fresh socket and registers again;
//            when kubelet.sock was replaced (another inode), registers
//            again; when registering failed (kubelet not up yet), retries
//            with exponential backoff.
//   Stop()   ends open ListAndWatch streams, stops serving, removes the
//            socket file when it is still ours.
//
// Usage:
//   DevicePluginServer server({.resource_name = "nvidia.com/gpu"}, &alloc);
//   DS_RETURN_IF_ERROR(server.Start());
//   server.SetDevices({{"GPU-a::0", true, 0}, {"GPU-a::1", true, 0}});
//
// Thread safety: every method may be called from any thread at any time;
// Start/Stop are serialized. The allocator is called from gRPC's threads,
// several at once, and must outlive the server.
#ifndef DEVICESHARE_AGENT_DEVICE_PLUGIN_SERVER_H_
#define DEVICESHARE_AGENT_DEVICE_PLUGIN_SERVER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "deviceshare/agent/container_allocator.h"

namespace deviceshare::agent {

// One id as ListAndWatch advertises it.
struct AdvertisedDevice {
  std::string id;  // "<gpu-uuid>::<replica>"
  bool healthy = true;
  int numa_node = -1;  // -1: no topology sent

  bool operator==(const AdvertisedDevice& other) const = default;
};

struct DevicePluginServerOptions {
  // Where kubelet.sock lives and where the plugin's socket is created.
  std::string device_plugin_dir = "/var/lib/kubelet/device-plugins";
  // "<domain>/<name>".
  std::string resource_name = "nvidia.com/gpu";
  // The socket's file name in device_plugin_dir (no '/'); empty means
  // DefaultEndpoint(resource_name).
  std::string endpoint;
  // Sent to kubelet in Register and GetDevicePluginOptions.
  bool pre_start_required = true;
  bool get_preferred_allocation = true;
  // How often the watchdog looks at the two socket files.
  absl::Duration watchdog_interval = absl::Seconds(1);
  // Backoff between failed Register calls: doubles from the first value up
  // to the second.
  absl::Duration register_backoff_initial = absl::Milliseconds(200);
  absl::Duration register_backoff_max = absl::Seconds(30);
  // Deadline of one Register call (kubelet dials back and calls
  // GetDevicePluginOptions before it answers).
  absl::Duration register_timeout = absl::Seconds(10);
};

// What the server did so far; counters only grow.
struct DevicePluginStats {
  int serves = 0;         // times a gRPC server was started on the socket
  int registrations = 0;  // successful Register calls
  int register_failures = 0;
  int list_and_watch_streams = 0;  // streams opened by kubelet
  int list_and_watch_sends = 0;    // device lists sent on them
  int preferred_calls = 0;
  int allocate_calls = 0;
  int prestart_calls = 0;
  int errors = 0;  // calls answered with an error status
};

// "deviceshare-<resource with '/' as '-'>.sock":
// "nvidia.com/gpu" -> "deviceshare-nvidia.com-gpu.sock".
std::string DefaultEndpoint(absl::string_view resource_name);

class DevicePluginServer {
 public:
  // `allocator` is not owned.
  DevicePluginServer(DevicePluginServerOptions options,
                     ContainerAllocator* allocator);
  ~DevicePluginServer();  // Stop()s

  DevicePluginServer(const DevicePluginServer&) = delete;
  DevicePluginServer& operator=(const DevicePluginServer&) = delete;

  // InvalidArgument for bad options (naming the field and value);
  // Unavailable when the socket cannot be served; FailedPrecondition when
  // started already. A kubelet that is not up yet is not an error: the
  // watchdog registers once kubelet.sock appears. The first Register is
  // made here, so Start() may take up to register_timeout.
  absl::Status Start();

  // Idempotent; a stopped server may be started again. Waits for a
  // Register call in flight (at most register_timeout).
  void Stop();

  // The full list of ids to advertise. When it differs from the last one,
  // every open ListAndWatch stream is sent the new list at once. May be
  // called before Start().
  void SetDevices(std::vector<AdvertisedDevice> devices);

  std::vector<AdvertisedDevice> devices() const;
  DevicePluginStats stats() const;
  // True when the last Register succeeded and the kubelet.sock it went to
  // has not changed since (as the watchdog last saw it).
  bool registered() const;
  // `<device_plugin_dir>/<endpoint>`.
  std::string socket_path() const;
  const DevicePluginServerOptions& options() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_DEVICE_PLUGIN_SERVER_H_
