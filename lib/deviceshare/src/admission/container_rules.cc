#include "admission/container_rules.h"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/json_text.h"
#include "deviceshare/model/units.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::admission::internal {
namespace {

using nlohmann::json;

constexpr const char* kVolcanoResources[] = {
    keys::kVolcanoGpuNumber, keys::kVolcanoGpuMemory,
    keys::kVolcanoGpuMemoryPercentage, keys::kVolcanoGpuCores};

// The HAMi names of `config`: count, memory, percentage, cores. An empty
// name (HAMi allows no memory name) names nothing.
std::array<const std::string*, 4> HamiResources(const DeviceConfig& config) {
  return {&config.resource_count_name, &config.resource_memory_name,
          &config.resource_memory_percentage_name, &config.resource_core_name};
}

const json* ListOf(const json& container, const char* list) {
  auto resources = container.find("resources");
  if (resources == container.end() || !resources->is_object()) return nullptr;
  auto found = resources->find(list);
  if (found == resources->end() || !found->is_object()) return nullptr;
  return &*found;
}

// The value of `name` in the container's `list` ("limits", "requests").
const json* Find(const json& container, const char* list,
                 absl::string_view name) {
  if (name.empty()) return nullptr;
  const json* values = ListOf(container, list);
  if (values == nullptr) return nullptr;
  auto found = values->find(std::string(name));
  if (found == values->end() || found->is_null()) return nullptr;
  return &*found;
}

bool InLimits(const json& c, absl::string_view name) {
  return Find(c, "limits", name) != nullptr;
}

bool Present(const json& c, absl::string_view name) {
  return InLimits(c, name) || Find(c, "requests", name) != nullptr;
}

// The value (limits, else requests) with the field that holds it.
struct Located {
  const json* value = nullptr;
  std::string field;  // spec.containers[1].resources.limits["name"]
};

Located Locate(const json& c, absl::string_view path, absl::string_view name) {
  for (const char* list : {"limits", "requests"}) {
    if (const json* value = Find(c, list, name)) {
      return {value,
              absl::StrFormat("%s.resources.%s[\"%s\"]", path, list, name)};
    }
  }
  return {};
}

// A quantity as its text: Kubernetes sends strings, hand-written pods may
// hold numbers.
absl::StatusOr<std::string> QuantityText(const Located& at) {
  if (at.value->is_string()) return at.value->get<std::string>();
  if (at.value->is_number_integer()) return at.value->dump();
  return absl::InvalidArgumentError(
      absl::StrCat(at.field, ": ", at.value->dump(), " is not a quantity"));
}

// A whole quantity that may be negative ("-5"): HAMi reads the percentage
// as a signed integer and refuses what lies outside 0..100.
absl::StatusOr<int64_t> SignedWhole(const Located& at) {
  DS_ASSIGN_OR_RETURN(std::string text, QuantityText(at));
  absl::string_view digits = text;
  const bool negative = absl::ConsumePrefix(&digits, "-");
  DS_ASSIGN_OR_RETURN(int64_t n, ParseWholeQuantity(digits, at.field));
  return negative ? -n : n;
}

// The range check both dialects' percentages get; the value, nullopt when
// the container names none.
absl::StatusOr<std::optional<int64_t>> CheckPercent(const json& c,
                                                    absl::string_view path,
                                                    absl::string_view name) {
  const Located at = Locate(c, path, name);
  if (at.value == nullptr) return std::nullopt;
  DS_ASSIGN_OR_RETURN(int64_t percent, SignedWhole(at));
  if (percent < 0 || percent > 100) {
    return absl::InvalidArgumentError(
        absl::StrCat(at.field, ": ", percent, " is outside 0..100"));
  }
  return percent;
}

void SetLimit(json& c, const std::string& name, std::string value) {
  json& resources = c["resources"];
  if (!resources.is_object()) resources = json::object();
  json& limits = resources["limits"];
  if (!limits.is_object()) limits = json::object();
  limits[name] = std::move(value);
}

void AppendEnv(json& c, const char* name, std::string value) {
  json& env = c["env"];
  if (!env.is_array()) env = json::array();
  env.push_back({{"name", name}, {"value", std::move(value)}});
}

bool NamesHami(const json& c, const DeviceConfig& config) {
  for (const std::string* name : HamiResources(config)) {
    if (Present(c, *name)) return true;
  }
  return false;
}

bool NamesVolcano(const json& c) {
  for (const char* name : kVolcanoResources) {
    if (Present(c, name)) return true;
  }
  return false;
}

// HAMi's mutateContainerResource then defaultExclusiveCoreIfNeeded, in that
// order: the count added first makes a lone percentage of 100 exclusive.
bool ApplyHamiDefaults(json& c, const DeviceConfig& config,
                       std::optional<int64_t> percent) {
  bool has_gpu = InLimits(c, config.resource_count_name);
  if (!has_gpu && config.default_gpu_num > 0 &&
      (InLimits(c, config.resource_core_name) ||
       InLimits(c, config.resource_memory_name) ||
       InLimits(c, config.resource_memory_percentage_name))) {
    SetLimit(c, config.resource_count_name,
             absl::StrCat(config.default_gpu_num));
    has_gpu = true;
  }
  if (!Present(c, config.resource_count_name) ||
      Present(c, config.resource_core_name)) {
    return has_gpu;
  }
  const bool exclusive = percent.has_value()
                             ? *percent == 100
                             : !Present(c, config.resource_memory_name);
  if (exclusive) SetLimit(c, config.resource_core_name, "100");
  return has_gpu || exclusive;
}

absl::StatusOr<bool> MutateHami(json& c, absl::string_view path,
                                const DeviceConfig& config) {
  DS_ASSIGN_OR_RETURN(
      std::optional<int64_t> percent,
      CheckPercent(c, path, config.resource_memory_percentage_name));
  const bool has_gpu = ApplyHamiDefaults(c, config, percent);
  if (!has_gpu) return false;
  if (const json* priority = Find(c, "limits", config.resource_priority_name)) {
    const Located at{priority,
                     absl::StrFormat("%s.resources.limits[\"%s\"]", path,
                                     config.resource_priority_name)};
    DS_ASSIGN_OR_RETURN(int64_t value, SignedWhole(at));
    AppendEnv(c, "CUDA_TASK_PRIORITY", absl::StrCat(value));
  }
  if (config.gpu_core_policy == GpuCorePolicy::kForce) {
    AppendEnv(c, "GPU_CORE_UTILIZATION_POLICY", "force");
  } else if (config.gpu_core_policy == GpuCorePolicy::kDisable) {
    AppendEnv(c, "GPU_CORE_UTILIZATION_POLICY", "disable");
  }
  return true;
}

// Volcano's own admission adds nothing for vGPU; the range checks are the
// ones our pod parser makes (vgpu-cores is a percentage of the SMs there).
absl::StatusOr<bool> CheckVolcano(const json& c, absl::string_view path) {
  DS_RETURN_IF_ERROR(
      CheckPercent(c, path, keys::kVolcanoGpuMemoryPercentage).status());
  DS_RETURN_IF_ERROR(CheckPercent(c, path, keys::kVolcanoGpuCores).status());
  return Present(c, keys::kVolcanoGpuNumber) ||
         Present(c, keys::kVolcanoGpuMemory);
}

}  // namespace

