#include "deviceshare/codec/volcano_codec.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "codec/wire_fields.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/status_macros.h"

namespace deviceshare {
namespace {

constexpr int kRegisterFields = 6;  // UUID,split,memMiB,type,health,mode

absl::StatusOr<Gpu> DecodeRegisterEntry(absl::string_view entry, int index) {
  const std::string where =
      absl::StrCat(keys::kVolcanoNodeRegister, " entry ", index);
  std::vector<absl::string_view> fields = absl::StrSplit(entry, ',');
  if (fields.size() != kRegisterFields) {
    return wire::FieldError(where, "UUID,split,memMiB,type,health,mode", entry,
                            absl::StrFormat("has %d fields, want %d",
                                            fields.size(), kRegisterFields));
  }
  Gpu gpu;
  gpu.index = index;  // Volcano identifies a GPU by its position
  gpu.uuid = std::string(fields[0]);
  if (gpu.uuid.empty()) return wire::FieldError(where, "uuid", "", "is empty");
  DS_ASSIGN_OR_RETURN(
      int64_t split,
      wire::ParseCount(fields[1], wire::kInt32Max, where, "split"));
  gpu.split_count = static_cast<int32_t>(split);
  DS_ASSIGN_OR_RETURN(
      gpu.memory_mib,
      wire::ParseCount(fields[2], wire::kInt64Max, where, "memMiB"));
  gpu.model = std::string(fields[3]);
  DS_ASSIGN_OR_RETURN(gpu.healthy, wire::ParseBool(fields[4], where, "health"));
  DS_ASSIGN_OR_RETURN(
      gpu.mode,
      ParseSharingMode(fields[5], absl::StrCat(where, " field mode")));
  // The node plugin registers the mode the GPU runs in, so the GPU can run
  // it; the format has no other capability bits.
  gpu.mig_capable = gpu.mode == SharingMode::kMig;
  gpu.mps_capable = gpu.mode == SharingMode::kMps;
  return gpu;
}

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
      wire::SplitTerminated(text, ':', keys::kVolcanoNodeRegister));
  std::vector<Gpu> gpus;
  gpus.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    DS_ASSIGN_OR_RETURN(Gpu gpu,
                        DecodeRegisterEntry(entries[i], static_cast<int>(i)));
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
    absl::string_view text) {
  std::vector<std::vector<DeviceGrant>> containers;
  text = absl::StripAsciiWhitespace(text);
  if (text.empty()) return containers;
  // Empty entries are accepted: the node plugin empties each container's
  // part of devices-to-allocate once it has served it.
  std::vector<absl::string_view> entries = absl::StrSplit(text, ';');
  containers.reserve(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    DS_ASSIGN_OR_RETURN(
        std::vector<DeviceGrant> grants,
        wire::ParseGrants(entries[i], absl::StrCat(keys::kVolcanoAllocation,
                                                   " container ", i)));
    containers.push_back(std::move(grants));
  }
  return containers;
}

}  // namespace deviceshare
