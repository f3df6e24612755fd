// The NVML GpuSource of agent/nvml_source.h.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/agent/nvml_source.h"
#include "deviceshare/status_macros.h"
#include "nvml/nvml_gpu_reader.h"
#include "nvml/nvml_library.h"
#include "nvml/xid_health.h"

namespace deviceshare::agent {
namespace {

// Events drained per call at most, so a storm cannot stall a health check.
constexpr int kMaxEventsPerDrain = 1024;

class NvmlGpuSource final : public GpuSource {
 public:
  NvmlGpuSource(std::shared_ptr<NvmlLibrary> nvml, NvmlSourceOptions options)
      : nvml_(std::move(nvml)),
        options_(std::move(options)),
        clock_(options_.clock != nullptr ? options_.clock : &RealClock()),
        health_(options_.xid_quiet_period) {}

  ~NvmlGpuSource() override {
    absl::MutexLock lock(&mu_);
    if (events_ != nullptr && nvml_->fn().EventSetFree != nullptr) {
      nvml_->fn().EventSetFree(events_);
    }
  }

  absl::StatusOr<std::vector<DiscoveredGpu>> Discover() override {
    absl::MutexLock lock(&mu_);
    DS_ASSIGN_OR_RETURN(unsigned int count, CountLocked());
    std::vector<NvmlGpu> gpus;
    gpus.reserve(count);
    for (unsigned int i = 0; i < count; ++i) {
      gpus.push_back(ReadNvmlGpu(*nvml_, i, options_.sysfs_root));
    }
    ReadNvmlLinks(*nvml_, gpus);
    RememberLocked(gpus);
    DrainEventsLocked();
    const absl::Time now = clock_->Now();
    std::vector<DiscoveredGpu> out;
    out.reserve(gpus.size());
    for (NvmlGpu& gpu : gpus) {
      const GpuHealth health = health_.Poll(gpu.gpu.uuid, gpu.error, now);
      gpu.gpu.healthy = health.healthy;
      gpu.gpu.health_reason = health.reason;
      out.push_back(std::move(gpu.gpu));
    }
    return out;
  }

  absl::StatusOr<std::vector<GpuHealth>> CheckHealth() override {
    absl::MutexLock lock(&mu_);
    if (!discovered_) {
      DS_ASSIGN_OR_RETURN(unsigned int count, CountLocked());
      std::vector<NvmlGpu> gpus;
      for (unsigned int i = 0; i < count; ++i) {
        NvmlGpu gpu;
        gpu.gpu.index = static_cast<int32_t>(i);
        if (nvml_->fn().DeviceGetHandleByIndex(i, &gpu.device) !=
            NVML_SUCCESS) {
          gpu.device = nullptr;
        } else {
          char uuid[NVML_DEVICE_UUID_V2_BUFFER_SIZE] = {};
          if (nvml_->fn().DeviceGetUUID(gpu.device, uuid, sizeof(uuid)) ==
              NVML_SUCCESS) {
            gpu.gpu.uuid = FromNvmlChars(uuid, sizeof(uuid));
          }
        }
        gpus.push_back(std::move(gpu));
      }
      RememberLocked(gpus);
    }
    DrainEventsLocked();
    const absl::Time now = clock_->Now();
    std::vector<GpuHealth> out;
    out.reserve(known_.size());
    for (const Known& gpu : known_) {
      out.push_back(health_.Poll(gpu.uuid, PollLocked(gpu.uuid), now));
    }
    return out;
  }

  std::string Describe() const override { return nvml_->description(); }

 private:
  struct Known {
    std::string uuid;
    nvmlDevice_t device = nullptr;
  };

  absl::StatusOr<unsigned int> CountLocked()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    unsigned int count = 0;
    DS_RETURN_IF_ERROR(nvml_->ToStatus(nvml_->fn().DeviceGetCount(&count),
                                       "nvmlDeviceGetCount_v2"));
    return count;
  }

