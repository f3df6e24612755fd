// File: wire_fields.h (internal to deviceshare_core)
//
// The field-level pieces that the Volcano and HAMi codecs share, so that
// both dialects read numbers, booleans and the per-GPU allocation item
// `UUID,NVIDIA,memMiB,cores:` the same way and report errors the same way:
//
//   <where> field <field>: "<value>" <why>
//
// where <where> names the annotation and the entry, e.g.
// `hami.io/vgpu-devices-allocated container 1 device 0`.
#ifndef DEVICESHARE_SRC_WIRE_FIELDS_H_
#define DEVICESHARE_SRC_WIRE_FIELDS_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/model/pod_allocation.h"

namespace deviceshare::wire {

inline constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
inline constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
inline constexpr int64_t kUint32Max = std::numeric_limits<uint32_t>::max();
// A grant's cores are a percentage of one GPU's SMs; both upstreams cap the
// written value at 100.
inline constexpr int64_t kMaxGrantCores = 100;

// InvalidArgument `<where> field <field>: "<value>" <why>`; long values are
// shortened so that one bad register string does not flood a log line.
absl::Status FieldError(absl::string_view where, absl::string_view field,
                        absl::string_view value, absl::string_view why);

// A non-negative decimal integer in [0, max]: digits only, no sign, spaces
// or unit suffix (the wire formats never carry them, and accepting them
// would make decode(encode(x)) lossy).
absl::StatusOr<int64_t> ParseCount(absl::string_view value, int64_t max,
                                   absl::string_view where,
                                   absl::string_view field);

// Exactly "true" or "false": anything else is more likely corruption than
// an intent, so it is rejected rather than read as Go's ParseBool would.
absl::StatusOr<bool> ParseBool(absl::string_view value, absl::string_view where,
                               absl::string_view field);
absl::string_view BoolText(bool value);

// Splits a node registration string `text` (surrounding whitespace
// ignored) into its entries as both upstreams' decoders do: "a:b:" and
// "a:b" -> {"a", "b"}, empty entries are skipped, "" -> {}. Text that holds
// no `separator` at all is an error naming `where` (upstream refuses it).
absl::StatusOr<std::vector<absl::string_view>> SplitRegisterEntries(
    absl::string_view text, char separator, absl::string_view where);

// How AppendGrants writes the uuid of a MIG grant.
enum class MigIdForm {
  kPlainUuid,  // `GPU-x`: HAMi, whose MIG facts travel in their own JSON
  kSuffixed,   // `GPU-x[group-position]` / `GPU-x[profile-start]`: Volcano
};

// Appends `UUID,NVIDIA,memMiB,cores:` for each grant. With kSuffixed, a
// grant of mode mig gets `[group-position]` when its MigSlot has a group
// and a position >= 0, else `[profile-start]` when it has a profile and a
// start >= 0, else nothing (it then reads back as a plain grant).
void AppendGrants(const std::vector<DeviceGrant>& grants, MigIdForm mig_form,
                  std::string* out);

// How a container's grants are read: `UUID,NVIDIA,memMiB,cores:` per
// device, as both upstreams' decoders read it (upstream-hami.md,
// upstream-volcano.md; docs/compatibility.md): every ':'-separated piece
// holding a ',' is a device of at least four fields, whatever its vendor
// column says and whether or not a ':' ends it; a piece without a ',' stands
// for nothing. kHami: a device that does not read fails the container
// (memory and cores are non-negative decimal integers: HAMi would book a
// negative figure as usage below zero). kVolcano: as Volcano's
// decodeContainerDevices, a device that does not read (fewer than four
// fields, a memory or cores figure that is not a non-negative 32-bit
// integer, a malformed MIG id) is skipped and the others kept, and cores
// above 100 read as 100. One exception, where deviceshare fails closed
// and Volcano does not: a device whose id starts `GPU-x[` and does not
// read (also one without a ',') is kept as a MIG grant on `GPU-x` without a
// slot (and with the memory and cores it gives, 0 where they do not read), so
// that its GPU is held whole (MigSlot::holds_gpu) rather than its instance
// handed out twice.
enum class GrantSyntax { kHami, kVolcano };

// Parses one container's grants (possibly none) in `syntax`. Grants get
// gpu_index -1 and mode hami-core, except that a MIG instance id `GPU-x[a-n]`
// yields uuid `GPU-x`, mode mig and a MigSlot: the bracket is split at its last
// '-'; when `a` is a MIG profile name it is {profile a, start n} (size 0: not
// carried), else {group a, position n}. With kVolcano, the error of each
// skipped device is appended to `skipped` when it is not null.
absl::StatusOr<std::vector<DeviceGrant>> ParseGrants(
    absl::string_view entry, absl::string_view where, GrantSyntax syntax,
    std::vector<absl::Status>* skipped = nullptr);

}  // namespace deviceshare::wire

#endif  // DEVICESHARE_SRC_WIRE_FIELDS_H_
