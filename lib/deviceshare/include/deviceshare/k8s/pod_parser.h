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
//   Both: the NVIDIA device plugin's mixed-strategy MIG resources
//     `nvidia.com/mig-<profile>: N` (e.g. nvidia.com/mig-3g.40gb: 1): N
//     instances of that profile (gpu_count N, mig_profile; memory and cores
//     stay 0, the profile decides them), and the pod's mode becomes mig. A
//     vgpu-mode annotation naming another mode, another GPU resource or a
//     second MIG resource in the same container, or a name that is not a MIG
//     profile is an error naming the resource. The name picks no dialect: a
//     pod whose containers name only such resources (or none) is in the
//     Volcano dialect when it carries a `volcano.sh/` annotation, else HAMi.
//
// Defaults follow the upstream projects (docs/reference/formats.md,
// upstream-hami.md §3, upstream-volcano.md §7), with DeviceConfig's
// defaultMemory / defaultCores / defaultGPUNum honoured in both dialects.
// Init containers are parsed too (the pod needs max(init, sum of app)).
//
// HAMi's admission webhook also rewrites pods before its scheduler sees
// them; so that pods that skip deviceshare's webhook (admission/) land as
// the ones that pass it, the parser applies those rules in HAMi's order:
// gpumem / gpucores / percentage without a count ask for defaultGPUNum
// GPUs, then a container whose memory is exclusive (percentage 100, or
// neither gpumem nor percentage and no defaultMemory) that names no
// gpucores gets cores = 100 (defaultExclusiveCoreIfNeeded). A memory amount
// wins over a percentage; a 0 amount or percentage counts as not given.
// cpu_milli / memory_mib follow Kubernetes (requests, else limits; sidecar
// init containers run beside the app containers); a sidecar that asks for
// a GPU is rejected, as is a HAMi gpu policy deviceshare does not implement
// (topology-aware, numa, mutex, chains).
//
// Every error is InvalidArgument naming the pod, the container and the
// field, e.g. `pod default/a container main: nvidia.com/gpumem: "-3" is
// negative`. A pod that asks for no GPU is not an error.
#ifndef DEVICESHARE_K8S_POD_PARSER_H_
#define DEVICESHARE_K8S_POD_PARSER_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
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