absl::Status CheckContainerShape(const json& container,
                                 absl::string_view path) {
  if (!container.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": ", JsonText(container), " is not an object"));
  }
  auto resources = container.find("resources");
  if (resources == container.end() || resources->is_null()) {
    return absl::OkStatus();
  }
  if (!resources->is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        path, ".resources: ", resources->dump(), " is not an object"));
  }
  for (const char* list : {"limits", "requests"}) {
    auto values = resources->find(list);
    if (values != resources->end() && !values->is_null() &&
        !values->is_object()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".resources.", list,
                                                     ": ", values->dump(),
                                                     " is not an object"));
    }
  }
  return absl::OkStatus();
}

bool NamesGpuResource(const json& container, const DeviceConfig& config) {
  return NamesHami(container, config) || NamesVolcano(container);
}

absl::StatusOr<bool> MutateContainer(json& container, absl::string_view path,
                                     const DeviceConfig& config) {
  bool has_gpu = false;
  if (NamesHami(container, config)) {
    DS_ASSIGN_OR_RETURN(has_gpu, MutateHami(container, path, config));
  }
  if (NamesVolcano(container)) {
    DS_ASSIGN_OR_RETURN(bool volcano, CheckVolcano(container, path));
    has_gpu = has_gpu || volcano;
  }
  if (!has_gpu && config.overwrite_env) {
    AppendEnv(container, "NVIDIA_VISIBLE_DEVICES", "none");
  }
  return has_gpu;
}

}  // namespace deviceshare::admission::internal
