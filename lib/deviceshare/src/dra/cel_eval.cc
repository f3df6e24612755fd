#include "dra/cel_eval.h"

#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::dra::cel_internal {
namespace {

absl::Status EvalError(absl::string_view what) {
  return absl::FailedPreconditionError(what);
}

absl::Status NoOverload(absl::string_view op, const Value& a) {
  return EvalError(absl::StrCat("no matching overload for '", op, "' on ",
                                TypeName(a.type)));
}
absl::Status NoOverload(absl::string_view op, const Value& a, const Value& b) {
  return EvalError(absl::StrCat("no matching overload for '", op, "' on ",
                                TypeName(a.type), " and ", TypeName(b.type)));
}

// Whether a Device map key names `name` of `domain`: "<name>" belongs to
// the driver's domain, "<domain>/<name>" to its own.
bool KeyIs(absl::string_view key, absl::string_view driver,
           absl::string_view domain, absl::string_view name) {
  size_t slash = key.find('/');
  if (slash == absl::string_view::npos) return domain == driver && key == name;
  return key.substr(0, slash) == domain && key.substr(slash + 1) == name;
}

bool KeyInDomain(absl::string_view key, absl::string_view driver,
                 absl::string_view domain) {
  size_t slash = key.find('/');
  if (slash == absl::string_view::npos) return domain == driver;
  return key.substr(0, slash) == domain;
}

// A linear scan: a device has at most 32 attributes and capacities, and a
// scan needs no "<domain>/<name>" string built per lookup.
template <typename Map>
const typename Map::mapped_type* Find(const Map& map, absl::string_view driver,
                                      absl::string_view domain,
                                      absl::string_view name) {
  for (const auto& [key, value] : map) {
    if (KeyIs(key, driver, domain, name)) return &value;
  }
  return nullptr;
}

template <typename Map>
bool HasDomain(const Map& map, absl::string_view driver,
               absl::string_view domain) {
  for (const auto& entry : map) {
    if (KeyInDomain(entry.first, driver, domain)) return true;
  }
  return false;
}

Value StringValue(absl::string_view s) {
  Value v;
  v.type = CelType::kString;
  v.view = s;
  return v;
}

absl::string_view MethodName(Method method) {
  switch (method) {
    case Method::kCompareTo:
      return "compareTo";
    case Method::kIsGreaterThan:
      return "isGreaterThan";
    case Method::kIsLessThan:
      return "isLessThan";
    case Method::kAsInteger:
      return "asInteger";
    case Method::kMajor:
      return "major";
    case Method::kMinor:
      return "minor";
    case Method::kPatch:
      return "patch";
    case Method::kStartsWith:
      return "startsWith";
    case Method::kEndsWith:
      return "endsWith";
    case Method::kContains:
      return "contains";
    case Method::kLowerAscii:
      return "lowerAscii";
    case Method::kSize:
      return "size";
  }
  return "method";
}

int Sign(int64_t a, int64_t b) { return a < b ? -1 : (a > b ? 1 : 0); }

int64_t CodePoints(absl::string_view s) {
  int64_t n = 0;
  for (char c : s) {
    if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) ++n;
  }
  return n;
}

class Evaluator {
 public:
  Evaluator(const Ast& ast, const CelDevice& device)
      : ast_(ast),
        device_(device),
        driver_(device.driver.data(), device.driver.size()) {}

  absl::StatusOr<Value> Eval(int index) {
    const Node& node = ast_.nodes[index];
    switch (node.kind) {
      case NodeKind::kBoolLiteral:
        return Value::Bool(node.int_value != 0);
      case NodeKind::kIntLiteral:
        return Value::Int(node.int_value);
      case NodeKind::kStringLiteral:
        return StringValue(node.text);
      case NodeKind::kQuantityLiteral: {
        Value v;
        v.type = CelType::kQuantity;
        v.number = node.int_value;
        return v;
      }
      case NodeKind::kSemverLiteral: {
        Value v;
        v.type = CelType::kSemver;
        v.semver = *ParseSemver(node.text);  // checked when compiled
        return v;
      }
      case NodeKind::kDevice: {
        Value v;
        v.type = CelType::kDevice;
        return v;
      }
      case NodeKind::kField:
      case NodeKind::kIndex:
        return Member(node);
      case NodeKind::kIn:
        return In(node);
      case NodeKind::kNot: {
        DS_ASSIGN_OR_RETURN(Value v, Eval(node.left));
        if (v.type != CelType::kBool) return NoOverload("!", v);
        return Value::Bool(v.number == 0);
      }
      case NodeKind::kAnd:
      case NodeKind::kOr:
        return Logical(node);
      case NodeKind::kCompare:
        return Compare(node);
      case NodeKind::kCall:
        return Call(node);
    }
    return EvalError("unknown node");
  }

