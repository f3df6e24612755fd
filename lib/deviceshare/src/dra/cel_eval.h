// File: src/dra/cel_eval.h (internal)
//
// Evaluates a checked Ast against one device. Reads the tree and the device
// only, so one Ast may be evaluated on many threads at once. Errors are
// kFailedPrecondition.
#ifndef DEVICESHARE_SRC_DRA_CEL_EVAL_H_
#define DEVICESHARE_SRC_DRA_CEL_EVAL_H_

#include "absl/status/statusor.h"
#include "deviceshare/dra/cel.h"
#include "dra/cel_ast.h"
#include "dra/cel_value.h"

namespace deviceshare::dra::cel_internal {

absl::StatusOr<Value> Evaluate(const Ast& ast, const CelDevice& device);

}  // namespace deviceshare::dra::cel_internal

#endif  // DEVICESHARE_SRC_DRA_CEL_EVAL_H_
