// File: config/device_config.h
//
// DeviceConfig: the `nvidia:` section of the device config map that Volcano
// (`volcano-vgpu-device-config`) and HAMi (`hami-scheduler-device`) both use,
// key `device-config.yaml`. Both shapes are accepted; see
// ParseDeviceConfigYaml in config/config_parser.h. A value type.
//
// Fractional knobs (deviceMemoryScaling: 1.5) are kept in thousandths so the
// core never computes with doubles.
#ifndef DEVICESHARE_CONFIG_DEVICE_CONFIG_H_
#define DEVICESHARE_CONFIG_DEVICE_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

namespace deviceshare {

// One instance type of a MIG geometry: `{name: 1g.10gb, memory: 9728,
// count: 7}` (HAMi also gives `core`).
struct MigGeometryInstance {
  std::string name;
  int64_t memory_mib = 0;
  int32_t cores = 0;  // HAMi's `core`; 0 when the config omits it
  int32_t count = 0;

  bool operator==(const MigGeometryInstance& other) const = default;
};

// One whole-GPU geometry. Volcano names it (`group: group2`); HAMi's list of
// lists leaves the name empty.
struct MigGeometry {
  std::string group;
  std::vector<MigGeometryInstance> instances;

  bool operator==(const MigGeometry& other) const = default;
};

// `knownMigGeometries` entry: models (substrings of Gpu::model) and their
// allowed geometries, in config order.
struct KnownMigGeometries {
  std::vector<std::string> models;
  std::vector<MigGeometry> geometries;

  bool operator==(const KnownMigGeometries& other) const = default;
};

// HAMi >= 2.10 `migProfileAllowlist` entry.
struct MigProfileAllowlist {
  std::vector<std::string> models;
  std::vector<std::string> profiles;  // "1g.10gb", ...

  bool operator==(const MigProfileAllowlist& other) const = default;
};

// How HAMi's admission webhook treats `gpucores` (`gpuCorePolicy`); passed
// to the container as GPU_CORE_UTILIZATION_POLICY.
enum class GpuCorePolicy { kDefault, kForce, kDisable };

struct DeviceConfig {
  // Resource names (HAMi lets users rename them).
  std::string resource_count_name = "nvidia.com/gpu";
  std::string resource_memory_name = "nvidia.com/gpumem";
  std::string resource_memory_percentage_name = "nvidia.com/gpumem-percentage";
  std::string resource_core_name = "nvidia.com/gpucores";
  std::string resource_priority_name = "nvidia.com/priority";

  int32_t device_split_count = 10;             // deviceSplitCount
  int32_t device_memory_scaling_milli = 1000;  // deviceMemoryScaling x 1000
  int32_t device_core_scaling_milli = 1000;    // deviceCoreScaling x 1000
  int64_t default_memory_mib = 0;              // defaultMemory
  int32_t default_cores = 0;                   // defaultCores
  int32_t default_gpu_num = 1;                 // defaultGPUNum
  // memoryFactor (HAMi) / gpuMemoryFactor (Volcano): one unit of the memory
  // resource is this many MiB.
  int32_t memory_factor = 1;
  int64_t preconfigured_device_memory_mib = 0;  // preConfiguredDeviceMemory
  bool overwrite_env = false;       // NVIDIA_VISIBLE_DEVICES=none elsewhere
  bool disable_core_limit = false;  // disableCoreLimit
  GpuCorePolicy gpu_core_policy = GpuCorePolicy::kDefault;
  int32_t lib_cuda_log_level = -1;    // libCudaLogLevel; -1 = not set
  std::string runtime_class_name;     // runtimeClassName (webhook only)
  bool enable_numa_topology = false;  // enableNumaTopology

  std::vector<KnownMigGeometries> known_mig_geometries;
  std::vector<MigProfileAllowlist> mig_profile_allowlist;

  bool operator==(const DeviceConfig& other) const = default;
};

}  // namespace deviceshare

#endif  // DEVICESHARE_CONFIG_DEVICE_CONFIG_H_
