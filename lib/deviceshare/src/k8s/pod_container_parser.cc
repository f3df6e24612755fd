#include "pod_container_parser.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/json_text.h"
#include "deviceshare/model/mig_slot.h"
#include "deviceshare/model/units.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::internal {
namespace {

using nlohmann::json;

constexpr char kVolcanoPrefix[] = "volcano.sh/vgpu-";
// In GpuValues order: count, memory, percentage, cores.
constexpr const char* kVolcanoResources[] = {
    keys::kVolcanoGpuNumber, keys::kVolcanoGpuMemory,
    keys::kVolcanoGpuMemoryPercentage, keys::kVolcanoGpuCores};

const json& EmptyObject() {
  static const json* const kEmpty = new json(json::object());
  return *kEmpty;
}

absl::StatusOr<const json*> ReadList(const json& resources,
                                     absl::string_view key) {
  auto it = resources.find(std::string(key));
  if (it == resources.end() || it->is_null()) return &EmptyObject();
  if (!it->is_object()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "resources.%s: %s is not a mapping", key, JsonText(*it)));
  }
  return &*it;
}

const json* Find(const json& list, absl::string_view key) {
  auto it = list.find(std::string(key));
  if (it == list.end() || it->is_null()) return nullptr;
  return &*it;
}

// The raw values of one dialect's four GPU resources.
struct GpuValues {
  const json* count = nullptr;
  const json* memory = nullptr;
  const json* percent = nullptr;
  const json* cores = nullptr;

  bool any() const { return count || memory || percent || cores; }
  // The name of the first value present, from `names` in the same order.
  const char* FirstName(const char* const names[4]) const {
    const json* values[4] = {count, memory, percent, cores};
    for (int i = 0; i < 4; ++i) {
      if (values[i]) return names[i];
    }
    return "";
  }
};

// The HAMi resource names of `config`, in GpuValues order.
std::array<const char*, 4> HamiNames(const DeviceConfig& config) {
  return {config.resource_count_name.c_str(),
          config.resource_memory_name.c_str(),
          config.resource_memory_percentage_name.c_str(),
          config.resource_core_name.c_str()};
}

// The same four, parsed; 0 for an absent value.
struct GpuNumbers {
  int32_t count = 0;
  int64_t memory_mib = 0;
  int32_t percent = 0;
  int32_t cores = 0;
  int64_t percent_as_written = 0;  // before HAMi's clamping
};

// How percentages are read. kStrict: 0..100, anything else an error.
// kHamiScheduler: as HAMi's scheduler reads them (device_test.go
// GenerateResourceRequests, TestDevices_Fit): a memory percentage below 0
// is unset, one above 100 is 100, and cores above 100 are 100.
enum class PercentRule { kStrict, kHamiScheduler };

absl::StatusOr<int32_t> ReadCount(const json& value, absl::string_view key) {
  DS_ASSIGN_OR_RETURN(std::string text, QuantityText(value, key));
  DS_ASSIGN_OR_RETURN(int64_t n, ParseWholeQuantity(text, key));
  if (n > std::numeric_limits<int32_t>::max()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: \"%s\" overflows int32", key, text));
  }
  return static_cast<int32_t>(n);
}

absl::StatusOr<int64_t> ReadMemory(const json& value, absl::string_view key,
                                   int32_t memory_factor) {
  DS_ASSIGN_OR_RETURN(std::string text, QuantityText(value, key));
  DS_ASSIGN_OR_RETURN(int64_t units, ParseWholeQuantity(text, key));
  // A hand-built DeviceConfig can hold anything; the config parser never
  // lets a factor below 1 through.
  if (memory_factor < 1) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: memory factor %d of the device config is below 1",
                        key, memory_factor));
  }
  if (units > std::numeric_limits<int64_t>::max() / memory_factor) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: \"%s\" x memory factor %d overflows int64 MiB",
                        key, text, memory_factor));
  }
  return units * memory_factor;
}

absl::StatusOr<int32_t> ReadPercent(const json& value, absl::string_view key) {
  DS_ASSIGN_OR_RETURN(std::string text, QuantityText(value, key));
  return ParsePercent(text, key);
}

