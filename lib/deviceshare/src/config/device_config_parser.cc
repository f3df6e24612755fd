#include "device_config_parser.h"

#include <cstdint>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deviceshare/config/config_fields.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::internal {
namespace {

using nlohmann::json;

constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();

constexpr absl::string_view kNvidiaKeys[] = {
    "resourceCountName",
    "resourceMemoryName",
    "resourceMemoryPercentageName",
    "resourceCoreName",
    "resourcePriorityName",
    "deviceSplitCount",
    "deviceMemoryScaling",
    "deviceCoreScaling",
    "defaultMemory",
    "defaultCores",
    "defaultGPUNum",
    "memoryFactor",
    "gpuMemoryFactor",
    "preConfiguredDeviceMemory",
    "overwriteEnv",
    "disableCoreLimit",
    "gpuCorePolicy",
    "libCudaLogLevel",
    "runtimeClassName",
    "enableNumaTopology",
};

absl::StatusOr<int32_t> ReadInt32(const json& value, absl::string_view path,
                                  int64_t min, int64_t max = kInt32Max) {
  DS_ASSIGN_OR_RETURN(int64_t v, ReadInteger(value, path, min, max));
  return static_cast<int32_t>(v);
}

absl::StatusOr<GpuCorePolicy> ReadGpuCorePolicy(const json& value,
                                                absl::string_view path) {
  DS_ASSIGN_OR_RETURN(std::string text,
                      ReadString(value, path, /*allow_empty=*/false));
  if (text == "default") return GpuCorePolicy::kDefault;
  if (text == "force") return GpuCorePolicy::kForce;
  if (text == "disable") return GpuCorePolicy::kDisable;
  return PathError(path, absl::StrCat(DescribeValue(value),
                                      " is not a core policy (want default, "
                                      "force or disable)"));
}

// Stores one key of the section into `c`. The two memory factors are
// collected apart so that a conflict between them can be reported.
absl::Status ParseKey(const std::string& key, const json& value,
                      absl::string_view path, DeviceConfig& c,
                      std::optional<int32_t>& memory_factor,
                      std::optional<int32_t>& gpu_memory_factor,
                      std::vector<std::string>& notices) {
  auto name = [](const json& v, absl::string_view p) {
    return ReadString(v, p, /*allow_empty=*/false);
  };
  if (key == "resourceCountName") {
    DS_ASSIGN_OR_RETURN(c.resource_count_name, name(value, path));
  } else if (key == "resourceMemoryName") {
    // HAMi accepts an empty one: no container then names its memory, and
    // every GPU request is exclusive (device.go defaultExclusiveCoreIfNeeded).
    DS_ASSIGN_OR_RETURN(c.resource_memory_name,
                        ReadString(value, path, /*allow_empty=*/true));
  } else if (key == "resourceMemoryPercentageName") {
    DS_ASSIGN_OR_RETURN(c.resource_memory_percentage_name, name(value, path));
  } else if (key == "resourceCoreName") {
    DS_ASSIGN_OR_RETURN(c.resource_core_name, name(value, path));
  } else if (key == "resourcePriorityName") {
    DS_ASSIGN_OR_RETURN(c.resource_priority_name, name(value, path));
  } else if (key == "deviceSplitCount") {
    DS_ASSIGN_OR_RETURN(c.device_split_count, ReadInt32(value, path, 1));
  } else if (key == "deviceMemoryScaling") {
    DS_ASSIGN_OR_RETURN(c.device_memory_scaling_milli,
                        ReadPositiveMilli(value, path));
  } else if (key == "deviceCoreScaling") {
    DS_ASSIGN_OR_RETURN(c.device_core_scaling_milli,
                        ReadPositiveMilli(value, path));
  } else if (key == "defaultMemory") {
    DS_ASSIGN_OR_RETURN(c.default_memory_mib,
                        ReadInteger(value, path, 0, kInt64Max));
  } else if (key == "defaultCores") {
    DS_ASSIGN_OR_RETURN(c.default_cores, ReadInt32(value, path, 0, 100));
  } else if (key == "defaultGPUNum") {
    DS_ASSIGN_OR_RETURN(c.default_gpu_num, ReadInt32(value, path, 1));
  } else if (key == "memoryFactor") {
    DS_ASSIGN_OR_RETURN(memory_factor, ReadInt32(value, path, 1));
  } else if (key == "gpuMemoryFactor") {
    DS_ASSIGN_OR_RETURN(gpu_memory_factor, ReadInt32(value, path, 1));
  } else if (key == "preConfiguredDeviceMemory") {
    DS_ASSIGN_OR_RETURN(c.preconfigured_device_memory_mib,
                        ReadInteger(value, path, 0, kInt64Max));
  } else if (key == "overwriteEnv") {
    DS_ASSIGN_OR_RETURN(c.overwrite_env, ReadBool(value, path));
  } else if (key == "disableCoreLimit") {
    DS_ASSIGN_OR_RETURN(c.disable_core_limit, ReadBool(value, path));
  } else if (key == "gpuCorePolicy") {
    DS_ASSIGN_OR_RETURN(c.gpu_core_policy, ReadGpuCorePolicy(value, path));
  } else if (key == "libCudaLogLevel") {
    // HAMi's chart documents 0|1|3|4; HAMi-core also reads 2 (its default,
    // warnings), so the whole 0..4 range is a level libvgpu.so understands.
    DS_ASSIGN_OR_RETURN(c.lib_cuda_log_level, ReadInt32(value, path, 0, 4));
  } else if (key == "runtimeClassName") {
    DS_ASSIGN_OR_RETURN(c.runtime_class_name,
                        ReadString(value, path, /*allow_empty=*/true));
    if (!c.runtime_class_name.empty()) {
      notices.push_back(absl::StrFormat(
          "%s: \"%s\" only affects an admission webhook (HAMi's sets it on "
          "GPU pods); deviceshare does not run one, so set runtimeClassName "
          "on the pods themselves",
          path, c.runtime_class_name));
    }
  } else if (key == "enableNumaTopology") {
    DS_ASSIGN_OR_RETURN(c.enable_numa_topology, ReadBool(value, path));
    if (c.enable_numa_topology) {
      notices.push_back(absl::StrFormat(
          "%s: kept for the node agent's device plugin (NUMA topology "
          "hints to kubelet), which is not built yet; the scheduler's NUMA "
          "binding is per pod (nvidia.com/numa-bind)",
          path));
    }
  } else {
    return PathError(path, "unknown key");
  }
  return absl::OkStatus();
}

}  // namespace

