// File: config/device_config.h
//
// DeviceConfig: the `nvidia:` section of the device config map that Volcano
// (`volcano-vgpu-device-config`) and HAMi (`hami-scheduler-device`) both use,
// key `device-config.yaml`. Both shapes are accepted; see
// ParseDeviceConfigYaml in config/config_parser.h. A value type. Keys that a
// backend owns (the MIG geometries, say) are not here: they stay in
// Config::extensions for the backend to read (config/config_extension.h).
//
// Fractional knobs (deviceMemoryScaling: 1.5) are kept in thousandths so the
// core never computes with doubles.
#ifndef DEVICESHARE_CONFIG_DEVICE_CONFIG_H_
#define DEVICESHARE_CONFIG_DEVICE_CONFIG_H_

#include <cstdint>
#include <string>
#include <vector>

#include "deviceshare/model/sharing_mode.h"

namespace deviceshare {

// How HAMi's admission webhook treats `gpucores` (`gpuCorePolicy`); passed
// to the container as GPU_CORE_UTILIZATION_POLICY.
enum class GpuCorePolicy { kDefault, kForce, kDisable };

// A mode that a Volcano registration gives only GPUs of some models: any
// other GPU it registers in `mode` is read in the default mode, as Volcano's
// decodeNodeDevices reads a `mig` device whose type no knownMigGeometries
// entry lists as hami-core. `models` match as case-insensitive substrings of
// the registered type.
struct RegisteredModeModels {
  SharingMode mode;
  std::vector<std::string> models;

  bool operator==(const RegisteredModeModels& other) const = default;
};

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
  // resource is this many MiB. Volcano counts the same unit in its node
  // registration and allocation record too (codec/volcano_codec.h); HAMi's
  // are in MiB.
  int32_t memory_factor = 1;
  int64_t preconfigured_device_memory_mib = 0;  // preConfiguredDeviceMemory
  bool overwrite_env = false;       // NVIDIA_VISIBLE_DEVICES=none elsewhere
  bool disable_core_limit = false;  // disableCoreLimit
  GpuCorePolicy gpu_core_policy = GpuCorePolicy::kDefault;
  int32_t lib_cuda_log_level = -1;    // libCudaLogLevel; -1 = not set
  std::string runtime_class_name;     // runtimeClassName (webhook only)
  bool enable_numa_topology = false;  // enableNumaTopology
  // Not a key of the file: the owner of a mode fills it in when the config
  // is checked (config/config_extension.h), and reading a Volcano
  // registration applies it (k8s/node_parser.h).
  std::vector<RegisteredModeModels> volcano_mode_models;

  bool operator==(const DeviceConfig& other) const = default;
};

}  // namespace deviceshare

#endif  // DEVICESHARE_CONFIG_DEVICE_CONFIG_H_