// A whole quantity that may be negative: -N is returned as -N.
absl::StatusOr<int64_t> ReadSignedWhole(const json& value,
                                        absl::string_view key) {
  DS_ASSIGN_OR_RETURN(std::string text, QuantityText(value, key));
  absl::string_view digits = text;
  const bool negative = absl::ConsumePrefix(&digits, "-");
  DS_ASSIGN_OR_RETURN(int64_t n, ParseWholeQuantity(digits, key));
  return negative ? -n : n;
}

// Every value present is checked, even one the dialect's rules then ignore
// (Volcano's cores without a count), so a typo never passes silently.
absl::StatusOr<GpuNumbers> ParseNumbers(const GpuValues& v,
                                        const char* const names[4],
                                        const DeviceConfig& config,
                                        PercentRule rule) {
  GpuNumbers n;
  if (rule == PercentRule::kHamiScheduler) {
    if (v.percent) {
      DS_ASSIGN_OR_RETURN(n.percent_as_written,
                          ReadSignedWhole(*v.percent, names[2]));
      n.percent = static_cast<int32_t>(
          std::clamp<int64_t>(n.percent_as_written, 0, 100));
    }
    if (v.cores) {
      DS_ASSIGN_OR_RETURN(std::string text, QuantityText(*v.cores, names[3]));
      DS_ASSIGN_OR_RETURN(int64_t cores, ParseWholeQuantity(text, names[3]));
      n.cores = static_cast<int32_t>(std::min<int64_t>(cores, 100));
    }
  }
  if (v.count) {
    DS_ASSIGN_OR_RETURN(n.count, ReadCount(*v.count, names[0]));
  }
  if (v.memory) {
    DS_ASSIGN_OR_RETURN(n.memory_mib,
                        ReadMemory(*v.memory, names[1], config.memory_factor));
  }
  if (rule == PercentRule::kStrict && v.percent) {
    DS_ASSIGN_OR_RETURN(n.percent, ReadPercent(*v.percent, names[2]));
    n.percent_as_written = n.percent;
  }
  if (rule == PercentRule::kStrict && v.cores) {
    DS_ASSIGN_OR_RETURN(n.cores, ReadPercent(*v.cores, names[3]));
  }
  return n;
}

// Memory, HAMi's way: an explicit amount wins over a percentage (its Fit
// takes the percentage only when Memreq is 0); 0 of either means "not
// given" (HAMi ignores a 0 percentage, and a 0 amount falls back to the
// percentage or whole card). Volcano's way is the other order
// (ParseVolcano).
void FillMemory(const GpuNumbers& n, const DeviceConfig& config,
                ContainerRequest& request) {
  if (n.memory_mib > 0) {
    request.memory_mib = n.memory_mib;
  } else if (n.percent > 0) {
    request.memory_percent = n.percent;
  } else if (config.default_memory_mib > 0) {
    request.memory_mib = config.default_memory_mib;
  }
}

// formats.md: a Volcano container counts only with vgpu-number or
// vgpu-memory; memory alone implies defaultGPUNum (1 upstream) GPUs;
// neither memory nor percentage means the whole card.
absl::Status ParseVolcano(const GpuValues& v, const DeviceConfig& config,
                          ContainerRequest& request) {
  DS_ASSIGN_OR_RETURN(GpuNumbers n, ParseNumbers(v, kVolcanoResources, config,
                                                 PercentRule::kStrict));
  if (!v.count && !v.memory) return absl::OkStatus();
  request.gpu_count = v.count ? n.count : config.default_gpu_num;
  if (request.gpu_count == 0) return absl::OkStatus();
  // A percentage wins over an amount: Volcano sizes each card by the
  // percentage whenever one is given (vgpu/utils.go, "if we have
  // mempercentage request, we ignore the mem request"), and its device
  // plugin sets the container's limit from the record it wrote.
  GpuNumbers sized = n;
  if (n.percent > 0) sized.memory_mib = 0;
  FillMemory(sized, config, request);
  request.cores = v.cores ? n.cores : config.default_cores;
  return absl::OkStatus();
}

