// File: model/pod_request.h
//
// PodRequest: what a pod asks of the GPUs, independent of the dialect
// (Volcano or HAMi) it was written in. Built by ParsePodRequest
// (k8s/pod_parser.h) or by hand. A value type.
//
// Container order is the pod's: init containers first (in spec order), then
// app containers. A container's index in `containers` is its identity in the
// ledger and in PodAllocation.
//
// Init containers run one at a time before the app containers, so on each
// GPU a pod holds max(largest init container, sum of app containers), not
// the sum of all.
#ifndef DEVICESHARE_MODEL_POD_REQUEST_H_
#define DEVICESHARE_MODEL_POD_REQUEST_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/string_view.h"
#include "deviceshare/model/sharing_mode.h"

namespace deviceshare {

// Which annotations and resource names a pod used; allocations are written
// back in the same dialect.
enum class Dialect {
  kVolcano,  // volcano.sh/vgpu-*
  kHami,     // nvidia.com/gpu, gpumem, gpucores, hami.io/*
};

absl::string_view DialectName(Dialect dialect);  // "volcano" / "hami"

struct ContainerRequest {
  std::string name;
  bool is_init = false;
  // Number of GPUs, each a distinct physical GPU. 0: the container uses none.
  int32_t gpu_count = 0;
  // Memory per GPU in MiB. When 0, memory_percent applies.
  int64_t memory_mib = 0;
  // Percent (1..100) of each card's memory, used when memory_mib == 0.
  // 0 with memory_mib == 0 means the whole card.
  int32_t memory_percent = 0;
  // Percent of one GPU's SMs (0..100). 100 = the GPU exclusively.
  int32_t cores = 0;
  // A MIG GPU-instance profile named by the pod ("3g.40gb", from the
  // device plugin's `nvidia.com/mig-3g.40gb` resource). Empty: the mig
  // backend picks the smallest profile that holds memory and cores.
  std::string mig_profile;
  // HAMi's nvidia.com/priority (resourcePriorityName): the container runs
  // with CUDA_TASK_PRIORITY set to it; unset when the pod names none.
  std::optional<int32_t> task_priority;
  // The extended resource the GPU count was asked by ("nvidia.com/gpu" or
  // its configured name, "volcano.sh/vgpu-number"): kubelet calls only the
  // device plugin that serves it, so only a node advertising it can give
  // the container its share. Empty when not known (MIG resources, requests
  // built by hand or from traces): not checked.
  std::string count_resource;

  bool wants_gpu() const { return gpu_count > 0; }
  bool exclusive() const { return cores >= 100; }
  // The memory this container needs on a GPU with `capacity_mib`.
  int64_t MemoryOn(int64_t capacity_mib) const;

  bool operator==(const ContainerRequest& other) const = default;
};

// One of the pod's spec.resourceClaims (DRA), resolved to the
// ResourceClaim object in the pod's namespace that serves it.
struct PodClaim {
  std::string name;  // the pod's name for it (containers' resources.claims)
  // The ResourceClaim: resourceClaimName, or for a template the claim
  // generated for this pod (pod.status.resourceClaimStatuses); "" while
  // that claim is not created yet.
  std::string claim_name;
  std::string template_name;  // resourceClaimTemplateName; "" for a claim

  bool operator==(const PodClaim& other) const = default;
};

struct PodRequest {
  std::string uid;  // metadata.uid, or "namespace/name" when absent
  std::string namespace_name = "default";
  std::string name;
  Dialect dialect = Dialect::kHami;
  std::vector<ContainerRequest> containers;  // init first, then app

  // Sharing mode the pod insists on; unset = any the node offers.
  std::optional<SharingMode> mode;
  // hami.io/vgpu-mode as written when it names no single mode, e.g.
  // "hami-core,mig": a GPU serves the pod when its mode's name occurs in it
  // (HAMi's checkType, strings.Contains). Empty: no such constraint.
  std::string modes_text;
  // Model filters: case-insensitive substrings of Gpu::model. A GPU must
  // match one entry of `use_models` (if any) and no entry of `avoid_models`.
  std::vector<std::string> use_models;
  std::vector<std::string> avoid_models;
  // UUID filters: exact. The avoid list wins.
  std::vector<std::string> use_uuids;
  std::vector<std::string> avoid_uuids;
  // All GPUs of one container on one NUMA node.
  bool numa_bind = false;
  // The pod's podgroup, "namespace/group" (scheduling.k8s.io/group-name,
  // else scheduling.volcano.sh/group-name); "" for none. With
  // `spread_group` (volcano.sh/vgpu-podgroup-policy: spread) the pod takes
  // no GPU that a pod of its group already uses.
  std::string group_key;
  bool spread_group = false;
  // Per-pod policy overrides (hami.io/node-scheduler-policy,
  // hami.io/gpu-scheduler-policy): a policy's registry name, lower case;
  // for the GPU level possibly a comma list of them ("binpack,numa").
  std::optional<std::string> node_policy;
  std::optional<std::string> gpu_policy;
  // hami.io/device-scoring-weights as written ("slot=1,core=1,memory=3");
  // the scheduler reads it, and refuses the pod when it does not read.
  std::optional<std::string> scoring_weights;

  // Non-GPU resources, max(init, sum of app) over containers. 0 = not asked.
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;

  // DRA: the ResourceClaims the pod uses (spec.resourceClaims), served by
  // the DRA allocator beside any GPUs asked for above.
  std::vector<PodClaim> claims;

  // "namespace/name".
  std::string Key() const;
  // Whether a GPU or backend of `m` may serve the pod (`mode`, then
  // `modes_text`).
  bool AcceptsMode(const SharingMode& m) const {
    if (mode) return *mode == m;
    return modes_text.empty() || absl::StrContains(modes_text, m.name());
  }
  // Whether the pod picks its GPUs by model or uuid (an allow or deny list).
  bool NamesGpuFilters() const {
    return !use_models.empty() || !avoid_models.empty() || !use_uuids.empty() ||
           !avoid_uuids.empty();
  }
  // Whether the pod names its mode at all.
  bool NamesMode() const { return mode.has_value() || !modes_text.empty(); }
  bool HasGpuRequest() const;
  bool HasClaims() const { return !claims.empty(); }

  bool operator==(const PodRequest& other) const = default;
};

}  // namespace deviceshare

#endif  // DEVICESHARE_MODEL_POD_REQUEST_H_
