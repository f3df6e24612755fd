#include "testing/kube_objects.h"

#include "absl/strings/str_cat.h"

namespace deviceshare::testing {
namespace {

nlohmann::json NodeWith(const NodeSpec& spec, const std::string& key,
                        const std::string& value) {
  return {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"metadata", {{"name", spec.name}, {"annotations", {{key, value}}}}},
          {"status", {{"allocatable", {{"cpu", "64"}, {"memory", "256Gi"}}}}}};
}

nlohmann::json PodWith(const PodSpec& spec, nlohmann::json limits) {
  return {{"apiVersion", "v1"},
          {"kind", "Pod"},
          {"metadata",
           {{"name", spec.name},
            {"namespace", spec.namespace_name},
            {"uid", spec.uid.empty() ? "uid-" + spec.name : spec.uid}}},
          {"spec",
           {{"schedulerName", "deviceshare-scheduler"},
            {"containers",
             {{{"name", "main"},
               {"image", "cuda"},
               {"resources", {{"limits", std::move(limits)}}}}}}}},
          {"status", {{"phase", "Pending"}}}};
}

}  // namespace

std::string GpuUuid(const std::string& node, int index) {
  return absl::StrCat("GPU-", node, "-", index);
}

nlohmann::json HamiNodeObject(const NodeSpec& spec) {
  nlohmann::json devices = nlohmann::json::array();
  for (int i = 0; i < spec.gpus; ++i) {
    devices.push_back({{"id", GpuUuid(spec.name, i)},
                       {"index", i},
                       {"count", spec.split},
                       {"devmem", spec.memory_mib},
                       {"devcore", 100},
                       {"type", spec.model},
                       {"numa", i < spec.gpus / 2 ? 0 : 1},
                       {"mode", spec.mode},
                       {"health", true}});
  }
  return NodeWith(spec, "hami.io/node-nvidia-register", devices.dump());
}

nlohmann::json VolcanoNodeObject(const NodeSpec& spec) {
  std::string value;
  for (int i = 0; i < spec.gpus; ++i) {
    absl::StrAppend(&value, GpuUuid(spec.name, i), ",", spec.split, ",",
                    spec.memory_mib, ",", spec.model, ",true,", spec.mode, ":");
  }
  return NodeWith(spec, "volcano.sh/node-vgpu-register", value);
}

nlohmann::json HamiPodObject(const PodSpec& spec) {
  nlohmann::json limits = {{"nvidia.com/gpu", std::to_string(spec.gpus)}};
  if (spec.memory_mib > 0) {
    limits["nvidia.com/gpumem"] = std::to_string(spec.memory_mib);
  }
  if (spec.cores > 0)
    limits["nvidia.com/gpucores"] = std::to_string(spec.cores);
  return PodWith(spec, std::move(limits));
}

nlohmann::json HamiBoundPodObject(const PodSpec& spec, const std::string& node,
                                  int first_gpu, int64_t unix_seconds) {
  nlohmann::json pod = HamiPodObject(spec);
  std::string record;
  for (int i = 0; i < spec.gpus; ++i) {
    absl::StrAppend(&record, GpuUuid(node, first_gpu + i), ",NVIDIA,",
                    spec.memory_mib, ",", spec.cores, ":");
  }
  record += ";";
  const std::string time = std::to_string(unix_seconds);
  pod["metadata"]["annotations"] = {
      {"hami.io/vgpu-devices-allocated", record},
      {"hami.io/vgpu-devices-to-allocate", record},
      {"hami.io/vgpu-node", node},
      {"hami.io/vgpu-time", time},
      {"hami.io/bind-time", time},
      {"hami.io/bind-phase", "success"}};
  pod["spec"]["nodeName"] = node;
  pod["status"]["phase"] = "Running";
  return pod;
}

nlohmann::json VolcanoPodObject(const PodSpec& spec) {
  nlohmann::json limits = {
      {"volcano.sh/vgpu-number", std::to_string(spec.gpus)}};
  if (spec.memory_mib > 0) {
    limits["volcano.sh/vgpu-memory"] = std::to_string(spec.memory_mib);
  }
  if (spec.cores > 0) {
    limits["volcano.sh/vgpu-cores"] = std::to_string(spec.cores);
  }
  return PodWith(spec, std::move(limits));
}

}  // namespace deviceshare::testing