// upstream-hami.md §3: HAMi's webhook (MutateAdmission, device.go) first
// adds `gpu = defaultGPUNum` when only gpumem / gpucores / percentage is
// given, then gives a container that has a GPU count (written or just
// added) and no gpucores all cores when its memory is exclusive (a
// percentage of exactly 100, or no percentage and no gpumem, or no memory
// resource name configured: defaultExclusiveCoreIfNeeded). The parser
// applies both rules itself, so that a pod that did not pass through a
// webhook lands as one that did. defaultMemory plays no part in the second
// rule.
absl::Status ParseHami(const GpuValues& v, const DeviceConfig& config,
                       ContainerRequest& request) {
  DS_ASSIGN_OR_RETURN(GpuNumbers n,
                      ParseNumbers(v, HamiNames(config).data(), config,
                                   PercentRule::kHamiScheduler));
  request.gpu_count = v.count ? n.count : config.default_gpu_num;
  if (request.gpu_count == 0) return absl::OkStatus();
  FillMemory(n, config, request);
  const bool memory_exclusive =
      v.percent ? n.percent_as_written == 100
                : config.resource_memory_name.empty() || !v.memory;
  if (v.cores) {
    request.cores = n.cores;
  } else if (memory_exclusive) {
    request.cores = 100;
  } else {
    request.cores = config.default_cores;
  }
  return absl::OkStatus();
}

bool IsVolcanoName(absl::string_view name) {
  return absl::StartsWith(name, kVolcanoPrefix);
}

// A `volcano.sh/vgpu-*` name that is not one of the four is a typo that
// would otherwise leave the container without a GPU.
absl::Status CheckVolcanoNames(const json& list) {
  for (auto it = list.begin(); it != list.end(); ++it) {
    if (!IsVolcanoName(it.key())) continue;
    bool known = false;
    for (const char* name : kVolcanoResources) known |= it.key() == name;
    if (!known) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: unknown Volcano GPU resource (want one of %s)",
                          it.key(), absl::StrJoin(kVolcanoResources, ", ")));
    }
  }
  return absl::OkStatus();
}

// The container's `nvidia.com/mig-<profile>` resource: its name and value
// (limits, else requests); value nullptr when it names none.
struct MigResource {
  std::string name;
  const json* value = nullptr;
};

absl::StatusOr<MigResource> FindMigResource(
    const ContainerResources& resources) {
  MigResource found;
  for (const json* list : {&resources.limits(), &resources.requests()}) {
    for (auto it = list->begin(); it != list->end(); ++it) {
      if (it->is_null() ||
          !absl::StartsWith(it.key(), keys::kMigResourcePrefix)) {
        continue;
      }
      if (found.value == nullptr) {
        found.name = it.key();
        found.value = resources.GpuValue(found.name);
      } else if (it.key() != found.name) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s: a container may ask for one MIG profile, and this one also "
            "asks %s",
            it.key(), found.name));
      }
    }
  }
  return found;
}

// `nvidia.com/mig-<profile>: N` (the NVIDIA device plugin's mixed
// strategy): N instances of that profile, which decides memory and cores,
// so the container may name no other GPU resource.
absl::Status ParseMig(const MigResource& mig, const GpuValues& volcano,
                      const GpuValues& hami, const DeviceConfig& config,
                      ContainerRequest& request) {
  const std::string profile =
      mig.name.substr(absl::string_view(keys::kMigResourcePrefix).size());
  if (!IsMigProfileName(profile)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: \"%s\" is not a MIG profile name (want %s<N>g.<M>gb, e.g. "
        "%s1g.10gb)",
        mig.name, profile, keys::kMigResourcePrefix, keys::kMigResourcePrefix));
  }
  if (volcano.any() || hami.any()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: cannot be combined with %s in one container (the MIG profile "
        "decides memory and cores)",
        mig.name,
        volcano.any() ? volcano.FirstName(kVolcanoResources)
                      : hami.FirstName(HamiNames(config).data())));
  }
  DS_ASSIGN_OR_RETURN(int32_t count, ReadCount(*mig.value, mig.name));
  if (count == 0) return absl::OkStatus();
  request.gpu_count = count;
  request.mig_profile = profile;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ContainerResources> ContainerResources::Read(
    const json& container) {
  auto it = container.find("resources");
  if (it == container.end() || it->is_null()) {
    return ContainerResources(&EmptyObject(), &EmptyObject());
  }
  if (!it->is_object()) {
    return absl::InvalidArgumentError("resources: is not a mapping");
  }
  DS_ASSIGN_OR_RETURN(const json* limits, ReadList(*it, "limits"));
  DS_ASSIGN_OR_RETURN(const json* requests, ReadList(*it, "requests"));
  return ContainerResources(limits, requests);
}