 private:
  absl::StatusOr<Value> Member(const Node& node) {
    DS_ASSIGN_OR_RETURN(Value operand, Eval(node.left));
    Value key;
    if (node.kind == NodeKind::kField) {
      key = StringValue(node.text);
    } else {
      DS_ASSIGN_OR_RETURN(key, Eval(node.right));
      if (key.type != CelType::kString) return NoOverload("[]", operand, key);
    }
    const Device& device = *device_.device;
    switch (operand.type) {
      case CelType::kDevice: {
        absl::string_view field = key.text();
        if (field == "driver") return StringValue(driver_);
        if (field == "allowMultipleAllocations") {
          return Value::Bool(device.allow_multiple_allocations);
        }
        Value v;
        v.type =
            field == "attributes" ? CelType::kAttributes : CelType::kCapacities;
        return v;
      }
      case CelType::kAttributes:
      case CelType::kCapacities: {
        // Any domain is a map, empty when the device has none of it.
        key.type = operand.type == CelType::kAttributes
                       ? CelType::kAttributeDomain
                       : CelType::kCapacityDomain;
        return key;
      }
      case CelType::kAttributeDomain: {
        const DeviceAttribute* attribute =
            Find(device.attributes, driver_, operand.text(), key.text());
        if (attribute == nullptr) {
          return EvalError(absl::StrCat("no such key: ", key.text()));
        }
        return AttributeValue(*attribute, key.text());
      }
      case CelType::kCapacityDomain: {
        const DeviceCapacity* capacity =
            Find(device.capacity, driver_, operand.text(), key.text());
        if (capacity == nullptr) {
          return EvalError(absl::StrCat("no such key: ", key.text()));
        }
        constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 1000;
        if (capacity->value > kMax || capacity->value < -kMax) {
          return EvalError(
              absl::StrCat("capacity ", key.text(), " out of range"));
        }
        Value v;
        v.type = CelType::kQuantity;
        v.number = capacity->value * 1000;
        return v;
      }
      default:
        return NoOverload(node.kind == NodeKind::kField ? "." : "[]", operand);
    }
  }

  absl::StatusOr<Value> AttributeValue(const DeviceAttribute& attribute,
                                       absl::string_view name) {
    switch (attribute.kind) {
      case DeviceAttribute::Kind::kInt:
        return Value::Int(attribute.int_value);
      case DeviceAttribute::Kind::kBool:
        return Value::Bool(attribute.bool_value);
      case DeviceAttribute::Kind::kString:
        return StringValue(attribute.text);
      case DeviceAttribute::Kind::kVersion: {
        std::optional<Semver> semver = ParseSemver(attribute.text);
        if (!semver.has_value()) {
          return EvalError(absl::StrCat("attribute ", name,
                                        " is not a valid semver: \"",
                                        attribute.text, "\""));
        }
        Value v;
        v.type = CelType::kSemver;
        v.semver = *semver;
        return v;
      }
    }
    return EvalError("unknown attribute kind");
  }

  absl::StatusOr<Value> In(const Node& node) {
    DS_ASSIGN_OR_RETURN(Value key, Eval(node.left));
    DS_ASSIGN_OR_RETURN(Value map, Eval(node.right));
    if (key.type != CelType::kString) return NoOverload("in", key, map);
    const Device& device = *device_.device;
    switch (map.type) {
      case CelType::kAttributes:
        return Value::Bool(HasDomain(device.attributes, driver_, key.text()));
      case CelType::kCapacities:
        return Value::Bool(HasDomain(device.capacity, driver_, key.text()));
      case CelType::kAttributeDomain:
        return Value::Bool(Find(device.attributes, driver_, map.text(),
                                key.text()) != nullptr);
      case CelType::kCapacityDomain:
        return Value::Bool(
            Find(device.capacity, driver_, map.text(), key.text()) != nullptr);
      default:
        return NoOverload("in", key, map);
    }
  }

  // CEL's commutative logic: false && <error> is false whichever side
  // errs (true || <error> likewise); otherwise the left error wins.
  absl::StatusOr<Value> Logical(const Node& node) {
    bool is_and = node.kind == NodeKind::kAnd;
    absl::string_view op = is_and ? "&&" : "||";
    // The value that decides the result alone: false for &&, true for ||.
    int64_t decisive = is_and ? 0 : 1;
    absl::StatusOr<Value> left = Eval(node.left);
    if (left.ok() && left->type != CelType::kBool) {
      left = NoOverload(op, *left);
    }
    if (left.ok() && left->number == decisive) return Value::Bool(!is_and);
    absl::StatusOr<Value> right = Eval(node.right);
    if (right.ok() && right->type != CelType::kBool) {
      right = NoOverload(op, *right);
    }
    if (right.ok() && right->number == decisive) return Value::Bool(!is_and);
    if (!left.ok()) return left.status();
    if (!right.ok()) return right.status();
    return Value::Bool(is_and);
  }

