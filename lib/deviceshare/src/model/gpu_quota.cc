#include "deviceshare/model/gpu_quota.h"

#include <algorithm>
#include <map>
#include <string>

#include "absl/strings/str_format.h"

namespace deviceshare {
namespace {

std::optional<int64_t> Smaller(std::optional<int64_t> a,
                               std::optional<int64_t> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

// Per GPU: the largest init container, and the app containers' sum.
struct GpuHold {
  GpuQuotaUse init;
  GpuQuotaUse app;
};

}  // namespace

GpuQuotaUse& GpuQuotaUse::operator+=(const GpuQuotaUse& other) {
  memory_mib += other.memory_mib;
  cores += other.cores;
  return *this;
}

GpuQuotaUse& GpuQuotaUse::operator-=(const GpuQuotaUse& other) {
  memory_mib -= other.memory_mib;
  cores -= other.cores;
  return *this;
}

GpuQuotaLimits Tightest(const GpuQuotaLimits& a, const GpuQuotaLimits& b) {
  return GpuQuotaLimits{Smaller(a.memory_mib, b.memory_mib),
                        Smaller(a.cores, b.cores)};
}

GpuQuotaUse QuotaUseOf(const PodAllocation& allocation) {
  std::map<std::string, GpuHold> by_gpu;
  for (const ContainerAllocation& container : allocation.containers) {
    for (const DeviceGrant& grant : container.devices) {
      GpuHold& hold = by_gpu[grant.uuid];
      if (container.is_init) {
        hold.init.memory_mib = std::max(hold.init.memory_mib, grant.memory_mib);
        hold.init.cores = std::max<int64_t>(hold.init.cores, grant.cores);
      } else {
        hold.app += GpuQuotaUse{grant.memory_mib, grant.cores};
      }
    }
  }
  GpuQuotaUse use;
  for (const auto& [uuid, hold] : by_gpu) {
    use += GpuQuotaUse{std::max(hold.init.memory_mib, hold.app.memory_mib),
                       std::max(hold.init.cores, hold.app.cores)};
  }
  return use;
}

GpuQuotaUse LeastQuotaUseOf(const PodRequest& request) {
  GpuQuotaUse init;
  GpuQuotaUse app;
  for (const ContainerRequest& container : request.containers) {
    const GpuQuotaUse use{container.gpu_count * container.memory_mib,
                          int64_t{container.gpu_count} * container.cores};
    if (container.is_init) {
      init.memory_mib = std::max(init.memory_mib, use.memory_mib);
      init.cores = std::max(init.cores, use.cores);
    } else {
      app += use;
    }
  }
  return GpuQuotaUse{std::max(init.memory_mib, app.memory_mib),
                     std::max(init.cores, app.cores)};
}

std::optional<std::string> QuotaExcess(absl::string_view namespace_name,
                                       const GpuQuotaLimits& limits,
                                       const GpuQuotaUse& used,
                                       const GpuQuotaUse& want) {
  if (limits.memory_mib &&
      used.memory_mib + want.memory_mib > *limits.memory_mib) {
    return absl::StrFormat(
        "QuotaExceeded namespace %s GPU memory: %dMiB held + %dMiB wanted > "
        "limit %dMiB",
        namespace_name, used.memory_mib, want.memory_mib, *limits.memory_mib);
  }
  if (limits.cores && used.cores + want.cores > *limits.cores) {
    return absl::StrFormat(
        "QuotaExceeded namespace %s GPU cores: %d held + %d wanted > limit %d",
        namespace_name, used.cores, want.cores, *limits.cores);
  }
  return std::nullopt;
}

}  // namespace deviceshare
