#include "deviceshare/codec/volcano_codec.h"

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

}  // namespace

std::string EncodeVolcanoNodeRegister(const std::vector<Gpu>& gpus) {
  std::string out;
  for (const Gpu& gpu : gpus) {
    absl::StrAppend(&out, gpu.uuid, ",", gpu.split_count, ",", gpu.memory_mib,
                    ",", gpu.model, ",", wire::BoolText(gpu.healthy), ",",
                    SharingModeName(gpu.mode), ":");
  }
  return out;
}

absl::StatusOr<std::vector<Gpu>> DecodeVolcanoNodeRegister(
    absl::string_view text) {
  DS_ASSIGN_OR_RETURN(
      std::vector<absl::string_view> entries,
      wire::SplitRegisterEntries(text, ':', keys::kVolcanoNodeRegister));
  std::vector<Gpu> gpus;
  gpus.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    // Volcano's decodeNodeDevices reads only the pieces that hold a ','.
    if (!absl::StrContains(entries[i], ',')) continue;
    DS_ASSIGN_OR_RETURN(
        Gpu gpu, wire::DecodeRegisterEntry(
                     entries[i], kRegisterLayout, static_cast<int32_t>(i),
                     absl::StrCat(keys::kVolcanoNodeRegister, " entry ", i)));
    gpus.push_back(std::move(gpu));
  }
  return gpus;
}

std::string EncodeVolcanoAllocation(const PodAllocation& allocation) {
  std::vector<std::string> entries;
  for (const ContainerAllocation& container : allocation.containers) {
    if (container.is_init || container.devices.empty()) continue;
    std::string entry;
    wire::AppendGrants(container.devices, wire::MigIdForm::kSuffixed, &entry);
    entries.push_back(std::move(entry));
  }
  return absl::StrJoin(entries, ";");
}

absl::StatusOr<std::vector<std::vector<DeviceGrant>>> DecodeVolcanoAllocation(
    absl::string_view text, std::vector<absl::Status>* skipped) {
  std::vector<std::vector<DeviceGrant>> containers;
  if (absl::StripAsciiWhitespace(text).empty()) return containers;
  // Empty entries keep their place: the node plugin empties each
  // container's part of devices-to-allocate once it has served it.
  std::vector<absl::string_view> entries = absl::StrSplit(text, ';');
  containers.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    DS_ASSIGN_OR_RETURN(
        std::vector<DeviceGrant> grants,
        wire::ParseGrants(
            entries[i],
            absl::StrCat(keys::kVolcanoAllocation, " container ", i),
            wire::GrantSyntax::kVolcano, skipped));
    containers.push_back(std::move(grants));
  }
  return containers;
}

}  // namespace deviceshare