const json* ContainerResources::GpuValue(absl::string_view key) const {
  if (const json* v = Find(*limits_, key)) return v;
  return Find(*requests_, key);
}

const json* ContainerResources::RequestValue(absl::string_view key) const {
  if (const json* v = Find(*requests_, key)) return v;
  return Find(*limits_, key);
}

absl::StatusOr<std::string> QuantityText(const json& value,
                                         absl::string_view field) {
  if (value.is_string()) return value.get<std::string>();
  if (value.is_number_unsigned()) return absl::StrCat(value.get<uint64_t>());
  if (value.is_number_integer()) return absl::StrCat(value.get<int64_t>());
  if (value.is_number_float() && std::isfinite(value.get<double>())) {
    // dump() prints the shortest text that reads back as the same double
    // ("1.5", "1e+20"), which the quantity parsers understand.
    return value.dump();
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: %s is not a quantity", field, JsonText(value)));
}

absl::StatusOr<std::optional<Dialect>> ParseContainerGpu(
    const ContainerResources& resources, const DeviceConfig& config,
    ContainerRequest& request) {
  DS_RETURN_IF_ERROR(CheckVolcanoNames(resources.limits()));
  DS_RETURN_IF_ERROR(CheckVolcanoNames(resources.requests()));
  GpuValues volcano{resources.GpuValue(keys::kVolcanoGpuNumber),
                    resources.GpuValue(keys::kVolcanoGpuMemory),
                    resources.GpuValue(keys::kVolcanoGpuMemoryPercentage),
                    resources.GpuValue(keys::kVolcanoGpuCores)};
  // Volcano's own device config map renames HAMi's resources to the
  // volcano.sh/vgpu-* ones; those are read by the Volcano rules above.
  auto hami_value = [&](const std::string& name) -> const json* {
    if (name.empty() || IsVolcanoName(name)) return nullptr;
    return resources.GpuValue(name);
  };
  GpuValues hami{hami_value(config.resource_count_name),
                 hami_value(config.resource_memory_name),
                 hami_value(config.resource_memory_percentage_name),
                 hami_value(config.resource_core_name)};
  // Priority is HAMi's, but it asks for no GPU, so it does not pick a
  // dialect; it is still checked so that a bad value is not ignored.
  if (const json* priority =
          resources.GpuValue(config.resource_priority_name)) {
    DS_ASSIGN_OR_RETURN(request.task_priority,
                        ReadCount(*priority, config.resource_priority_name));
  }
  DS_ASSIGN_OR_RETURN(MigResource mig, FindMigResource(resources));
  if (mig.value != nullptr) {
    // The same resource name in both dialects: it picks none.
    DS_RETURN_IF_ERROR(ParseMig(mig, volcano, hami, config, request));
    return std::nullopt;
  }
  if (volcano.any() && hami.any()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "mixes Volcano (%s) and HAMi (%s) GPU resources; use one dialect",
        volcano.FirstName(kVolcanoResources),
        hami.FirstName(HamiNames(config).data())));
  }
  if (volcano.any()) {
    DS_RETURN_IF_ERROR(ParseVolcano(volcano, config, request));
    if (volcano.count != nullptr) {
      request.count_resource = keys::kVolcanoGpuNumber;
    }
    return Dialect::kVolcano;
  }
  if (hami.any()) {
    DS_RETURN_IF_ERROR(ParseHami(hami, config, request));
    if (hami.count != nullptr)
      request.count_resource = config.resource_count_name;
    return Dialect::kHami;
  }
  return std::nullopt;
}

}  // namespace deviceshare::internal
