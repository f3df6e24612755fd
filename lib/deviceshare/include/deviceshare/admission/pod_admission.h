// File: admission/pod_admission.h
//
// The decision of deviceshare's mutating admission webhook for one Pod, as
// HAMi's webhook makes it (upstream-hami.md §3: webhook.go and the NVIDIA
// device's MutateAdmission), restated for both dialects. Pure: the Pod
// object in, a verdict and an RFC 6902 JSON patch out.
//
// Which pods: one whose containers (init or app, limits or requests) name
// a GPU resource of either dialect -- HAMi's nvidia.com/gpu, gpumem,
// gpumem-percentage, gpucores under the names DeviceConfig gives them, or
// Volcano's volcano.sh/vgpu-number, vgpu-memory, vgpu-memory-percentage,
// vgpu-cores -- is a GPU pod; the deploy kit's matchConditions send the
// webhook exactly those. Any other pod is allowed untouched, and so is a
// pod whose spec.schedulerName names another scheduler (empty,
// `default-scheduler` and our own name are taken over).
//
// A GPU pod gets spec.schedulerName = the configured name, and:
//   HAMi containers: gpumem-percentage must be 0..100; gpumem / gpucores /
//     percentage without the count get count = defaultGPUNum (none when it
//     is 0); then a container with the count, no gpucores and exclusive
//     memory (percentage 100, or no percentage and no gpumem) gets
//     gpucores 100 (defaultExclusiveCoreIfNeeded: HAMi applies it after
//     the count rule, and so do we; defaultMemory plays no part);
//     nvidia.com/priority (resourcePriorityName) in limits becomes env
//     CUDA_TASK_PRIORITY; gpuCorePolicy force|disable becomes env
//     GPU_CORE_UTILIZATION_POLICY; runtimeClassName, when configured, is
//     set unless the pod names one.
//   Volcano containers: no defaults and no env (Volcano's own admission
//     adds none for vGPU; its device plugin sets the env), only the range
//     check our pod parser would refuse anyway: vgpu-memory-percentage and
//     vgpu-cores 0..100.
//   Containers naming no GPU resource: NVIDIA_VISIBLE_DEVICES=none when
//     overwriteEnv is set.
//   The pod is refused when a container is privileged (it would see every
//     GPU of its node; HAMi refuses it, and we do in both dialects), when
//     spec.nodeName is already set (it would bypass the scheduler, and its
//     GPUs would be counted nowhere), and when the mutated pod is one the
//     scheduler's own pod parser refuses (k8s/pod_parser.h: a negative
//     gpumem, an unknown volcano.sh/vgpu-* name, a HAMi gpu policy we do not
//     serve...), so that a pod that could never be placed fails at once
//     instead of pending.
//
// Differences from HAMi, deliberate: the env rules touch GPU pods only (HAMi
// also patches pods without GPUs, which the webhook never sees here); the
// GPU_CORE_UTILIZATION_POLICY and CUDA_TASK_PRIORITY env go to the
// containers that ask for a GPU, not to every container; the namespace
// ResourceQuota check is left to the scheduler's filter (it needs cluster
// state), which refuses such a pod with QuotaExceeded.
//
// Refusal messages name the field and the value, e.g.
//   spec.containers[1].resources.limits["nvidia.com/gpumem-percentage"]:
//   150 is outside 0..100
#ifndef DEVICESHARE_ADMISSION_POD_ADMISSION_H_
#define DEVICESHARE_ADMISSION_POD_ADMISSION_H_

#include <string>

#include "deviceshare/config/device_config.h"
#include "nlohmann/json.hpp"

namespace deviceshare::admission {

inline constexpr char kDefaultSchedulerName[] = "deviceshare-scheduler";

struct AdmissionSettings {
  DeviceConfig device;
  // Written to spec.schedulerName (serve's --scheduler-name).
  std::string scheduler_name = kDefaultSchedulerName;
};

struct PodAdmission {
  bool allowed = true;
  // RFC 6902 operations against the pod as sent; empty: leave it as it is.
  nlohmann::json patch = nlohmann::json::array();
  // Why the pod is refused; for an allowed pod, a note for the log.
  std::string message;
};

// The verdict on `pod` (the Pod object of the admission request). Never
// throws; a pod that is not an object, or whose spec or containers have the
// wrong shape, is refused with a message naming the field.
PodAdmission AdmitPod(const nlohmann::json& pod,
                      const AdmissionSettings& settings);

}  // namespace deviceshare::admission

#endif  // DEVICESHARE_ADMISSION_POD_ADMISSION_H_