bool IsNvidiaSectionKey(absl::string_view key) {
  for (absl::string_view k : kNvidiaKeys) {
    if (k == key) return true;
  }
  return false;
}

absl::Status ParseNvidiaSection(
    const json& section, absl::string_view path,
    const std::function<bool(absl::string_view)>& owned, Config& whole) {
  if (section.is_null()) return absl::OkStatus();
  DS_RETURN_IF_ERROR(RequireMapping(section, path));
  DeviceConfig& config = whole.device;
  std::vector<std::string>& notices = whole.notices;
  // HAMi calls it memoryFactor, Volcano gpuMemoryFactor; either may be given.
  std::optional<int32_t> memory_factor;
  std::optional<int32_t> gpu_memory_factor;
  for (auto it = section.begin(); it != section.end(); ++it) {
    std::string key_path = KeyPath(path, it.key());
    if (owned(it.key())) {
      if (!it->is_null()) whole.extensions["nvidia"][it.key()] = *it;
      continue;
    }
    if (!IsNvidiaSectionKey(it.key())) {
      return PathError(key_path, "unknown key");
    }
    if (it->is_null()) continue;
    DS_RETURN_IF_ERROR(ParseKey(it.key(), *it, key_path, config, memory_factor,
                                gpu_memory_factor, notices));
  }
  if (memory_factor && gpu_memory_factor &&
      *memory_factor != *gpu_memory_factor) {
    return PathError(
        KeyPath(path, "gpuMemoryFactor"),
        absl::StrFormat("%d disagrees with %s: %d (they are the "
                        "same knob; give one)",
                        *gpu_memory_factor, KeyPath(path, "memoryFactor"),
                        *memory_factor));
  }
  if (memory_factor) config.memory_factor = *memory_factor;
  if (gpu_memory_factor) config.memory_factor = *gpu_memory_factor;
  return absl::OkStatus();
}

}  // namespace deviceshare::internal
