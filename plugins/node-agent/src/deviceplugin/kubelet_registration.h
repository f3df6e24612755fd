// File: deviceplugin/kubelet_registration.h
//
// The one call a device plugin makes to kubelet: Register on kubelet.sock.
// Kubelet dials the plugin's endpoint and calls GetDevicePluginOptions
// before it answers, so the plugin must already be serving.
//
// Thread safety: a free function; concurrent calls are independent.
#ifndef DEVICESHARE_AGENT_DEVICEPLUGIN_KUBELET_REGISTRATION_H_
#define DEVICESHARE_AGENT_DEVICEPLUGIN_KUBELET_REGISTRATION_H_

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "deviceshare/agent/device_plugin_server.h"

namespace deviceshare::agent::deviceplugin {

inline constexpr char kDevicePluginVersion[] = "v1beta1";
inline constexpr char kKubeletSocketName[] = "kubelet.sock";

// Register{version v1beta1, endpoint, resource_name, options} on
// `kubelet_socket`. The error carries kubelet's code and message, prefixed
// with the socket path.
absl::Status RegisterWithKubelet(const std::string& kubelet_socket,
                                 const DevicePluginServerOptions& options,
                                 const std::string& endpoint,
                                 absl::Duration timeout);

}  // namespace deviceshare::agent::deviceplugin

#endif  // DEVICESHARE_AGENT_DEVICEPLUGIN_KUBELET_REGISTRATION_H_
