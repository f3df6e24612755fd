// File: codec/annotation_keys.h
//
// The exact annotation and resource names of the two dialects
// (docs/reference/formats.md). One place, so no string is spelt twice.
#ifndef DEVICESHARE_CODEC_ANNOTATION_KEYS_H_
#define DEVICESHARE_CODEC_ANNOTATION_KEYS_H_

#include <string_view>
#include <vector>

namespace deviceshare::keys {

// Volcano: pod resources.
inline constexpr char kVolcanoGpuNumber[] = "volcano.sh/vgpu-number";
inline constexpr char kVolcanoGpuMemory[] = "volcano.sh/vgpu-memory";
inline constexpr char kVolcanoGpuMemoryPercentage[] =
    "volcano.sh/vgpu-memory-percentage";
inline constexpr char kVolcanoGpuCores[] = "volcano.sh/vgpu-cores";
// Volcano: pod annotations.
inline constexpr char kVolcanoMode[] = "volcano.sh/vgpu-mode";
// `spread`: no two pods of one podgroup on one GPU (Volcano's
// VGPUPodGroupPolicyAnnotation); the group is named by either key below,
// Kubernetes' first.
inline constexpr char kVolcanoPodGroupPolicy[] =
    "volcano.sh/vgpu-podgroup-policy";
inline constexpr char kVolcanoPodGroupSpread[] = "spread";
inline constexpr char kKubeGroupName[] = "scheduling.k8s.io/group-name";
inline constexpr char kVolcanoGroupName[] = "scheduling.volcano.sh/group-name";
inline constexpr char kVolcanoUseUuid[] = "volcano.sh/vgpu-use-gpuuuid";
inline constexpr char kVolcanoNoUseUuid[] = "volcano.sh/vgpu-nouse-gpuuuid";
inline constexpr char kVolcanoAllocation[] = "volcano.sh/vgpu-ids-new";
inline constexpr char kVolcanoToAllocate[] = "volcano.sh/devices-to-allocate";
inline constexpr char kVolcanoNode[] = "volcano.sh/vgpu-node";
inline constexpr char kVolcanoTime[] = "volcano.sh/vgpu-time";
inline constexpr char kVolcanoBindTime[] = "volcano.sh/bind-time";
inline constexpr char kVolcanoBindPhase[] = "volcano.sh/bind-phase";
// Volcano: node annotation.
inline constexpr char kVolcanoNodeRegister[] = "volcano.sh/node-vgpu-register";

// Shared by both dialects.
inline constexpr char kUseGpuType[] = "nvidia.com/use-gputype";
inline constexpr char kNoUseGpuType[] = "nvidia.com/nouse-gputype";
// The NVIDIA device plugin's mixed-strategy MIG resources:
// `nvidia.com/mig-<profile>`, e.g. `nvidia.com/mig-3g.40gb: 1`.
inline constexpr char kMigResourcePrefix[] = "nvidia.com/mig-";

// HAMi: pod resources (default names; DeviceConfig can rename them).
inline constexpr char kHamiGpu[] = "nvidia.com/gpu";
inline constexpr char kHamiGpuMemory[] = "nvidia.com/gpumem";
inline constexpr char kHamiGpuMemoryPercentage[] =
    "nvidia.com/gpumem-percentage";
inline constexpr char kHamiGpuCores[] = "nvidia.com/gpucores";
inline constexpr char kHamiPriority[] = "nvidia.com/priority";
// HAMi: pod annotations.
inline constexpr char kHamiUseUuid[] = "nvidia.com/use-gpuuuid";
inline constexpr char kHamiNoUseUuid[] = "nvidia.com/nouse-gpuuuid";
inline constexpr char kHamiNumaBind[] = "nvidia.com/numa-bind";
inline constexpr char kHamiMode[] = "nvidia.com/vgpu-mode";
inline constexpr char kHamiNodePolicy[] = "hami.io/node-scheduler-policy";
inline constexpr char kHamiGpuPolicy[] = "hami.io/gpu-scheduler-policy";
inline constexpr char kHamiDeviceScoringWeights[] =
    "hami.io/device-scoring-weights";
inline constexpr char kHamiAllocated[] = "hami.io/vgpu-devices-allocated";
inline constexpr char kHamiToAllocate[] = "hami.io/vgpu-devices-to-allocate";
// HAMi >= 2.10: the MIG instance of each MIG grant (JSON, see hami_codec.h).
inline constexpr char kHamiMigAllocations[] = "hami.io/vgpu-mig-allocations";
inline constexpr char kHamiNode[] = "hami.io/vgpu-node";
inline constexpr char kHamiTime[] = "hami.io/vgpu-time";
inline constexpr char kHamiBindTime[] = "hami.io/bind-time";
inline constexpr char kHamiBindPhase[] = "hami.io/bind-phase";
// HAMi: node annotation (JSON since v2.8, legacy string before).
inline constexpr char kHamiNodeRegister[] = "hami.io/node-nvidia-register";
// GPU pair scores (topology), JSON [{"uuid": ..., "score": {uuid: n}}].
inline constexpr char kHamiPairScore[] = "hami.io/node-nvidia-score";
// GPU uuids, comma-separated, that take no new pod.
inline constexpr char kHamiDeviceCordon[] = "hami.io/device-cordon";

// Bind phases (both dialects).
inline constexpr char kBindPhaseAllocating[] = "allocating";
inline constexpr char kBindPhaseSuccess[] = "success";
inline constexpr char kBindPhaseFailed[] = "failed";

// ---- Every name above, listed -------------------------------------------
// The names a pod or node carries (not the values such as bind phases), with
// the dialect they belong to and where they sit. docs/annotations.md is the
// user's table of them; tests/docs/annotation_table_test.cc fails when a name
// here is missing from it, or a constant above is missing here.

enum class KeyDialect { kVolcano, kHami, kBoth };
enum class KeyPlace {
  kPodResource,        // a container resource (limits; requests too)
  kPodResourcePrefix,  // a family of container resources: prefix + suffix
  kPodAnnotation,      // read from the pod
  kPodRecord,          // written on the pod by the scheduler (and read back)
  kNodeAnnotation,     // on the Node
};
struct KnownKey {
  const char* name;
  KeyDialect dialect;
  KeyPlace place;
};

inline constexpr KnownKey kKnownKeys[] = {
    // Volcano
    {kVolcanoGpuNumber, KeyDialect::kVolcano, KeyPlace::kPodResource},
    {kVolcanoGpuMemory, KeyDialect::kVolcano, KeyPlace::kPodResource},
    {kVolcanoGpuMemoryPercentage, KeyDialect::kVolcano,
     KeyPlace::kPodResource},
    {kVolcanoGpuCores, KeyDialect::kVolcano, KeyPlace::kPodResource},
    {kVolcanoMode, KeyDialect::kVolcano, KeyPlace::kPodAnnotation},
    {kVolcanoPodGroupPolicy, KeyDialect::kVolcano, KeyPlace::kPodAnnotation},
    {kKubeGroupName, KeyDialect::kVolcano, KeyPlace::kPodAnnotation},
    {kVolcanoGroupName, KeyDialect::kVolcano, KeyPlace::kPodAnnotation},
    {kVolcanoUseUuid, KeyDialect::kVolcano, KeyPlace::kPodAnnotation},
    {kVolcanoNoUseUuid, KeyDialect::kVolcano, KeyPlace::kPodAnnotation},
    {kVolcanoAllocation, KeyDialect::kVolcano, KeyPlace::kPodRecord},
    {kVolcanoToAllocate, KeyDialect::kVolcano, KeyPlace::kPodRecord},
    {kVolcanoNode, KeyDialect::kVolcano, KeyPlace::kPodRecord},
    {kVolcanoTime, KeyDialect::kVolcano, KeyPlace::kPodRecord},
    {kVolcanoBindTime, KeyDialect::kVolcano, KeyPlace::kPodRecord},
    {kVolcanoBindPhase, KeyDialect::kVolcano, KeyPlace::kPodRecord},
    {kVolcanoNodeRegister, KeyDialect::kVolcano, KeyPlace::kNodeAnnotation},
    // Both
    {kUseGpuType, KeyDialect::kBoth, KeyPlace::kPodAnnotation},
    {kNoUseGpuType, KeyDialect::kBoth, KeyPlace::kPodAnnotation},
    {kMigResourcePrefix, KeyDialect::kBoth, KeyPlace::kPodResourcePrefix},
    // HAMi
    {kHamiGpu, KeyDialect::kHami, KeyPlace::kPodResource},
    {kHamiGpuMemory, KeyDialect::kHami, KeyPlace::kPodResource},
    {kHamiGpuMemoryPercentage, KeyDialect::kHami, KeyPlace::kPodResource},
    {kHamiGpuCores, KeyDialect::kHami, KeyPlace::kPodResource},
    {kHamiPriority, KeyDialect::kHami, KeyPlace::kPodResource},
    {kHamiUseUuid, KeyDialect::kHami, KeyPlace::kPodAnnotation},
    {kHamiNoUseUuid, KeyDialect::kHami, KeyPlace::kPodAnnotation},
    {kHamiNumaBind, KeyDialect::kHami, KeyPlace::kPodAnnotation},
    {kHamiMode, KeyDialect::kHami, KeyPlace::kPodAnnotation},
    {kHamiNodePolicy, KeyDialect::kHami, KeyPlace::kPodAnnotation},
    {kHamiGpuPolicy, KeyDialect::kHami, KeyPlace::kPodAnnotation},
    {kHamiDeviceScoringWeights, KeyDialect::kHami, KeyPlace::kPodAnnotation},
    {kHamiAllocated, KeyDialect::kHami, KeyPlace::kPodRecord},
    {kHamiToAllocate, KeyDialect::kHami, KeyPlace::kPodRecord},
    {kHamiMigAllocations, KeyDialect::kHami, KeyPlace::kPodRecord},
    {kHamiNode, KeyDialect::kHami, KeyPlace::kPodRecord},
    {kHamiTime, KeyDialect::kHami, KeyPlace::kPodRecord},
    {kHamiBindTime, KeyDialect::kHami, KeyPlace::kPodRecord},
    {kHamiBindPhase, KeyDialect::kHami, KeyPlace::kPodRecord},
    {kHamiNodeRegister, KeyDialect::kHami, KeyPlace::kNodeAnnotation},
    {kHamiPairScore, KeyDialect::kHami, KeyPlace::kNodeAnnotation},
    {kHamiDeviceCordon, KeyDialect::kHami, KeyPlace::kNodeAnnotation},
};

// The names of one dialect (kVolcano or kHami) together with the shared
// ones; kBoth: the shared ones only.
inline std::vector<std::string_view> KnownAnnotationKeys(KeyDialect dialect) {
  std::vector<std::string_view> names;
  for (const KnownKey& key : kKnownKeys) {
    if (key.dialect == dialect || key.dialect == KeyDialect::kBoth) {
      names.emplace_back(key.name);
    }
  }
  return names;
}

}  // namespace deviceshare::keys

#endif  // DEVICESHARE_CODEC_ANNOTATION_KEYS_H_
