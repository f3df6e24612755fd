#include "wire_fields.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "deviceshare/codec/dialect_modes.h"
#include "deviceshare/model/mig_slot.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::wire {
namespace {

// The vendor column of an allocation item. Both upstreams write only this
// value for NVIDIA grants; other vendors use other annotations.
constexpr char kVendor[] = "NVIDIA";
constexpr int kGrantFields = 4;  // UUID,NVIDIA,memMiB,cores
constexpr size_t kMaxQuotedValue = 80;

bool AllDigits(absl::string_view text) {
  if (text.empty()) return false;
  for (char c : text) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

std::string Shorten(absl::string_view value) {
  if (value.size() <= kMaxQuotedValue) return std::string(value);
  return absl::StrCat(value.substr(0, kMaxQuotedValue), "...");
}

constexpr char kMigIdShape[] =
    "is not a GPU uuid nor a MIG id GPU-x[group-position] or "
    "GPU-x[profile-start]";

// The inside `a-n` of a MIG id `id` (see ParseGrants in the header).
absl::Status ParseMigSuffix(absl::string_view id, absl::string_view inside,
                            absl::string_view where, MigSlot& slot) {
  const size_t dash = inside.rfind('-');
  if (dash == absl::string_view::npos || dash == 0 ||
      dash + 1 == inside.size() ||
      inside.find(']') != absl::string_view::npos) {
    return FieldError(where, "uuid", id, kMigIdShape);
  }
  absl::string_view name = inside.substr(0, dash);
  std::string number(inside.substr(dash + 1));
  // `a--n`: the '-' before the number is its sign, so report it as negative
  // rather than read a group named "a-".
  if (name.back() == '-') {
    name.remove_suffix(1);
    number.insert(0, "-");
    if (name.empty()) return FieldError(where, "uuid", id, kMigIdShape);
  }
  const bool placement = IsMigProfileName(name);
  DS_ASSIGN_OR_RETURN(int64_t n,
                      ParseCount(number, kInt32Max, where,
                                 placement ? "MIG start" : "MIG position"));
  if (placement) {
    slot.profile = std::string(name);
    slot.start = static_cast<int32_t>(n);
  } else {
    slot.group = std::string(name);
    slot.position = static_cast<int32_t>(n);
  }
  return absl::OkStatus();
}

// `GPU-x` or a MIG instance id `GPU-x[a-n]`.
absl::Status ParseGrantUuid(absl::string_view text, absl::string_view where,
                            DeviceGrant& grant) {
  if (text.empty()) return FieldError(where, "uuid", text, "is empty");
  size_t open = text.find('[');
  if (open == absl::string_view::npos) {
    grant.uuid = std::string(text);
    return absl::OkStatus();
  }
  if (open == 0 || text.back() != ']' || open + 2 >= text.size() ||
      text.find('[', open + 1) != absl::string_view::npos) {
    return FieldError(where, "uuid", text, kMigIdShape);
  }
  DS_RETURN_IF_ERROR(ParseMigSuffix(
      text, text.substr(open + 1, text.size() - open - 2), where, grant.mig));
  grant.uuid = std::string(text.substr(0, open));
  grant.mode = dialect::kMigMode;
  return absl::OkStatus();
}

// The `[group-position]` / `[profile-start]` suffix of a MIG grant, or ""
// when its slot has neither.
std::string MigSuffix(const MigSlot& slot) {
  if (!slot.group.empty() && slot.position >= 0) {
    return absl::StrCat("[", slot.group, "-", slot.position, "]");
  }
  if (!slot.profile.empty() && slot.start >= 0) {
    return absl::StrCat("[", slot.profile, "-", slot.start, "]");
  }
  return "";
}

absl::StatusOr<DeviceGrant> ParseGrant(absl::string_view item,
                                       absl::string_view where,
                                       GrantSyntax syntax) {
  std::vector<absl::string_view> fields = absl::StrSplit(item, ',');
  if (fields.size() < kGrantFields) {
    return FieldError(where, "UUID,NVIDIA,memMiB,cores", item,
                      absl::StrFormat("has %d fields, want at least %d",
                                      fields.size(), kGrantFields));
  }
  DeviceGrant grant;
  DS_RETURN_IF_ERROR(ParseGrantUuid(fields[0], where, grant));
  DS_ASSIGN_OR_RETURN(grant.memory_mib,
                      ParseCount(fields[2], kInt64Max, where, "memMiB"));
  // Volcano books any 32-bit cores figure; above 100 the GPU is full
  // either way, so the figure is read as 100.
  const int64_t max_cores =
      syntax == GrantSyntax::kVolcano ? kUint32Max : kMaxGrantCores;
  DS_ASSIGN_OR_RETURN(int64_t cores,
                      ParseCount(fields[3], max_cores, where, "cores"));
  grant.cores = static_cast<int32_t>(std::min(cores, kMaxGrantCores));
  return grant;
}

// The GPU a text that starts like a MIG id (`GPU-x[...`) names, read or
// not; nullopt when it does not start so.
std::optional<absl::string_view> GpuOfMigId(absl::string_view text) {
  const size_t open = text.find('[');
  if (open == absl::string_view::npos || open == 0) return std::nullopt;
  return text.substr(0, open);
}

// The grant a Volcano device that did not read stands for when its id
// names a GPU and a MIG instance on it (`GPU-x[...`): a MIG grant on that
// GPU without a slot, which holds the GPU whole (wire_fields.h).
std::optional<DeviceGrant> HeldByUnreadMigId(absl::string_view item) {
  std::vector<absl::string_view> fields = absl::StrSplit(item, ',');
  std::optional<absl::string_view> gpu = GpuOfMigId(fields[0]);
  if (!gpu) return std::nullopt;
  DeviceGrant grant;
  grant.uuid = std::string(*gpu);
  grant.mode = dialect::kMigMode;
  int64_t number = 0;
  if (fields.size() > 2 && absl::SimpleAtoi(fields[2], &number) &&
      number >= 0) {
    grant.memory_mib = number;
  }
  if (fields.size() > 3 && absl::SimpleAtoi(fields[3], &number) &&
      number >= 0) {
    grant.cores = static_cast<int32_t>(std::min(number, kMaxGrantCores));
  }
  return grant;
}

}  // namespace

absl::Status FieldError(absl::string_view where, absl::string_view field,
                        absl::string_view value, absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s field %s: \"%s\" %s", where, field, Shorten(value), why));
}

