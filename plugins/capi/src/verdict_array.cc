#include "verdict_array.h"

#include <cstdlib>
#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "deviceshare/model/reason_code.h"

namespace deviceshare::capi {
namespace {

// Copies `text` with its NUL to `*cursor` and moves the cursor past it.
const char* Place(const std::string& text, char** cursor) {
  char* at = *cursor;
  std::memcpy(at, text.c_str(), text.size() + 1);
  *cursor += text.size() + 1;
  return at;
}

}  // namespace

VerdictFields FieldsOf(const NodeVerdict& verdict) {
  const bool fits = verdict.fit.fits();
  VerdictFields fields;
  fields.fits = fits ? 1 : 0;
  fields.score = fits ? verdict.score : 0;
  // ReasonInfo names are string literals: they outlive every answer.
  fields.code = ReasonCodeName(verdict.fit.code).data();
  fields.unresolvable = !fits && verdict.fit.code.unresolvable() ? 1 : 0;
  return fields;
}

absl::StatusOr<deviceshare_node_verdict*> PackVerdicts(
    const std::vector<NodeVerdict>& verdicts) {
  if (verdicts.empty()) return nullptr;
  // Reasons are made once: NodeFit::Reason() formats its text.
  std::vector<std::string> reasons(verdicts.size());
  size_t text_bytes = 0;
  for (size_t i = 0; i < verdicts.size(); ++i) {
    if (!verdicts[i].fit.fits()) {
      reasons[i] = verdicts[i].fit.Reason();
      text_bytes += reasons[i].size() + 1;
    }
    text_bytes += verdicts[i].node.size() + 1;
  }
  const size_t struct_bytes =
      verdicts.size() * sizeof(deviceshare_node_verdict);
  void* block = std::malloc(struct_bytes + text_bytes);
  if (block == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("out of memory for ", verdicts.size(), " node verdicts"));
  }
  auto* out = static_cast<deviceshare_node_verdict*>(block);
  char* cursor = static_cast<char*>(block) + struct_bytes;
  for (size_t i = 0; i < verdicts.size(); ++i) {
    const NodeVerdict& verdict = verdicts[i];
    const VerdictFields fields = FieldsOf(verdict);
    out[i].node = Place(verdict.node, &cursor);
    out[i].fits = fields.fits;
    out[i].score = fields.score;
    out[i].code = fields.code;
    out[i].unresolvable = fields.unresolvable;
    out[i].reason = fields.fits ? nullptr : Place(reasons[i], &cursor);
  }
  return out;
}

}  // namespace deviceshare::capi
