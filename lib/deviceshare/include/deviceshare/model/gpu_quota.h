// File: model/gpu_quota.h
//
// A namespace's GPU quota, as HAMi enforces it (pkg/device/quota.go): a
// ResourceQuota whose spec.hard names "limits.<memory resource>" (MiB, e.g.
// limits.nvidia.com/gpumem) or "limits.<cores resource>" (percent of one
// GPU, limits.nvidia.com/gpucores) caps what the namespace's placed pods
// hold in all. A pod that would take the namespace past a limit is not
// placed. Value types and pure functions.
#ifndef DEVICESHARE_MODEL_GPU_QUOTA_H_
#define DEVICESHARE_MODEL_GPU_QUOTA_H_

#include <cstdint>
#include <optional>
#include <string>

#include "deviceshare/model/pod_allocation.h"
#include "deviceshare/model/pod_request.h"

namespace deviceshare {

// What one ResourceQuota object limits; unset: no limit of that kind. A
// limit of 0 is a limit (nothing may be placed), as in HAMi.
struct GpuQuotaLimits {
  std::optional<int64_t> memory_mib;
  std::optional<int64_t> cores;

  bool operator==(const GpuQuotaLimits& other) const = default;
};

// A ResourceQuota object: its namespace and name, and its GPU limits.
struct GpuQuota {
  std::string namespace_name;
  std::string name;
  GpuQuotaLimits limits;

  bool operator==(const GpuQuota& other) const = default;
};

// What pods hold against a quota.
struct GpuQuotaUse {
  int64_t memory_mib = 0;
  int64_t cores = 0;

  GpuQuotaUse& operator+=(const GpuQuotaUse& other);
  GpuQuotaUse& operator-=(const GpuQuotaUse& other);
  bool operator==(const GpuQuotaUse& other) const = default;
};

// The limits of several quota objects of one namespace together: each kind
// capped by the smallest (Kubernetes admits a pod only under every quota).
GpuQuotaLimits Tightest(const GpuQuotaLimits& a, const GpuQuotaLimits& b);

// What a placed pod holds: on each GPU the larger of its largest init
// container and the sum of its app containers (HAMi's
// CollapseInitContainerUsage), summed over its GPUs.
GpuQuotaUse QuotaUseOf(const PodAllocation& allocation);

// The least any placement of `request` holds: the explicit memory and
// cores times the GPU count, the larger of the largest init container and
// the app containers' sum. Memory asked as a percentage counts 0 here (it
// depends on the GPU).
GpuQuotaUse LeastQuotaUseOf(const PodRequest& request);

// Why `want` more does not fit under `limits` with `used` held, starting
// "QuotaExceeded"; nullopt when it fits.
std::optional<std::string> QuotaExcess(absl::string_view namespace_name,
                                       const GpuQuotaLimits& limits,
                                       const GpuQuotaUse& used,
                                       const GpuQuotaUse& want);

}  // namespace deviceshare

#endif  // DEVICESHARE_MODEL_GPU_QUOTA_H_
