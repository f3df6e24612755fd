// File: verdict_array.h
//
// deviceshare_pod_filter_all's answer: the verdicts of every node as C
// structs, packed with the strings they point to into one malloc'd block,
// so that the host frees the whole answer with one call
// (deviceshare_verdicts_free) and reads it without a JSON decode.
//
// Thread safety: a pure function.
#ifndef DEVICESHARE_CAPI_VERDICT_ARRAY_H_
#define DEVICESHARE_CAPI_VERDICT_ARRAY_H_

#include <cstddef>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/c/deviceshare.h"
#include "deviceshare/scheduler/decision.h"

namespace deviceshare::capi {

// A verdict's scalar fields as the C API answers them, for one node
// (deviceshare_pod_filter_node) or every node (PackVerdicts): a misfit's
// score is 0, and only a misfit can be unresolvable. `code` is a static
// string.
struct VerdictFields {
  int fits = 0;
  int score = 0;
  const char* code = nullptr;
  int unresolvable = 0;
};
VerdictFields FieldsOf(const NodeVerdict& verdict);

// The verdicts as one block (ResourceExhausted when it cannot be
// allocated); nullptr for none. A fit's reason is NULL, its score the
// verdict's; a rejection's score is 0.
absl::StatusOr<deviceshare_node_verdict*> PackVerdicts(
    const std::vector<NodeVerdict>& verdicts);

}  // namespace deviceshare::capi

#endif  // DEVICESHARE_CAPI_VERDICT_ARRAY_H_
