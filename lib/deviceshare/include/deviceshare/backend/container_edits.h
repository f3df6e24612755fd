// File: backend/container_edits.h
//
// ContainerEdits: what the node agent injects into one container so that
// its GPU share is enforced: environment variables, mounts and device ids
// (the kubelet device plugin's ContainerAllocateResponse, or a CDI edit).
// A value type.
#ifndef DEVICESHARE_BACKEND_CONTAINER_EDITS_H_
#define DEVICESHARE_BACKEND_CONTAINER_EDITS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace deviceshare {

struct Mount {
  std::string host_path;
  std::string container_path;
  bool read_only = true;

  bool operator==(const Mount& other) const = default;
};

struct ContainerEdits {
  // In the order they should be set; names are unique.
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<Mount> mounts;
  std::vector<std::string> device_ids;  // GPU or MIG uuids

  bool operator==(const ContainerEdits& other) const = default;
};

// The per-container facts edits depend on. Node-wide settings (memory
// oversubscription, core policy, log level) come from the DeviceConfig the
// backend was made with.
struct EditOptions {
  // Where the node agent keeps libvgpu.so, ld.so.preload and the
  // per-container cache directories on the host (HAMi's HOOK_PATH).
  std::string hook_path = "/usr/local/vgpu";
  // Where the node's MPS server keeps its pipe/, log/ and shm/ directories
  // on the host.
  std::string mps_root = "/run/deviceshare/mps";
  std::string pod_uid;
  std::string container_name;
  // ContainerRequest::task_priority: CUDA_TASK_PRIORITY for libvgpu.so.
  std::optional<int32_t> task_priority;
};

// The edits of a container that was granted no GPU, whichever backend
// serves its pod: NVIDIA_VISIBLE_DEVICES=none when the config's overwriteEnv
// asks for it (HAMi's webhook, device.go MutateAdmission), since the NVIDIA
// runtime may otherwise show it every GPU (volcano-vgpu-device-plugin #40);
// nothing otherwise.
ContainerEdits GpulessContainerEdits(bool overwrite_env);

}  // namespace deviceshare

#endif  // DEVICESHARE_BACKEND_CONTAINER_EDITS_H_
