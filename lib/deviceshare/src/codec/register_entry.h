// File: register_entry.h (internal to deviceshare_core)
//
// The comma-separated GPU entry of a node register annotation, which both
// dialects write:
//   Volcano                 UUID,split,memMiB,type,health,mode
//   HAMi <= 2.7 (legacy)    UUID,split,memMiB,devcore,type,numa,health
//                           [,index,mode]
// One decoder reads either layout column by column, so both dialects read
// each fact the same way and report the first bad column with the same
// message (wire_fields.h). The pieces the HAMi JSON form shares (the mode
// field, capabilities from the mode) are here too.
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_SRC_CODEC_REGISTER_ENTRY_H_
#define DEVICESHARE_SRC_CODEC_REGISTER_ENTRY_H_

#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "deviceshare/model/gpu.h"

namespace deviceshare::wire {

// What one column of an entry holds, and how it is read.
enum class RegisterColumn {
  kUuid,     // "uuid": Gpu::uuid, not empty
  kSplit,    // "split": Gpu::split_count
  kMemory,   // "memMiB": Gpu::memory_mib
  kDevcore,  // "devcore": Gpu::core_capacity
  kType,     // Gpu::model, any text
  kNuma,     // "numa": Gpu::numa_node; "-1" (unknown) reads as 0
  kHealth,   // "health": Gpu::healthy, "true" or "false"
  kIndex,    // "index": Gpu::index
  kMode,     // "mode": Gpu::mode, a SharingMode name
};

// The columns of one dialect's entry. An entry may have any of
// `field_counts` fields and then holds that many leading columns.
struct RegisterLayout {
  absl::string_view shape;  // names the columns in errors: "UUID,split,..."
  absl::Span<const RegisterColumn> columns;
  absl::Span<const size_t> field_counts;
};

// Decodes one entry, the `position`-th of the annotation; `where` names it
// in errors. Gpu::index is `position` unless an index column says
// otherwise; facts without a column keep Gpu's defaults; capabilities
// follow the mode (SetCapabilitiesFromMode).
absl::StatusOr<Gpu> DecodeRegisterEntry(absl::string_view entry,
                                        const RegisterLayout& layout,
                                        int32_t position,
                                        absl::string_view where);

// The mode field of `where`: a SharingMode name.
absl::StatusOr<SharingMode> ParseModeField(absl::string_view value,
                                           absl::string_view where);

// A GPU registered in a mode can run it; the register formats carry no
// other capability bits.
void SetCapabilitiesFromMode(Gpu& gpu);

}  // namespace deviceshare::wire

#endif  // DEVICESHARE_SRC_CODEC_REGISTER_ENTRY_H_
