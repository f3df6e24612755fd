// The fake NVML's init, device, topology, NVLink and event calls.
#include <cstdio>
#include <set>

#include "fake_world.h"

using namespace fake_nvml;

// Every call: the world's lock, initialized, and the files re-read when they
// changed.
#define FAKE_NVML_ENTER()                                \
  std::lock_guard<std::mutex> fake_lock(WorldMutex());   \
  if (InitCount() == 0) return NVML_ERROR_UNINITIALIZED; \
  if (!Refresh()) return NVML_ERROR_UNKNOWN

namespace {

std::map<unsigned, std::set<unsigned>>& EventSets() {
  static auto* sets = new std::map<unsigned, std::set<unsigned>>();
  return *sets;
}
unsigned& NextEventSet() {
  static unsigned next = 1;
  return next;
}
constexpr uintptr_t kEventSetTag = 0x15;

nvmlEventSet_t EventSetHandle(unsigned id) {
  return reinterpret_cast<nvmlEventSet_t>((kEventSetTag << 24) | id);
}
std::set<unsigned>* EventSetOf(nvmlEventSet_t handle) {
  const uintptr_t value = reinterpret_cast<uintptr_t>(handle);
  if ((value >> 24) != kEventSetTag) return nullptr;
  auto it = EventSets().find(static_cast<unsigned>(value & 0xFFFFFF));
  return it == EventSets().end() ? nullptr : &it->second;
}

void FillPci(const Gpu& gpu, nvmlPciInfo_t* pci) {
  *pci = nvmlPciInfo_t{};
  std::snprintf(pci->busId, sizeof(pci->busId), "%s", gpu.bus_id.c_str());
  // The legacy id has a 4-digit domain: the last 12 characters.
  const std::string legacy = gpu.bus_id.size() > 12
                                 ? gpu.bus_id.substr(gpu.bus_id.size() - 12)
                                 : gpu.bus_id;
  std::snprintf(pci->busIdLegacy, sizeof(pci->busIdLegacy), "%s",
                legacy.c_str());
  std::sscanf(gpu.bus_id.c_str(), "%x:%x:%x", &pci->domain, &pci->bus,
              &pci->device);
  pci->pciDeviceId = gpu.pci_device_id << 16 | 0x10DE;
  pci->pciSubSystemId = 0;
}

unsigned TotalLanes(const Gpu& gpu) {
  unsigned total = 0;
  for (const auto& [peer, lanes] : gpu.nvlinks) total += lanes;
  return total;
}

}  // namespace