  // The GPUs CheckHealth() reports, and event registration the first time.
  void RememberLocked(const std::vector<NvmlGpu>& gpus)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    known_.clear();
    for (const NvmlGpu& gpu : gpus) {
      if (!gpu.gpu.uuid.empty()) known_.push_back({gpu.gpu.uuid, gpu.device});
    }
    discovered_ = true;
    if (!events_tried_) {
      events_tried_ = true;
      RegisterEventsLocked();
    }
  }

  void RegisterEventsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    const NvmlFunctions& fn = nvml_->fn();
    if (fn.EventSetCreate == nullptr || fn.DeviceRegisterEvents == nullptr ||
        fn.EventSetWait == nullptr) {
      return;
    }
    if (fn.EventSetCreate(&events_) != NVML_SUCCESS) {
      events_ = nullptr;
      return;
    }
    for (const Known& gpu : known_) {
      if (gpu.device == nullptr) continue;
      if (fn.DeviceGetSupportedEventTypes != nullptr) {
        unsigned long long supported = 0;
        if (fn.DeviceGetSupportedEventTypes(gpu.device, &supported) !=
                NVML_SUCCESS ||
            (supported & nvmlEventTypeXidCriticalError) == 0) {
          continue;
        }
      }
      // A GPU that refuses registration is still polled.
      fn.DeviceRegisterEvents(gpu.device, nvmlEventTypeXidCriticalError,
                              events_);
    }
  }

  void DrainEventsLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (events_ == nullptr) return;
    const absl::Time now = clock_->Now();
    for (int n = 0; n < kMaxEventsPerDrain; ++n) {
      nvmlEventData_t data{};
      if (nvml_->fn().EventSetWait(events_, &data, 0) != NVML_SUCCESS) return;
      if ((data.eventType & nvmlEventTypeXidCriticalError) == 0) continue;
      bool attributed = false;
      for (const Known& gpu : known_) {
        if (gpu.device == data.device) {
          health_.OnXid(gpu.uuid, data.eventData, now);
          attributed = true;
        }
      }
      if (!attributed) {
        for (const Known& gpu : known_) {
          health_.OnXid(gpu.uuid, data.eventData, now);
        }
      }
    }
  }

  // "" when the GPU answers.
  std::string PollLocked(const std::string& uuid)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    nvmlDevice_t device = nullptr;
    nvmlReturn_t result =
        nvml_->fn().DeviceGetHandleByUUID(uuid.c_str(), &device);
    if (result != NVML_SUCCESS) {
      return absl::StrCat("nvmlDeviceGetHandleByUUID: ",
                          nvml_->ErrorText(result));
    }
    nvmlMemory_t memory{};
    result = nvml_->fn().DeviceGetMemoryInfo(device, &memory);
    if (result != NVML_SUCCESS) {
      return absl::StrCat("nvmlDeviceGetMemoryInfo: ",
                          nvml_->ErrorText(result));
    }
    return "";
  }

  const std::shared_ptr<NvmlLibrary> nvml_;
  const NvmlSourceOptions options_;
  const Clock* const clock_;

  absl::Mutex mu_;
  XidHealth health_ ABSL_GUARDED_BY(mu_);
  std::vector<Known> known_ ABSL_GUARDED_BY(mu_);
  bool discovered_ ABSL_GUARDED_BY(mu_) = false;
  bool events_tried_ ABSL_GUARDED_BY(mu_) = false;
  nvmlEventSet_t events_ ABSL_GUARDED_BY(mu_) = nullptr;
};

}  // namespace

absl::StatusOr<std::unique_ptr<GpuSource>> OpenNvmlSource(
    const NvmlSourceOptions& options) {
  DS_ASSIGN_OR_RETURN(std::shared_ptr<NvmlLibrary> nvml,
                      NvmlLibrary::Open(options.library_path));
  return std::make_unique<NvmlGpuSource>(std::move(nvml), options);
}

}  // namespace deviceshare::agent
