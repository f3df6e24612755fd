// File: src/dra/cel_parser.h (internal)
//
// Parses and type-checks a CEL selector of the DRA subset (see
// deviceshare/dra/cel.h) into an Ast. Static types catch what they can
// (device.driver.major(), quantity < quantity, unknown methods); attribute
// values are dyn, checked when evaluated.
#ifndef DEVICESHARE_SRC_DRA_CEL_PARSER_H_
#define DEVICESHARE_SRC_DRA_CEL_PARSER_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "dra/cel_ast.h"

namespace deviceshare::dra::cel_internal {

// The deepest expression tree accepted; deeper input (say "((((...") is a
// syntax error, which keeps parsing and evaluation off deep recursion.
inline constexpr int kMaxDepth = 96;

absl::StatusOr<Ast> Parse(absl::string_view expression);

}  // namespace deviceshare::dra::cel_internal

#endif  // DEVICESHARE_SRC_DRA_CEL_PARSER_H_