FAKE_NVML_EXPORT nvmlReturn_t nvmlInit_v2() {
  std::lock_guard<std::mutex> lock(WorldMutex());
  if (std::getenv("FAKE_NVML_INVENTORY") == nullptr) {
    return NVML_ERROR_DRIVER_NOT_LOADED;
  }
  if (!Refresh()) return NVML_ERROR_UNKNOWN;
  ++InitCount();
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlShutdown() {
  std::lock_guard<std::mutex> lock(WorldMutex());
  if (InitCount() == 0) return NVML_ERROR_UNINITIALIZED;
  --InitCount();
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  switch (result) {
    case NVML_SUCCESS:
      return "Success";
    case NVML_ERROR_UNINITIALIZED:
      return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
      return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
      return "Not Supported";
    case NVML_ERROR_NO_PERMISSION:
      return "Insufficient Permissions";
    case NVML_ERROR_NOT_FOUND:
      return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE:
      return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED:
      return "Driver Not Loaded";
    case NVML_ERROR_TIMEOUT:
      return "Timeout";
    case NVML_ERROR_GPU_IS_LOST:
      return "GPU is lost";
    case NVML_ERROR_IN_USE:
      return "In use by another client";
    case NVML_ERROR_INSUFFICIENT_RESOURCES:
      return "Insufficient resources";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
      return "Version mismatch";
    default:
      return "Unknown Error";
  }
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version,
                                                         unsigned length) {
  FAKE_NVML_ENTER();
  return CopyString("580.00-fake", version, length);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned* count) {
  FAKE_NVML_ENTER();
  if (count == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *count = static_cast<unsigned>(Gpus().size());
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetHandleByIndex_v2(unsigned index, nvmlDevice_t* device) {
  FAKE_NVML_ENTER();
  if (device == nullptr || index >= Gpus().size()) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  *device = DeviceHandle(index);
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid,
                                                        nvmlDevice_t* device) {
  FAKE_NVML_ENTER();
  if (uuid == nullptr || device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const std::vector<Gpu>& gpus = Gpus();
  for (unsigned i = 0; i < gpus.size(); ++i) {
    if (gpus[i].uuid == uuid) {
      *device = DeviceHandle(i);
      return NVML_SUCCESS;
    }
    for (const GpuInstance& gi : Instances(gpus[i].uuid)) {
      for (const ComputeInstance& ci : gi.cis) {
        if (MigUuid(gpus[i].uuid, gi.id, ci.id) == uuid) {
          *device = MigDeviceHandle(i, gi.id, ci.id);
          return NVML_SUCCESS;
        }
      }
    }
  }
  return NVML_ERROR_NOT_FOUND;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t device, char* uuid,
                                                unsigned length) {
  FAKE_NVML_ENTER();
  if (const Gpu* gpu = FullGpu(device)) {
    return CopyString(gpu->uuid, uuid, length);
  }
  MigRef mig;
  if (MigDevice(device, mig)) {
    return CopyString(MigUuid(mig.gpu->uuid, mig.gi->id, mig.ci->id), uuid,
                      length);
  }
  return NVML_ERROR_INVALID_ARGUMENT;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char* name,
                                                unsigned length) {
  FAKE_NVML_ENTER();
  const Gpu* gpu = FullGpu(device);
  if (gpu == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  return CopyString(gpu->name, name, length);
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetPciInfo_v3(nvmlDevice_t device,
                                                      nvmlPciInfo_t* pci) {
  FAKE_NVML_ENTER();
  const Gpu* gpu = FullGpu(device);
  if (gpu == nullptr || pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  FillPci(*gpu, pci);
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCudaComputeCapability(
    nvmlDevice_t device, int* major, int* minor) {
  FAKE_NVML_ENTER();
  const Gpu* gpu = FullGpu(device);
  if (gpu == nullptr || major == nullptr || minor == nullptr) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (gpu->lost) return NVML_ERROR_GPU_IS_LOST;
  if (!gpu->cc) return NVML_ERROR_NOT_SUPPORTED;
  *major = gpu->cc->first;
  *minor = gpu->cc->second;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetAttributes_v2(
    nvmlDevice_t device, nvmlDeviceAttributes_t* attributes) {
  FAKE_NVML_ENTER();
  const Gpu* gpu = FullGpu(device);
  if (gpu == nullptr || attributes == nullptr) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (gpu->lost) return NVML_ERROR_GPU_IS_LOST;
  if (gpu->sm_count == 0) return NVML_ERROR_NOT_SUPPORTED;
  *attributes = nvmlDeviceAttributes_t{};
  attributes->multiprocessorCount = gpu->sm_count;
  attributes->memorySizeMB = gpu->memory_mib;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetTopologyCommonAncestor(
    nvmlDevice_t device1, nvmlDevice_t device2, nvmlGpuTopologyLevel_t* level) {
  FAKE_NVML_ENTER();
  const Gpu* a = FullGpu(device1);
  const Gpu* b = FullGpu(device2);
  if (a == nullptr || b == nullptr || level == nullptr) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  if (a->lost || b->lost) return NVML_ERROR_GPU_IS_LOST;
  *level = a->numa == b->numa ? NVML_TOPOLOGY_NODE : NVML_TOPOLOGY_SYSTEM;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkState(
    nvmlDevice_t device, unsigned link, nvmlEnableState_t* active) {
  FAKE_NVML_ENTER();
  const Gpu* gpu = FullGpu(device);
  if (gpu == nullptr || active == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (gpu->lost) return NVML_ERROR_GPU_IS_LOST;
  if (gpu->nvlinks.empty()) return NVML_ERROR_NOT_SUPPORTED;
  if (link >= NVML_NVLINK_MAX_LINKS) return NVML_ERROR_INVALID_ARGUMENT;
  *active =
      link < TotalLanes(*gpu) ? NVML_FEATURE_ENABLED : NVML_FEATURE_DISABLED;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetNvLinkRemotePciInfo_v2(
    nvmlDevice_t device, unsigned link, nvmlPciInfo_t* pci) {
  FAKE_NVML_ENTER();
  const Gpu* gpu = FullGpu(device);
  if (gpu == nullptr || pci == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (gpu->lost) return NVML_ERROR_GPU_IS_LOST;
  if (gpu->nvlinks.empty()) return NVML_ERROR_NOT_SUPPORTED;
  unsigned first = 0;
  for (const auto& [peer, lanes] : gpu->nvlinks) {
    if (link < first + lanes) {
      if (peer < Gpus().size()) {
        FillPci(Gpus()[peer], pci);
      } else {
        // A peer that is not a GPU of this node (an NVSwitch, say).
        Gpu other;
        other.bus_id = "00000000:FF:00.0";
        FillPci(other, pci);
      }
      return NVML_SUCCESS;
    }
    first += lanes;
  }
  return NVML_ERROR_INVALID_ARGUMENT;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetSupportedEventTypes(
    nvmlDevice_t device, unsigned long long* types) {
  FAKE_NVML_ENTER();
  if (FullGpu(device) == nullptr || types == nullptr) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  *types = nvmlEventTypeXidCriticalError;
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlEventSetCreate(nvmlEventSet_t* set) {
  FAKE_NVML_ENTER();
  if (set == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const unsigned id = NextEventSet()++;
  EventSets()[id];
  *set = EventSetHandle(id);
  return NVML_SUCCESS;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceRegisterEvents(nvmlDevice_t device,
                                                       unsigned long long types,
                                                       nvmlEventSet_t set) {
  FAKE_NVML_ENTER();
  const Gpu* gpu = FullGpu(device);
  std::set<unsigned>* devices = EventSetOf(set);
  if (gpu == nullptr || devices == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if ((types & ~nvmlEventTypeXidCriticalError) != 0) {
    return NVML_ERROR_NOT_SUPPORTED;
  }
  devices->insert(gpu->index);
  return NVML_SUCCESS;
}

// Never blocks: answers TIMEOUT at once when nothing is pending.
FAKE_NVML_EXPORT nvmlReturn_t nvmlEventSetWait_v2(nvmlEventSet_t set,
                                                  nvmlEventData_t* data,
                                                  unsigned timeout_ms) {
  FAKE_NVML_ENTER();
  std::set<unsigned>* devices = EventSetOf(set);
  if (devices == nullptr || data == nullptr) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  for (unsigned index : *devices) {
    if (index >= Gpus().size()) continue;
    std::deque<unsigned long long>& pending = PendingXids(Gpus()[index].uuid);
    if (pending.empty()) continue;
    *data = nvmlEventData_t{};
    data->device = DeviceHandle(index);
    data->eventType = nvmlEventTypeXidCriticalError;
    data->eventData = pending.front();
    data->gpuInstanceId = 0xFFFFFFFF;
    data->computeInstanceId = 0xFFFFFFFF;
    pending.pop_front();
    return NVML_SUCCESS;
  }
  return NVML_ERROR_TIMEOUT;
}

FAKE_NVML_EXPORT nvmlReturn_t nvmlEventSetFree(nvmlEventSet_t set) {
  FAKE_NVML_ENTER();
  const uintptr_t value = reinterpret_cast<uintptr_t>(set);
  if (EventSetOf(set) == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  EventSets().erase(static_cast<unsigned>(value & 0xFFFFFF));
  return NVML_SUCCESS;
}
