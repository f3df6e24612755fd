#include "runtime.h"

#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

#include "log.h"

namespace deviceshare::vgpu {
namespace {

alignas(VgpuRuntime) unsigned char g_storage[sizeof(VgpuRuntime)];
VgpuRuntime* g_runtime = nullptr;
pthread_once_t g_once = PTHREAD_ONCE_INIT;

const char* UuidBody(const char* uuid) {
  if (std::strncmp(uuid, "GPU-", 4) == 0 ||
      std::strncmp(uuid, "MIG-", 4) == 0) {
    return uuid + 4;
  }
  return uuid;
}

bool AllIntegers(const std::vector<std::string>& entries) {
  if (entries.empty()) return false;
  for (const std::string& entry : entries) {
    if (entry.empty() ||
        entry.find_first_not_of("0123456789") != std::string::npos) {
      return false;
    }
  }
  return true;
}

class RegionLedger final : public GpuTimeLedger {
 public:
  explicit RegionLedger(VgpuRuntime* runtime) : runtime_(runtime) {}
  void AddOwnGpuTime(int device, uint64_t ns) override {
    runtime_->region()->AddGpuTime(runtime_->DeviceForOrdinal(device), ns);
  }
  uint64_t ContainerGpuTime(int device) override {
    return runtime_->region()->ContainerGpuTime(
        runtime_->DeviceForOrdinal(device));
  }

