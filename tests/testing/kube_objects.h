// File: testing/kube_objects.h
//
// Kubernetes Node and Pod objects (JSON, as the API server sends them) in
// both dialects, for the extender's tests and benchmarks.
#ifndef DEVICESHARE_TESTS_TESTING_KUBE_OBJECTS_H_
#define DEVICESHARE_TESTS_TESTING_KUBE_OBJECTS_H_

#include <cstdint>
#include <string>

#include "nlohmann/json.hpp"

namespace deviceshare::testing {

struct NodeSpec {
  std::string name;
  int gpus = 8;
  int64_t memory_mib = 81920;
  int split = 10;
  std::string model = "NVIDIA-NVIDIA A100-SXM4-80GB";
  std::string mode = "hami-core";
};

// GPU uuids are GPU-<name>-<index>.
std::string GpuUuid(const std::string& node, int index);

// hami.io/node-nvidia-register (JSON form).
nlohmann::json HamiNodeObject(const NodeSpec& spec);
// volcano.sh/node-vgpu-register.
nlohmann::json VolcanoNodeObject(const NodeSpec& spec);

struct PodSpec {
  std::string namespace_name = "default";
  std::string name;
  std::string uid;  // default: "uid-" + name
  int gpus = 1;
  int64_t memory_mib = 0;  // 0: not given
  int cores = 0;           // 0: not given
};

// Container "main" with nvidia.com/gpu, gpumem, gpucores limits.
nlohmann::json HamiPodObject(const PodSpec& spec);
// Container "main" with volcano.sh/vgpu-number, vgpu-memory, vgpu-cores.
nlohmann::json VolcanoPodObject(const PodSpec& spec);

// HamiPodObject(spec) as the API server shows it once bound to `node` and
// served by its node agent: spec.nodeName set, phase Running, and HAMi's
// allocation record (vgpu-devices-allocated = -to-allocate, vgpu-node,
// vgpu-time and bind-time at `unix_seconds`, bind-phase success) granting
// each of its spec.gpus GPUs spec.memory_mib and spec.cores, on GPUs
// first_gpu, first_gpu + 1, ... of `node` (GpuUuid).
nlohmann::json HamiBoundPodObject(const PodSpec& spec, const std::string& node,
                                  int first_gpu,
                                  int64_t unix_seconds = 1767225600);

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_KUBE_OBJECTS_H_
