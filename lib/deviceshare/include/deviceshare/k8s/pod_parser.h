// File: k8s/pod_parser.h
//
// Turns a Kubernetes Pod object (JSON or YAML) into a PodRequest, reading
// both dialects:
//
//   Volcano: container limits (or requests) volcano.sh/vgpu-number,
//     vgpu-memory, vgpu-memory-percentage, vgpu-cores; annotations
//     volcano.sh/vgpu-mode, nvidia.com/use-gputype, nouse-gputype,
//     volcano.sh/vgpu-use-gpuuuid, vgpu-nouse-gpuuuid.
//   HAMi: nvidia.com/gpu, gpumem, gpumem-percentage, gpucores (names from
//     DeviceConfig); annotations nvidia.com/use-gputype, nouse-gputype,
//     use-gpuuuid, nouse-gpuuuid, numa-bind, vgpu-mode,
//     hami.io/node-scheduler-policy, hami.io/gpu-scheduler-policy.
//
// Defaults follow the upstream projects (shared/reference/formats.md,
// upstream-hami.md §3, upstream-volcano.md §7), with DeviceConfig's
// defaultMemory / defaultCores / defaultGPUNum honoured in both dialects.
// Init containers are parsed too (the pod needs max(init, sum of app)).
//
// Every error is InvalidArgument naming the pod, the container and the
// field, e.g. `pod default/a container main: nvidia.com/gpumem: "-3" is
// negative`. A pod that asks for no GPU is not an error.
#ifndef DEVICESHARE_K8S_POD_PARSER_H_
#define DEVICESHARE_K8S_POD_PARSER_H_

#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "deviceshare/config/device_config.h"
#include "deviceshare/model/pod_request.h"
#include "nlohmann/json_fwd.hpp"

namespace deviceshare {

absl::StatusOr<PodRequest> ParsePodRequest(const nlohmann::json& pod,
                                           const DeviceConfig& config);

// Parses one Pod document, JSON or YAML.
absl::StatusOr<PodRequest> ParsePodRequestText(absl::string_view text,
                                               const DeviceConfig& config);

}  // namespace deviceshare

#endif  // DEVICESHARE_K8S_POD_PARSER_H_