  absl::StatusOr<Value> Compare(const Node& node) {
    DS_ASSIGN_OR_RETURN(Value a, Eval(node.left));
    DS_ASSIGN_OR_RETURN(Value b, Eval(node.right));
    bool equality = node.op == CompareOp::kEq || node.op == CompareOp::kNe;
    static constexpr absl::string_view kSpelling[] = {"==", "!=", "<",
                                                      "<=", ">",  ">="};
    absl::string_view op = kSpelling[static_cast<int>(node.op)];
    if (a.type != b.type) {
      // Heterogeneous equality: values of different types are not equal.
      if (equality) return Value::Bool(node.op == CompareOp::kNe);
      return NoOverload(op, a, b);
    }
    int order = 0;
    switch (a.type) {
      case CelType::kBool:
      case CelType::kInt:
        order = Sign(a.number, b.number);
        break;
      case CelType::kString: {
        int c = a.text().compare(b.text());
        order = c < 0 ? -1 : (c > 0 ? 1 : 0);
        break;
      }
      case CelType::kQuantity:
        if (!equality) return NoOverload(op, a, b);
        order = Sign(a.number, b.number);
        break;
      case CelType::kSemver:
        if (!equality) return NoOverload(op, a, b);
        order = CompareSemver(a.semver, b.semver);
        break;
      default:
        return NoOverload(op, a, b);
    }
    switch (node.op) {
      case CompareOp::kEq:
        return Value::Bool(order == 0);
      case CompareOp::kNe:
        return Value::Bool(order != 0);
      case CompareOp::kLt:
        return Value::Bool(order < 0);
      case CompareOp::kLe:
        return Value::Bool(order <= 0);
      case CompareOp::kGt:
        return Value::Bool(order > 0);
      case CompareOp::kGe:
        return Value::Bool(order >= 0);
    }
    return EvalError("unknown comparison");
  }

  absl::StatusOr<Value> Call(const Node& node) {
    DS_ASSIGN_OR_RETURN(Value r, Eval(node.left));
    Value a;
    if (node.right >= 0) {
      DS_ASSIGN_OR_RETURN(a, Eval(node.right));
    }
    switch (node.method) {
      case Method::kCompareTo:
      case Method::kIsGreaterThan:
      case Method::kIsLessThan: {
        absl::string_view name = MethodName(node.method);
        int order = 0;
        if (r.type == CelType::kQuantity && a.type == CelType::kQuantity) {
          order = Sign(r.number, a.number);
        } else if (r.type == CelType::kSemver && a.type == CelType::kSemver) {
          order = CompareSemver(r.semver, a.semver);
        } else {
          return NoOverload(name, r, a);
        }
        if (node.method == Method::kCompareTo) return Value::Int(order);
        return Value::Bool(node.method == Method::kIsGreaterThan ? order > 0
                                                                 : order < 0);
      }
      case Method::kAsInteger:
        if (r.type != CelType::kQuantity) return NoOverload("asInteger", r);
        if (r.number % 1000 != 0) {
          return EvalError("cannot convert quantity to an integer");
        }
        return Value::Int(r.number / 1000);
      case Method::kMajor:
      case Method::kMinor:
      case Method::kPatch:
        if (r.type != CelType::kSemver)
          return NoOverload(MethodName(node.method), r);
        return Value::Int(node.method == Method::kMajor   ? r.semver.major
                          : node.method == Method::kMinor ? r.semver.minor
                                                          : r.semver.patch);
      case Method::kStartsWith:
      case Method::kEndsWith:
      case Method::kContains: {
        if (r.type != CelType::kString || a.type != CelType::kString) {
          return NoOverload(MethodName(node.method), r, a);
        }
        absl::string_view s = r.text();
        absl::string_view t = a.text();
        if (node.method == Method::kStartsWith) {
          return Value::Bool(absl::StartsWith(s, t));
        }
        if (node.method == Method::kEndsWith) {
          return Value::Bool(absl::EndsWith(s, t));
        }
        return Value::Bool(absl::StrContains(s, t));
      }
      case Method::kLowerAscii: {
        if (r.type != CelType::kString) return NoOverload("lowerAscii", r);
        Value v;
        v.type = CelType::kString;
        v.owns_text = true;
        v.owned = std::string(r.text());
        for (char& c : v.owned) {
          if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
        }
        return v;
      }
      case Method::kSize:
        if (r.type != CelType::kString) return NoOverload("size", r);
        return Value::Int(CodePoints(r.text()));
    }
    return EvalError("unknown method");
  }

  const Ast& ast_;
  const CelDevice& device_;
  absl::string_view driver_;
};

}  // namespace

absl::StatusOr<Value> Evaluate(const Ast& ast, const CelDevice& device) {
  if (device.device == nullptr) return EvalError("no device to evaluate");
  return Evaluator(ast, device).Eval(ast.root);
}

}  // namespace deviceshare::dra::cel_internal
