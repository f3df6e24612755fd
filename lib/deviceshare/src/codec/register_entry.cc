#include "codec/register_entry.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "codec/wire_fields.h"
#include "deviceshare/codec/dialect_modes.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::wire {
namespace {

// HAMi's node side writes an unknown NUMA node (sysfs "-1") as 0; an older
// or foreign writer may not have, so -1 is read the same way. Any other
// negative value is corruption.
constexpr absl::string_view kUnknownNuma = "-1";

absl::StatusOr<int32_t> ParseInt32(absl::string_view value,
                                   absl::string_view where,
                                   absl::string_view field) {
  DS_ASSIGN_OR_RETURN(int64_t parsed,
                      ParseCount(value, kInt32Max, where, field));
  return static_cast<int32_t>(parsed);
}

// Reads `value`, the text of `column`, into `gpu`.
absl::Status DecodeColumn(RegisterColumn column, absl::string_view value,
                          absl::string_view where, Gpu& gpu) {
  switch (column) {
    case RegisterColumn::kUuid:
      if (value.empty()) return FieldError(where, "uuid", value, "is empty");
      gpu.uuid = std::string(value);
      return absl::OkStatus();
    case RegisterColumn::kSplit: {
      DS_ASSIGN_OR_RETURN(gpu.split_count, ParseInt32(value, where, "split"));
      return absl::OkStatus();
    }
    case RegisterColumn::kMemory: {
      DS_ASSIGN_OR_RETURN(gpu.memory_mib,
                          ParseCount(value, kInt64Max, where, "memMiB"));
      return absl::OkStatus();
    }
    case RegisterColumn::kDevcore: {
      DS_ASSIGN_OR_RETURN(gpu.core_capacity,
                          ParseInt32(value, where, "devcore"));
      return absl::OkStatus();
    }
    case RegisterColumn::kType:
      gpu.model = std::string(value);
      return absl::OkStatus();
    case RegisterColumn::kNuma: {
      if (value == kUnknownNuma) {
        gpu.numa_node = 0;
        return absl::OkStatus();
      }
      DS_ASSIGN_OR_RETURN(gpu.numa_node, ParseInt32(value, where, "numa"));
      return absl::OkStatus();
    }
    case RegisterColumn::kHealth: {
      DS_ASSIGN_OR_RETURN(gpu.healthy, ParseBool(value, where, "health"));
      return absl::OkStatus();
    }
    case RegisterColumn::kIndex: {
      DS_ASSIGN_OR_RETURN(gpu.index, ParseInt32(value, where, "index"));
      return absl::OkStatus();
    }
    case RegisterColumn::kMode: {
      DS_ASSIGN_OR_RETURN(gpu.mode, ParseModeField(value, where));
      return absl::OkStatus();
    }
  }
  return absl::InternalError("unknown register column");
}

}  // namespace

absl::StatusOr<Gpu> DecodeRegisterEntry(absl::string_view entry,
                                        const RegisterLayout& layout,
                                        int32_t position,
                                        absl::string_view where) {
  std::vector<absl::string_view> fields = absl::StrSplit(entry, ',');
  const auto& counts = layout.field_counts;
  if (std::find(counts.begin(), counts.end(), fields.size()) == counts.end() ||
      fields.size() > layout.columns.size()) {
    return FieldError(where, layout.shape, entry,
                      absl::StrCat("has ", fields.size(), " fields, want ",
                                   absl::StrJoin(counts, " or ")));
  }
  Gpu gpu;
  gpu.index = position;
  for (size_t i = 0; i < fields.size(); ++i) {
    DS_RETURN_IF_ERROR(DecodeColumn(layout.columns[i], fields[i], where, gpu));
  }
  SetCapabilitiesFromMode(gpu);
  return gpu;
}

absl::StatusOr<SharingMode> ParseModeField(absl::string_view value,
                                           absl::string_view where) {
  return ParseSharingMode(value, absl::StrCat(where, " field mode"));
}

void SetCapabilitiesFromMode(Gpu& gpu) {
  gpu.mig_capable = gpu.mode == dialect::kMigMode;
  gpu.mps_capable = gpu.mode == dialect::kMpsMode;
}

}  // namespace deviceshare::wire
