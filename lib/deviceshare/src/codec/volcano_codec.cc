#include "deviceshare/codec/volcano_codec.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "codec/register_entry.h"
#include "codec/wire_fields.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/status_macros.h"

namespace deviceshare {
namespace {

using wire::RegisterColumn;

constexpr RegisterColumn kRegisterColumns[] = {
    RegisterColumn::kUuid, RegisterColumn::kSplit,  RegisterColumn::kMemory,
    RegisterColumn::kType, RegisterColumn::kHealth, RegisterColumn::kMode};
constexpr size_t kRegisterFieldCounts[] = {6};
// Volcano identifies a GPU by its position: the layout has no index.
constexpr wire::RegisterLayout kRegisterLayout = {
    "UUID,split,memMiB,type,health,mode", kRegisterColumns,
    kRegisterFieldCounts};

int64_t Factor(int32_t memory_factor) {
  return std::max<int64_t>(memory_factor, 1);
}

// Units of `memory_factor` MiB to MiB, refusing what would overflow.
absl::Status ScaleToMiB(int64_t& memory, int32_t memory_factor,
                        absl::string_view where, absl::string_view field) {
  const int64_t factor = Factor(memory_factor);
  if (memory > wire::kInt64Max / factor) {
    return wire::FieldError(
        where, field, absl::StrCat(memory),
        absl::StrCat("is out of range once multiplied by gpuMemoryFactor ",
                     factor));
  }
  memory *= factor;
  return absl::OkStatus();
}

}  // namespace

std::string EncodeVolcanoNodeRegister(const std::vector<Gpu>& gpus,
                                      int32_t memory_factor) {
  std::string out;
  for (const Gpu& gpu : gpus) {
    absl::StrAppend(&out, gpu.uuid, ",", gpu.split_count, ",",
                    gpu.memory_mib / Factor(memory_factor), ",", gpu.model, ",",
                    wire::BoolText(gpu.healthy), ",", SharingModeName(gpu.mode),
                    ":");
  }
  return out;
}

absl::StatusOr<std::vector<Gpu>> DecodeVolcanoNodeRegister(
    absl::string_view text, int32_t memory_factor) {
  DS_ASSIGN_OR_RETURN(
      std::vector<absl::string_view> entries,
      wire::SplitRegisterEntries(text, ':', keys::kVolcanoNodeRegister));
  std::vector<Gpu> gpus;
  gpus.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    // Volcano's decodeNodeDevices reads only the pieces that hold a ','.
    if (!absl::StrContains(entries[i], ',')) continue;
    const std::string where =
        absl::StrCat(keys::kVolcanoNodeRegister, " entry ", i);
    DS_ASSIGN_OR_RETURN(
        Gpu gpu, wire::DecodeRegisterEntry(entries[i], kRegisterLayout,
                                           static_cast<int32_t>(i), where));
    DS_RETURN_IF_ERROR(
        ScaleToMiB(gpu.memory_mib, memory_factor, where, "memMiB"));
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

std::string EncodeVolcanoAllocation(const PodAllocation& allocation,
                                    int32_t memory_factor) {
  const int64_t factor = Factor(memory_factor);
  std::vector<std::string> entries;
  for (const ContainerAllocation& container : allocation.containers) {
    if (container.is_init || container.devices.empty()) continue;
    std::vector<DeviceGrant> in_units = container.devices;
    for (DeviceGrant& grant : in_units) {
      // Volcano writes what the container asked for a MIG instance it chose
      // from a knownMigGeometries group (utils.go encodePodDevices), not
      // the instance's figures; the reader charges the instance anyway.
      if (grant.mig.asked_memory_mib >= 0) {
        grant.memory_mib = grant.mig.asked_memory_mib;
      }
      if (grant.mig.asked_cores >= 0) grant.cores = grant.mig.asked_cores;
      grant.memory_mib = (grant.memory_mib + factor - 1) / factor;
    }
    std::string entry;
    wire::AppendGrants(in_units, wire::MigIdForm::kSuffixed, &entry);
    entries.push_back(std::move(entry));
  }
  return absl::StrJoin(entries, ";");
}

absl::StatusOr<std::vector<std::vector<DeviceGrant>>> DecodeVolcanoAllocation(
    absl::string_view text, int32_t memory_factor,
    std::vector<absl::Status>* skipped) {
  std::vector<std::vector<DeviceGrant>> containers;
  if (absl::StripAsciiWhitespace(text).empty()) return containers;
  // Empty entries keep their place: the node plugin empties each
  // container's part of devices-to-allocate once it has served it.
  std::vector<absl::string_view> entries = absl::StrSplit(text, ';');
  containers.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string where =
        absl::StrCat(keys::kVolcanoAllocation, " container ", i);
    DS_ASSIGN_OR_RETURN(
        std::vector<DeviceGrant> grants,
        wire::ParseGrants(entries[i], where, wire::GrantSyntax::kVolcano,
                          skipped));
    std::vector<DeviceGrant>& in_mib = containers.emplace_back();
    for (size_t d = 0; d < grants.size(); ++d) {
      absl::Status scaled =
          ScaleToMiB(grants[d].memory_mib, memory_factor,
                     absl::StrCat(where, " device ", d), "memMiB");
      if (scaled.ok()) {
        in_mib.push_back(std::move(grants[d]));
      } else if (skipped != nullptr) {
        skipped->push_back(std::move(scaled));
      }
    }
  }
  return containers;
}

}  // namespace deviceshare
