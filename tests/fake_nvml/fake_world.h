// File: tests/fake_nvml/fake_world.h
//
// The fake NVML's world: the GPUs of the inventory file named by
// FAKE_NVML_INVENTORY (re-read whenever its path, mtime, size or inode
// changes, so tests flip health by rewriting it) and the MIG instances kept
// in the JSON file named by FAKE_NVML_STATE (so a restarted process sees
// them; in memory only when the variable is unset).
//
// Inventory format: the agent's inventory file, `gpus: [...]` (YAML or
// JSON), with the keys `discover --output json` prints plus, per GPU:
//   pci_bus_id: "00000000:3B:00.0"   default 00000000:<0x10+index>:00.0
//   cc: [9, 0]                       absent: compute capability unsupported
//   mig_mode: true                   current MIG mode (alias mig_enabled)
//   mig_profiles: [{name, id, slices, instances, sm, memory_mib,
//                   memory_slices, starts: [..], index}]  index defaults to
//       the position; a known 8-slice part (pci_device_id) that is
//       mig_capable without them gets the H100-80GB table.
//   nvlinks: {peer_index: lanes}     absent: NVLink unsupported
//   xid: [79]                        critical xids pending (re-queued on
//                                    every reload of the file)
//   lost: true                       data calls answer GPU_IS_LOST
// `health`, `health_reason`, `links` and `mig_instances` are accepted and
// ignored (MIG instances live in the state file). Other keys are errors.
//
// Handles are tagged integers, never dereferenced, so an unknown or stale
// handle is INVALID_ARGUMENT instead of a crash.
//
// Thread safety: every exported call holds WorldMutex().
#ifndef DEVICESHARE_TESTS_FAKE_NVML_FAKE_WORLD_H_
#define DEVICESHARE_TESTS_FAKE_NVML_FAKE_WORLD_H_

#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gpu_abi/nvml_abi.h"

#define FAKE_NVML_EXPORT extern "C" __attribute__((visibility("default")))

namespace fake_nvml {

struct Profile {
  unsigned index = 0;  // NVML_GPU_INSTANCE_PROFILE_* constant
  unsigned id = 0;
  std::string name;  // without "MIG "
  unsigned slices = 0;
  unsigned instances = 0;
  unsigned sm = 0;
  unsigned long long memory_mib = 0;
  unsigned memory_slices = 0;
  std::vector<unsigned> starts;
};

struct Gpu {
  std::string uuid;
  unsigned index = 0;
  std::string name;
  unsigned long long memory_mib = 0;
  unsigned sm_count = 0;
  unsigned pci_device_id = 0;
  std::string bus_id;
  std::optional<std::pair<int, int>> cc;
  bool mig_capable = false;
  bool mig_mode = false;
  std::vector<Profile> profiles;
  std::map<unsigned, unsigned> nvlinks;  // peer index -> lanes
  std::vector<unsigned long long> xids;
  bool lost = false;
  int numa = 0;
};

struct ComputeInstance {
  unsigned id = 0;
  unsigned profile_id = 0;
  unsigned start = 0;
  unsigned size = 0;
};

struct GpuInstance {
  unsigned id = 0;
  unsigned profile_id = 0;
  unsigned start = 0;
  unsigned size = 0;
  std::vector<ComputeInstance> cis;
};

// Parses an inventory document (YAML or JSON text). False with `error` set
// on bad input.
bool ParseInventory(const std::string& text, std::vector<Gpu>& gpus,
                    std::string& error);

std::mutex& WorldMutex();

// Init refcount; the other calls answer UNINITIALIZED at 0.
int& InitCount();

// Reloads what changed. False (and a message on stderr) when the inventory
// cannot be read; the last good one stays.
bool Refresh(std::string* error = nullptr);
const std::vector<Gpu>& Gpus();

// The GPU instances of `uuid` (mutable); SaveState() after changing them.
std::vector<GpuInstance>& Instances(const std::string& uuid);
void SaveState();

// Xids not yet delivered, per GPU uuid.
std::deque<unsigned long long>& PendingXids(const std::string& uuid);

// Handles.
nvmlDevice_t DeviceHandle(unsigned gpu);
nvmlDevice_t MigDeviceHandle(unsigned gpu, unsigned gi, unsigned ci);
nvmlGpuInstance_t GpuInstanceHandle(unsigned gpu, unsigned gi);
nvmlComputeInstance_t ComputeInstanceHandle(unsigned gpu, unsigned gi,
                                            unsigned ci);

// Decoded handles; nullptr / false for anything unknown now.
const Gpu* FullGpu(nvmlDevice_t device);
struct MigRef {
  const Gpu* gpu = nullptr;
  GpuInstance* gi = nullptr;
  ComputeInstance* ci = nullptr;
};
bool MigDevice(nvmlDevice_t device, MigRef& out);
bool GpuInstanceOf(nvmlGpuInstance_t handle, MigRef& out);
bool ComputeInstanceOf(nvmlComputeInstance_t handle, MigRef& out);

const Profile* ProfileById(const Gpu& gpu, unsigned id);

// "MIG-" + a deterministic UUID of (gpu uuid, gi, ci).
std::string MigUuid(const std::string& gpu_uuid, unsigned gi, unsigned ci);

// Copies `text` into an NVML string buffer.
nvmlReturn_t CopyString(const std::string& text, char* buffer, unsigned length);

}  // namespace fake_nvml

#endif  // DEVICESHARE_TESTS_FAKE_NVML_FAKE_WORLD_H_
