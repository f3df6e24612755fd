// File: src/dra/cel_ast.h (internal)
//
// The checked expression tree of a compiled CEL selector: a flat vector of
// nodes linked by index, each with its static type. The parser
// (cel_parser.h) builds it, the evaluator (cel_eval.h) walks it.
#ifndef DEVICESHARE_SRC_DRA_CEL_AST_H_
#define DEVICESHARE_SRC_DRA_CEL_AST_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace deviceshare::dra::cel_internal {

// Static types; kDyn is an attribute value, whose type only the device
// knows. The map types are the two-level maps of device.attributes and
// device.capacity: kAttributes (domain -> map), kAttributeDomain (name ->
// value).
enum class CelType : uint8_t {
  kDyn,
  kBool,
  kInt,
  kString,
  kQuantity,
  kSemver,
  kDevice,
  kAttributes,
  kCapacities,
  kAttributeDomain,
  kCapacityDomain,
};

absl::string_view TypeName(CelType type);

enum class NodeKind : uint8_t {
  kBoolLiteral,      // int_value 0/1
  kIntLiteral,       // int_value
  kStringLiteral,    // text
  kQuantityLiteral,  // int_value: thousandths
  kSemverLiteral,    // text, validated
  kDevice,
  kField,    // left.<text>
  kIndex,    // left[right]
  kIn,       // left in right
  kNot,      // !left
  kAnd,      // left && right
  kOr,       // left || right
  kCompare,  // left <op> right
  kCall,     // method on left (receiver) with optional argument right
};

enum class CompareOp : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };

enum class Method : uint8_t {
  kCompareTo,
  kIsGreaterThan,
  kIsLessThan,
  kAsInteger,
  kMajor,
  kMinor,
  kPatch,
  kStartsWith,
  kEndsWith,
  kContains,
  kLowerAscii,
  kSize,
};

struct Node {
  NodeKind kind = NodeKind::kBoolLiteral;
  CelType type = CelType::kDyn;
  CompareOp op = CompareOp::kEq;
  Method method = Method::kSize;
  int left = -1;
  int right = -1;
  int depth = 1;
  int64_t int_value = 0;
  std::string text;
};

struct Ast {
  std::string expression;
  std::vector<Node> nodes;
  int root = -1;
};

// "line L, column C" (1-based, columns in bytes) of a byte offset.
std::string Position(absl::string_view source, int offset);

}  // namespace deviceshare::dra::cel_internal

#endif  // DEVICESHARE_SRC_DRA_CEL_AST_H_
