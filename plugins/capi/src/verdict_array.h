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

// The verdicts as one block (ResourceExhausted when it cannot be
// allocated); nullptr for none. A fit's reason is NULL, its score the
// verdict's; a rejection's score is 0.
absl::StatusOr<deviceshare_node_verdict*> PackVerdicts(
    const std::vector<NodeVerdict>& verdicts);

}  // namespace deviceshare::capi

#endif  // DEVICESHARE_CAPI_VERDICT_ARRAY_H_
