#include "deviceshare/model/mig_slot.h"

#include "absl/strings/ascii.h"
#include "absl/strings/strip.h"

namespace deviceshare {
namespace {

// Consumes a run of digits without a leading zero; false if there is none.
bool ConsumeNumber(absl::string_view& s) {
  if (s.empty() || s[0] < '1' || s[0] > '9') return false;
  size_t n = 1;
  while (n < s.size() && absl::ascii_isdigit(static_cast<unsigned char>(s[n])))
    ++n;
  s.remove_prefix(n);
  return true;
}

}  // namespace

const char* MigActionName(MigAction action) {
  switch (action) {
    case MigAction::kNone:
      return "";
    case MigAction::kReuse:
      return "reuse";
    case MigAction::kCreate:
      return "create";
    case MigAction::kRepartition:
      return "repartition";
  }
  return "";
}

bool IsMigProfileName(absl::string_view name) {
  absl::string_view s = name;
  if (!ConsumeNumber(s) || !absl::ConsumePrefix(&s, "g.") ||
      !ConsumeNumber(s) || !absl::ConsumePrefix(&s, "gb")) {
    return false;
  }
  if (s.empty()) return true;
  // Variant suffix: +me, +me.all, -me, +gfx (mig-mps-nvml.md §1.3).
  if (s[0] != '+' && s[0] != '-') return false;
  s.remove_prefix(1);
  if (s.empty() || !absl::ascii_islower(static_cast<unsigned char>(s[0]))) {
    return false;
  }
  for (char c : s) {
    if (!absl::ascii_islower(static_cast<unsigned char>(c)) && c != '.') {
      return false;
    }
  }
  return s.back() != '.';
}

}  // namespace deviceshare