absl::StatusOr<int64_t> ParseCount(absl::string_view value, int64_t max,
                                   absl::string_view where,
                                   absl::string_view field) {
  if (value.empty()) return FieldError(where, field, value, "is empty");
  if (value[0] == '-' && AllDigits(value.substr(1))) {
    return FieldError(where, field, value, "is negative");
  }
  if (!AllDigits(value)) {
    return FieldError(where, field, value, "is not a decimal integer");
  }
  int64_t parsed = 0;
  if (!absl::SimpleAtoi(value, &parsed) || parsed > max) {
    return FieldError(where, field, value,
                      absl::StrCat("is out of range (max ", max, ")"));
  }
  return parsed;
}

absl::StatusOr<bool> ParseBool(absl::string_view value, absl::string_view where,
                               absl::string_view field) {
  if (value == BoolText(true)) return true;
  if (value == BoolText(false)) return false;
  return FieldError(where, field, value, "is not true or false");
}

absl::string_view BoolText(bool value) { return value ? "true" : "false"; }

absl::StatusOr<std::vector<absl::string_view>> SplitRegisterEntries(
    absl::string_view text, char separator, absl::string_view where) {
  text = absl::StripAsciiWhitespace(text);
  if (text.empty()) return std::vector<absl::string_view>();
  if (!absl::StrContains(text, separator)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: \"%s\" has no '%c' (each entry ends with one)",
                        where, Shorten(text), separator));
  }
  std::vector<absl::string_view> items =
      absl::StrSplit(text, separator, absl::SkipEmpty());
  return items;
}

void AppendGrants(const std::vector<DeviceGrant>& grants, MigIdForm mig_form,
                  std::string* out) {
  for (const DeviceGrant& grant : grants) {
    absl::StrAppend(out, grant.uuid);
    if (mig_form == MigIdForm::kSuffixed && grant.mode == dialect::kMigMode) {
      absl::StrAppend(out, MigSuffix(grant.mig));
    }
    absl::StrAppend(out, ",", kVendor, ",", grant.memory_mib, ",", grant.cores,
                    ":");
  }
}

absl::StatusOr<std::vector<DeviceGrant>> ParseGrants(
    absl::string_view entry, absl::string_view where, GrantSyntax syntax,
    std::vector<absl::Status>* skipped) {
  std::vector<absl::string_view> items;
  for (absl::string_view piece : absl::StrSplit(entry, ':')) {
    // A Volcano piece naming a MIG instance stands for it even without a
    // ',' (it is held, HeldByUnreadMigId).
    if (absl::StrContains(piece, ',') ||
        (syntax == GrantSyntax::kVolcano && GpuOfMigId(piece))) {
      items.push_back(piece);
    }
  }
  std::vector<DeviceGrant> grants;
  grants.reserve(items.size());
  for (size_t i = 0; i < items.size(); ++i) {
    absl::StatusOr<DeviceGrant> grant =
        ParseGrant(items[i], absl::StrCat(where, " device ", i), syntax);
    if (grant.ok()) {
      grants.push_back(*std::move(grant));
    } else if (syntax == GrantSyntax::kVolcano) {
      if (std::optional<DeviceGrant> held = HeldByUnreadMigId(items[i])) {
        grants.push_back(*std::move(held));
      }
      if (skipped != nullptr) skipped->push_back(grant.status());
    } else {
      return grant.status();
    }
  }
  return grants;
}

}  // namespace deviceshare::wire
