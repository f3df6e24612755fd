#include "dra/cel_ast.h"

#include "absl/strings/str_cat.h"

namespace deviceshare::dra::cel_internal {

absl::string_view TypeName(CelType type) {
  switch (type) {
    case CelType::kDyn:
      return "dyn";
    case CelType::kBool:
      return "bool";
    case CelType::kInt:
      return "int";
    case CelType::kString:
      return "string";
    case CelType::kQuantity:
      return "quantity";
    case CelType::kSemver:
      return "semver";
    case CelType::kDevice:
      return "device";
    case CelType::kAttributes:
      return "map(string, map(string, dyn))";
    case CelType::kCapacities:
      return "map(string, map(string, quantity))";
    case CelType::kAttributeDomain:
      return "map(string, dyn)";
    case CelType::kCapacityDomain:
      return "map(string, quantity)";
  }
  return "unknown";
}

std::string Position(absl::string_view source, int offset) {
  int line = 1;
  int column = 1;
  for (int i = 0; i < offset && i < static_cast<int>(source.size()); ++i) {
    if (source[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return absl::StrCat("line ", line, ", column ", column);
}

}  // namespace deviceshare::dra::cel_internal