 private:
  VgpuRuntime* runtime_;
};

void PrepareFork() {
  if (g_runtime == nullptr) return;
  g_runtime->allocations().LockForFork();
  if (SmLimiter* limiter = g_runtime->limiter()) limiter->BeforeFork();
}

void AfterForkParent() {
  if (g_runtime == nullptr) return;
  if (SmLimiter* limiter = g_runtime->limiter()) limiter->AfterForkInParent();
  g_runtime->allocations().UnlockAfterFork();
}

void AfterForkChild() {
  if (g_runtime == nullptr) return;
  if (SmLimiter* limiter = g_runtime->limiter()) limiter->AfterForkInChild();
  // The child owns none of the parent's allocations or its slot.
  g_runtime->allocations().Clear();
  g_runtime->allocations().UnlockAfterFork();
  if (g_runtime->region() != nullptr) {
    g_runtime->region()->ForgetSlotAfterFork();
  }
}

__attribute__((destructor)) void DetachAtExit() {
  if (g_runtime != nullptr && g_runtime->region() != nullptr) {
    g_runtime->region()->DetachProcess();
  }
}

}  // namespace

std::atomic<bool> VgpuRuntime::limiter_active_{false};

void BuildRuntime() {
  InitScope scope;
  g_runtime = new (g_storage) VgpuRuntime();
  pthread_atfork(PrepareFork, AfterForkParent, AfterForkChild);
}

uint64_t RoundUp(uint64_t bytes, uint64_t granule) {
  if (bytes > ~0ULL - granule) return ~0ULL;
  return (bytes + granule - 1) / granule * granule;
}

uint64_t ChargeFor(uint64_t bytes) {
  if (bytes < (1ULL << 20)) return RoundUp(bytes, 512);
  return RoundUp(bytes, 2ULL << 20);
}

VgpuRuntime& VgpuRuntime::Get() {
  pthread_once(&g_once, BuildRuntime);
  return *g_runtime;
}

VgpuRuntime::VgpuRuntime() {
  for (auto& device : ordinal_device_) device.store(-2);
  for (auto& index : ordinal_index_) index.store(-1);
  // Built inside whichever hook ran first: nothing may escape from here.
  try {
    Configure();
  } catch (...) {
    passthrough_ = true;
  }
}

void VgpuRuntime::Configure() {
  config_ = ReadConfig(
      [](const char* name) -> const char* { return std::getenv(name); });
  SetLogLevel(config_.log_level);
  for (const std::string& error : config_.errors) {
    VGPU_LOG(kError, "ignoring %s", error.c_str());
  }
  passthrough_ = config_.disable_control ||
                 (!config_.AnyMemoryLimit() && !config_.AnySmLimit());
  if (passthrough_) {
    VGPU_LOG(kInfo, "no limits set: passing every call through");
    return;
  }
  Failpoint failpoint =
      ParseFailpoint(std::getenv("DEVICESHARE_VGPU_FAILPOINT"));
  std::string error;
  region_ = SharedRegion::Open(config_.region_path, failpoint, &error);
  if (region_ == nullptr) {
    VGPU_LOG(kError,
             "%s; limits hold for this process only, not across the "
             "container",
             error.c_str());
    region_ = SharedRegion::OpenPrivate(failpoint);
  }
  if (region_ == nullptr) {
    VGPU_LOG(kError, "cannot allocate the region; passing calls through");
    passthrough_ = true;
  }
}

void VgpuRuntime::LoadContainerUuids() {
  if (container_uuids_loaded_) return;
  container_uuids_loaded_ = true;
  if (!config_.container_uuids.empty()) {
    container_uuids_ = config_.container_uuids;
    return;
  }
  // NVML ignores CUDA_VISIBLE_DEVICES: it lists the container's GPUs.
  const RealNvml& nvml = LoadRealNvml();
  if (nvml.nvmlInit_v2 == nullptr || nvml.nvmlDeviceGetCount_v2 == nullptr ||
      nvml.nvmlDeviceGetHandleByIndex_v2 == nullptr ||
      nvml.nvmlDeviceGetUUID == nullptr || nvml.nvmlInit_v2() != NVML_SUCCESS) {
    return;
  }
  unsigned count = 0;
  if (nvml.nvmlDeviceGetCount_v2(&count) != NVML_SUCCESS) return;
  for (unsigned i = 0; i < count && i < kMaxDevices; ++i) {
    nvmlDevice_t device = nullptr;
    char uuid[kUuidBytes] = {};
    if (nvml.nvmlDeviceGetHandleByIndex_v2(i, &device) != NVML_SUCCESS ||
        nvml.nvmlDeviceGetUUID(device, uuid, sizeof(uuid)) != NVML_SUCCESS) {
      container_uuids_.clear();
      return;
    }
    container_uuids_.emplace_back(uuid);
  }
}

int VgpuRuntime::ContainerIndex(const std::string& uuid, int ordinal) {
  {
    std::lock_guard<std::mutex> guard(device_mutex_);
    LoadContainerUuids();
    for (size_t i = 0; i < container_uuids_.size(); ++i) {
      if (std::strcmp(UuidBody(container_uuids_[i].c_str()),
                      UuidBody(uuid.c_str())) == 0) {
        return static_cast<int>(i);
      }
    }
  }
  if (AllIntegers(config_.cuda_visible) &&
      ordinal < static_cast<int>(config_.cuda_visible.size())) {
    return std::atoi(config_.cuda_visible[ordinal].c_str());
  }
  return ordinal;
}

std::string VgpuRuntime::UuidOfOrdinal(int ordinal) {
  CUdevice device = 0;
  if (cuda().cuDeviceGet == nullptr ||
      cuda().cuDeviceGet(&device, ordinal) != CUDA_SUCCESS) {
    return std::string();
  }
  CUuuid uuid;
  CUresult rc = CUDA_ERROR_NOT_FOUND;
  if (cuda().cuDeviceGetUuid_v2 != nullptr) {
    rc = cuda().cuDeviceGetUuid_v2(&uuid, device);
  } else if (cuda().cuDeviceGetUuid != nullptr) {
    rc = cuda().cuDeviceGetUuid(&uuid, device);
  }
  if (rc != CUDA_SUCCESS) return std::string();
  const auto* b = reinterpret_cast<const unsigned char*>(uuid.bytes);
  char text[48];
  std::snprintf(text, sizeof(text),
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
                "%02x%02x%02x%02x%02x%02x",
                b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
                b[10], b[11], b[12], b[13], b[14], b[15]);
  return text;
}

int VgpuRuntime::DeviceForOrdinal(int ordinal) {
  if (region_ == nullptr || ordinal < 0 || ordinal >= kMaxOrdinals) return -1;
  int cached = ordinal_device_[ordinal].load(std::memory_order_acquire);
  if (cached != -2) return cached;
  std::string uuid = UuidOfOrdinal(ordinal);
  if (uuid.empty()) return -1;
  int index = ContainerIndex(uuid, ordinal);
  ordinal_index_[ordinal].store(index, std::memory_order_release);
  uint64_t limit = 0;
  int sm = 0;
  if (index >= 0 && index < kMaxDevices) {
    limit = config_.memory_limit_bytes[index];
    if (config_.core_policy != CorePolicy::kDisable) {
      sm = config_.sm_limit_percent[index];
    }
  }
  bool mismatch = false;
  int device = region_->DeviceIndex(uuid.c_str(), limit, sm, &mismatch);
  if (mismatch) {
    VGPU_LOG(kError,
             "%s: the region %s already holds other limits for this GPU "
             "(set by a live process of the container); keeping them",
             uuid.c_str(), config_.region_path.c_str());
  }
  VGPU_LOG(kInfo, "CUDA device %d = %s, container index %d, limit %llu",
           ordinal, uuid.c_str(), index,
           static_cast<unsigned long long>(region_->Limit(device)));
  ordinal_device_[ordinal].store(device, std::memory_order_release);
  return device;
}

int VgpuRuntime::CurrentDevice() {
  CUdevice ordinal = 0;
  if (cuda().cuCtxGetDevice == nullptr ||
      cuda().cuCtxGetDevice(&ordinal) != CUDA_SUCCESS) {
    return -1;
  }
  return DeviceForOrdinal(ordinal);
}

int VgpuRuntime::DeviceForUuid(const char* uuid) {
  if (region_ == nullptr) return -1;
  RegionLayout* layout = region_->layout();
  uint32_t count = layout->device_count.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < count && i < kMaxDevices; ++i) {
    if (std::strcmp(UuidBody(layout->devices[i].uuid), UuidBody(uuid)) == 0) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

void VgpuRuntime::OnDriverInitialized() {
  if (passthrough_ || !config_.AnySmLimit()) return;
  std::call_once(limiter_once_, [this] { StartLimiter(); });
}

void VgpuRuntime::StartLimiter() {
  int count = 0;
  if (cuda().cuDeviceGetCount == nullptr ||
      cuda().cuDeviceGetCount(&count) != CUDA_SUCCESS || count <= 0) {
    return;
  }
  SmLimiterOptions options;
  bool any = false;
  for (int ordinal = 0; ordinal < count && ordinal < kMaxOrdinals; ++ordinal) {
    // Learns the ordinal's UUID and container index once, for both.
    DeviceForOrdinal(ordinal);
    int index = ordinal_index_[ordinal].load(std::memory_order_acquire);
    if (index < 0) index = ordinal;  // no UUID: the ordinal stands in
    int percent = 0;
    if (index < kMaxDevices) percent = config_.sm_limit_percent[index];
    options.percent_by_device.push_back(percent);
    any = any || percent > 0;
  }
  if (!any) return;
  region_->AttachProcess();
  LimiterDriver driver;
  driver.event_create = cuda().cuEventCreate;
  driver.event_record = cuda().cuEventRecord;
  driver.event_query = cuda().cuEventQuery;
  driver.event_elapsed = cuda().cuEventElapsedTime;
  driver.event_destroy = cuda().cuEventDestroy_v2;
  driver.stream_is_capturing = cuda().cuStreamIsCapturing;
  driver.ctx_get_current = cuda().cuCtxGetCurrent;
  driver.ctx_set_current = cuda().cuCtxSetCurrent;
  ledger_ = std::make_unique<RegionLedger>(this);
  limiter_ = SmLimiter::Create(driver, ledger_.get(), MonotonicClock(),
                               std::move(options));
  limiter_active_.store(limiter_ != nullptr, std::memory_order_release);
  VGPU_LOG(kInfo, "SM limiter %s", limiter_ ? "running" : "not started");
}

}  // namespace deviceshare::vgpu
