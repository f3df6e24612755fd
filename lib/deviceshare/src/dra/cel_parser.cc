#include "dra/cel_parser.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "deviceshare/model/units.h"
#include "deviceshare/status_macros.h"
#include "dra/cel_lexer.h"
#include "dra/cel_value.h"

namespace deviceshare::dra::cel_internal {
namespace {

bool Is(CelType type, CelType want) {
  return type == want || type == CelType::kDyn;
}

bool IsScalar(CelType type) {
  switch (type) {
    case CelType::kDyn:
    case CelType::kBool:
    case CelType::kInt:
    case CelType::kString:
    case CelType::kQuantity:
    case CelType::kSemver:
      return true;
    default:
      return false;
  }
}

struct MethodInfo {
  absl::string_view name;
  Method method;
  int args;
};

constexpr MethodInfo kMethods[] = {
    {"compareTo", Method::kCompareTo, 1},
    {"isGreaterThan", Method::kIsGreaterThan, 1},
    {"isLessThan", Method::kIsLessThan, 1},
    {"asInteger", Method::kAsInteger, 0},
    {"major", Method::kMajor, 0},
    {"minor", Method::kMinor, 0},
    {"patch", Method::kPatch, 0},
    {"startsWith", Method::kStartsWith, 1},
    {"endsWith", Method::kEndsWith, 1},
    {"contains", Method::kContains, 1},
    {"lowerAscii", Method::kLowerAscii, 0},
    {"size", Method::kSize, 0},
};

constexpr absl::string_view kMacros[] = {"has",        "all", "exists",
                                         "exists_one", "map", "filter"};

bool IsMacro(absl::string_view name) {
  return std::find(std::begin(kMacros), std::end(kMacros), name) !=
         std::end(kMacros);
}

class Parser {
 public:
  Parser(absl::string_view source, std::vector<Token> tokens)
      : src_(source), tokens_(std::move(tokens)) {}

  absl::StatusOr<Ast> Run() {
    DS_ASSIGN_OR_RETURN(int root, ParseExpr());
    if (Peek().kind != TokenKind::kEnd) {
      return Unexpected(Peek());
    }
    ast_.expression = std::string(src_);
    ast_.root = root;
    return std::move(ast_);
  }

 private:
  const Token& Peek() const { return tokens_[pos_]; }
  const Token& Next() {
    const Token& t = tokens_[pos_];
    if (t.kind != TokenKind::kEnd) ++pos_;
    return t;
  }
  bool PeekPunct(absl::string_view p) const {
    return Peek().kind == TokenKind::kPunct && Peek().text == p;
  }
  bool AcceptPunct(absl::string_view p) {
    if (!PeekPunct(p)) return false;
    Next();
    return true;
  }

  absl::Status SyntaxError(int offset, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("syntax error at ", Position(src_, offset), ": ", what));
  }
  absl::Status Unsupported(int offset, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("unsupported: ", what, " at ", Position(src_, offset)));
  }
  absl::Status TypeError(int offset, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("type error at ", Position(src_, offset), ": ", what));
  }
  absl::Status Unexpected(const Token& t) const {
    if (t.kind == TokenKind::kEnd) {
      return SyntaxError(t.offset, "unexpected end of expression");
    }
    if (t.kind == TokenKind::kPunct) {
      return SyntaxError(t.offset, absl::StrCat("unexpected '", t.text, "'"));
    }
    if (t.kind == TokenKind::kString) {
      return SyntaxError(t.offset, "unexpected string literal");
    }
    return SyntaxError(t.offset, absl::StrCat("unexpected '", t.text, "'"));
  }
  absl::Status Expect(absl::string_view p) {
    if (AcceptPunct(p)) return absl::OkStatus();
    const Token& t = Peek();
    if (t.kind == TokenKind::kEnd) {
      return SyntaxError(t.offset, absl::StrCat("expected '", p, "', got end"));
    }
    return SyntaxError(
        t.offset,
        absl::StrCat("expected '", p, "', got '",
                     t.kind == TokenKind::kString ? "\"" : "", t.text, "'"));
  }

  // Appends a node; its depth bounds evaluation's recursion.
  absl::StatusOr<int> Add(Node node, int offset) {
    for (int child : {node.left, node.right}) {
      if (child >= 0) {
        node.depth = std::max(node.depth, ast_.nodes[child].depth + 1);
      }
    }
    if (node.depth > kMaxDepth) {
      return SyntaxError(offset, "expression nested too deeply");
    }
    ast_.nodes.push_back(std::move(node));
    return static_cast<int>(ast_.nodes.size()) - 1;
  }
  CelType TypeOf(int node) const { return ast_.nodes[node].type; }

  absl::StatusOr<int> ParseExpr() {
    if (++nesting_ > kMaxDepth) {
      return SyntaxError(Peek().offset, "expression nested too deeply");
    }
    DS_ASSIGN_OR_RETURN(int node, ParseOr());
    if (PeekPunct("?")) {
      return Unsupported(Peek().offset, "conditional operator '?:'");
    }
    --nesting_;
    return node;
  }

  absl::StatusOr<int> ParseOr() {
    DS_ASSIGN_OR_RETURN(int left, ParseAnd());
    while (PeekPunct("||")) {
      int offset = Next().offset;
      DS_ASSIGN_OR_RETURN(int right, ParseAnd());
      DS_ASSIGN_OR_RETURN(left,
                          Logical(NodeKind::kOr, "||", left, right, offset));
    }
    return left;
  }

  absl::StatusOr<int> ParseAnd() {
    DS_ASSIGN_OR_RETURN(int left, ParseRelation());
    while (PeekPunct("&&")) {
      int offset = Next().offset;
      DS_ASSIGN_OR_RETURN(int right, ParseRelation());
      DS_ASSIGN_OR_RETURN(left,
                          Logical(NodeKind::kAnd, "&&", left, right, offset));
    }
    return left;
  }

  absl::StatusOr<int> Logical(NodeKind kind, absl::string_view op, int left,
                              int right, int offset) {
    for (int side : {left, right}) {
      if (!Is(TypeOf(side), CelType::kBool)) {
        return TypeError(offset,
                         absl::StrCat("operator '", op, "' needs bools, got ",
                                      TypeName(TypeOf(side))));
      }
    }
    Node node;
    node.kind = kind;
    node.type = CelType::kBool;
    node.left = left;
    node.right = right;
    return Add(std::move(node), offset);
  }

  absl::StatusOr<int> ParseRelation() {
    DS_ASSIGN_OR_RETURN(int left, ParseAdditive());
    while (true) {
      const Token& t = Peek();
      if (t.kind == TokenKind::kIdent && t.text == "in") {
        int offset = Next().offset;
        DS_ASSIGN_OR_RETURN(int right, ParseAdditive());
        DS_ASSIGN_OR_RETURN(left, In(left, right, offset));
        continue;
      }
      if (t.kind != TokenKind::kPunct) return left;
      CompareOp op;
      if (t.text == "==") {
        op = CompareOp::kEq;
      } else if (t.text == "!=") {
        op = CompareOp::kNe;
      } else if (t.text == "<") {
        op = CompareOp::kLt;
      } else if (t.text == "<=") {
        op = CompareOp::kLe;
      } else if (t.text == ">") {
        op = CompareOp::kGt;
      } else if (t.text == ">=") {
        op = CompareOp::kGe;
      } else {
        return left;
      }
      std::string spelling = t.text;
      int offset = Next().offset;
      DS_ASSIGN_OR_RETURN(int right, ParseAdditive());
      DS_ASSIGN_OR_RETURN(left, Compare(op, spelling, left, right, offset));
    }
  }

  absl::StatusOr<int> In(int key, int map, int offset) {
    CelType m = TypeOf(map);
    if (m != CelType::kAttributes && m != CelType::kCapacities &&
        m != CelType::kAttributeDomain && m != CelType::kCapacityDomain) {
      return Unsupported(offset,
                         absl::StrCat("operator 'in' on ", TypeName(m)));
    }
    if (!Is(TypeOf(key), CelType::kString)) {
      return TypeError(offset, absl::StrCat("map keys are strings, got ",
                                            TypeName(TypeOf(key))));
    }
    Node node;
    node.kind = NodeKind::kIn;
    node.type = CelType::kBool;
    node.left = key;
    node.right = map;
    return Add(std::move(node), offset);
  }

  absl::StatusOr<int> Compare(CompareOp op, absl::string_view spelling,
                              int left, int right, int offset) {
    CelType l = TypeOf(left);
    CelType r = TypeOf(right);
    bool equality = op == CompareOp::kEq || op == CompareOp::kNe;
    auto overload_error = [&] {
      return TypeError(
          offset, absl::StrCat("no matching overload for '", spelling, "' on ",
                               TypeName(l), " and ", TypeName(r)));
    };
    if (!IsScalar(l) || !IsScalar(r)) return overload_error();
    if (l != CelType::kDyn && r != CelType::kDyn && l != r) {
      return overload_error();
    }
    if (!equality) {
      for (CelType t : {l, r}) {
        if (t == CelType::kQuantity || t == CelType::kSemver) {
          return TypeError(offset,
                           absl::StrCat("no matching overload for '", spelling,
                                        "' on ", TypeName(t),
                                        " (use compareTo, isGreaterThan or "
                                        "isLessThan)"));
        }
      }
    }
    Node node;
    node.kind = NodeKind::kCompare;
    node.type = CelType::kBool;
    node.op = op;
    node.left = left;
    node.right = right;
    return Add(std::move(node), offset);
  }

  absl::StatusOr<int> ParseAdditive() {
    DS_ASSIGN_OR_RETURN(int node, ParseUnary());
    const Token& t = Peek();
    if (t.kind == TokenKind::kPunct &&
        (t.text == "+" || t.text == "-" || t.text == "*" || t.text == "/" ||
         t.text == "%")) {
      return Unsupported(t.offset,
                         absl::StrCat("arithmetic operator '", t.text, "'"));
    }
    return node;
  }

  absl::StatusOr<int> ParseUnary() {
    std::vector<int> nots;
    int minuses = 0;
    int minus_offset = 0;
    while (true) {
      if (PeekPunct("!")) {
        if (minuses > 0) {
          return Unsupported(Peek().offset, "operator '!' after '-'");
        }
        nots.push_back(Next().offset);
      } else if (PeekPunct("-")) {
        if (minuses == 0) minus_offset = Peek().offset;
        ++minuses;
        Next();
      } else {
        break;
      }
    }
    DS_ASSIGN_OR_RETURN(int node, ParseMember());
    if (minuses > 0) {
      Node& operand = ast_.nodes[node];
      if (operand.kind != NodeKind::kIntLiteral) {
        return Unsupported(minus_offset, "arithmetic operator '-'");
      }
      // Only negative int literals: `x.compareTo(y) == -1`.
      if (minuses % 2 == 1) operand.int_value = -operand.int_value;
    }
    for (auto it = nots.rbegin(); it != nots.rend(); ++it) {
      if (!Is(TypeOf(node), CelType::kBool)) {
        return TypeError(*it, absl::StrCat("operator '!' needs a bool, got ",
                                           TypeName(TypeOf(node))));
      }
      Node n;
      n.kind = NodeKind::kNot;
      n.type = CelType::kBool;
      n.left = node;
      DS_ASSIGN_OR_RETURN(node, Add(std::move(n), *it));
    }
    return node;
  }

  absl::StatusOr<int> ParseMember() {
    DS_ASSIGN_OR_RETURN(int node, ParsePrimary());
    while (true) {
      if (PeekPunct(".")) {
        Next();
        const Token& name = Peek();
        if (name.kind != TokenKind::kIdent) {
          return SyntaxError(name.offset, "expected a field or method name");
        }
        Next();
        if (PeekPunct("(")) {
          // Named before the arguments: they may use what only the
          // macro would declare (`exists(x, x > 1)`).
          DS_RETURN_IF_ERROR(KnownFunction(name, /*global=*/false));
          int paren = Next().offset;
          DS_ASSIGN_OR_RETURN(std::vector<int> args, ParseArgs());
          DS_ASSIGN_OR_RETURN(node, MethodCall(node, name, args, paren));
        } else {
          DS_ASSIGN_OR_RETURN(node, Field(node, name));
        }
      } else if (PeekPunct("[")) {
        int offset = Next().offset;
        DS_ASSIGN_OR_RETURN(int key, ParseExpr());
        DS_RETURN_IF_ERROR(Expect("]"));
        DS_ASSIGN_OR_RETURN(node, Index(node, key, offset));
      } else {
        return node;
      }
    }
  }

  // After '(': the arguments and the closing ')'.
  absl::StatusOr<std::vector<int>> ParseArgs() {
    std::vector<int> args;
    if (AcceptPunct(")")) return args;
    while (true) {
      DS_ASSIGN_OR_RETURN(int arg, ParseExpr());
      args.push_back(arg);
      if (AcceptPunct(")")) return args;
      DS_RETURN_IF_ERROR(Expect(","));
    }
  }

  absl::StatusOr<int> Field(int operand, const Token& name) {
    CelType t = TypeOf(operand);
    Node node;
    node.kind = NodeKind::kField;
    node.left = operand;
    node.text = name.text;
    switch (t) {
      case CelType::kDevice:
        if (name.text == "driver") {
          node.type = CelType::kString;
        } else if (name.text == "attributes") {
          node.type = CelType::kAttributes;
        } else if (name.text == "capacity") {
          node.type = CelType::kCapacities;
        } else if (name.text == "allowMultipleAllocations") {
          node.type = CelType::kBool;
        } else {
          return Unsupported(name.offset,
                             absl::StrCat("field 'device.", name.text, "'"));
        }
        break;
      // A field of a map is the entry of that key.
      case CelType::kAttributes:
        node.type = CelType::kAttributeDomain;
        break;
      case CelType::kCapacities:
        node.type = CelType::kCapacityDomain;
        break;
      case CelType::kAttributeDomain:
        node.type = CelType::kDyn;
        break;
      case CelType::kCapacityDomain:
        node.type = CelType::kQuantity;
        break;
      default:
        return TypeError(name.offset, absl::StrCat("no field '", name.text,
                                                   "' on ", TypeName(t)));
    }
    return Add(std::move(node), name.offset);
  }

  absl::StatusOr<int> Index(int operand, int key, int offset) {
    CelType t = TypeOf(operand);
    Node node;
    node.kind = NodeKind::kIndex;
    node.left = operand;
    node.right = key;
    switch (t) {
      case CelType::kAttributes:
        node.type = CelType::kAttributeDomain;
        break;
      case CelType::kCapacities:
        node.type = CelType::kCapacityDomain;
        break;
      case CelType::kAttributeDomain:
        node.type = CelType::kDyn;
        break;
      case CelType::kCapacityDomain:
        node.type = CelType::kQuantity;
        break;
      default:
        return Unsupported(offset, absl::StrCat("indexing ", TypeName(t)));
    }
    if (!Is(TypeOf(key), CelType::kString)) {
      return TypeError(offset, absl::StrCat("map keys are strings, got ",
                                            TypeName(TypeOf(key))));
    }
    return Add(std::move(node), offset);
  }

  absl::Status KnownFunction(const Token& name, bool global) const {
    if (IsMacro(name.text)) {
      return Unsupported(name.offset, absl::StrCat("macro '", name.text, "'"));
    }
    bool known = false;
    if (global) {
      known = name.text == "size" || name.text == "quantity" ||
              name.text == "semver";
    } else {
      for (const MethodInfo& m : kMethods) {
        if (m.name == name.text) known = true;
      }
    }
    if (!known) {
      return Unsupported(name.offset,
                         absl::StrCat("function '", name.text, "'"));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<int> MethodCall(int receiver, const Token& name,
                                 const std::vector<int>& args, int paren) {
    const MethodInfo* info = nullptr;
    for (const MethodInfo& m : kMethods) {
      if (m.name == name.text) info = &m;
    }
    if (info == nullptr) {
      return Unsupported(name.offset,
                         absl::StrCat("function '", name.text, "'"));
    }
    return Call(*info, receiver, args, name.offset, paren);
  }

  absl::StatusOr<int> Call(const MethodInfo& info, int receiver,
                           const std::vector<int>& args, int offset,
                           int paren) {
    if (static_cast<int>(args.size()) != info.args) {
      return TypeError(paren,
                       absl::StrCat("'", info.name, "' takes ", info.args,
                                    " argument(s), got ", args.size()));
    }
    CelType r = TypeOf(receiver);
    CelType a = args.empty() ? CelType::kDyn : TypeOf(args[0]);
    auto mismatch = [&] {
      std::string got(TypeName(r));
      if (!args.empty()) absl::StrAppend(&got, " and ", TypeName(a));
      return TypeError(offset, absl::StrCat("no matching overload for '",
                                            info.name, "' on ", got));
    };
    Node node;
    node.kind = NodeKind::kCall;
    node.method = info.method;
    node.left = receiver;
    node.right = args.empty() ? -1 : args[0];
    switch (info.method) {
      case Method::kCompareTo:
      case Method::kIsGreaterThan:
      case Method::kIsLessThan: {
        bool receiver_ok = r == CelType::kDyn || r == CelType::kQuantity ||
                           r == CelType::kSemver;
        bool arg_ok = a == CelType::kDyn || a == CelType::kQuantity ||
                      a == CelType::kSemver;
        if (!receiver_ok || !arg_ok ||
            (r != CelType::kDyn && a != CelType::kDyn && r != a)) {
          return mismatch();
        }
        node.type =
            info.method == Method::kCompareTo ? CelType::kInt : CelType::kBool;
        break;
      }
      case Method::kAsInteger:
        if (!Is(r, CelType::kQuantity)) return mismatch();
        node.type = CelType::kInt;
        break;
      case Method::kMajor:
      case Method::kMinor:
      case Method::kPatch:
        if (!Is(r, CelType::kSemver)) return mismatch();
        node.type = CelType::kInt;
        break;
      case Method::kStartsWith:
      case Method::kEndsWith:
      case Method::kContains:
        if (!Is(r, CelType::kString) || !Is(a, CelType::kString)) {
          return mismatch();
        }
        node.type = CelType::kBool;
        break;
      case Method::kLowerAscii:
        if (!Is(r, CelType::kString)) return mismatch();
        node.type = CelType::kString;
        break;
      case Method::kSize:
        if (!Is(r, CelType::kString)) return mismatch();
        node.type = CelType::kInt;
        break;
    }
    return Add(std::move(node), offset);
  }

  absl::StatusOr<int> ParsePrimary() {
    const Token& t = Peek();
    switch (t.kind) {
      case TokenKind::kEnd:
        return Unexpected(t);
      case TokenKind::kInt: {
        Node node;
        node.kind = NodeKind::kIntLiteral;
        node.type = CelType::kInt;
        node.int_value = t.int_value;
        Next();
        return Add(std::move(node), t.offset);
      }
      case TokenKind::kString: {
        Node node;
        node.kind = NodeKind::kStringLiteral;
        node.type = CelType::kString;
        node.text = t.text;
        Next();
        return Add(std::move(node), t.offset);
      }
      case TokenKind::kPunct:
        if (t.text == "(") {
          Next();
          DS_ASSIGN_OR_RETURN(int node, ParseExpr());
          DS_RETURN_IF_ERROR(Expect(")"));
          return node;
        }
        if (t.text == "[") return Unsupported(t.offset, "list literal");
        if (t.text == "{") return Unsupported(t.offset, "map literal");
        return Unexpected(t);
      case TokenKind::kIdent:
        break;
    }
    const Token& name = Next();
    if (PeekPunct("(")) {
      DS_RETURN_IF_ERROR(KnownFunction(name, /*global=*/true));
      int paren = Next().offset;
      DS_ASSIGN_OR_RETURN(std::vector<int> args, ParseArgs());
      return GlobalCall(name, args, paren);
    }
    Node node;
    if (name.text == "true" || name.text == "false") {
      node.kind = NodeKind::kBoolLiteral;
      node.type = CelType::kBool;
      node.int_value = name.text == "true" ? 1 : 0;
    } else if (name.text == "device") {
      node.kind = NodeKind::kDevice;
      node.type = CelType::kDevice;
    } else if (name.text == "null") {
      return Unsupported(name.offset, "null");
    } else if (name.text == "in") {
      return Unexpected(name);
    } else {
      return Unsupported(name.offset,
                         absl::StrCat("variable '", name.text, "'"));
    }
    return Add(std::move(node), name.offset);
  }

  absl::StatusOr<int> GlobalCall(const Token& name,
                                 const std::vector<int>& args, int paren) {
    if (name.text == "size") {
      if (args.size() != 1) {
        return TypeError(
            paren, absl::StrCat("'size' takes 1 argument, got ", args.size()));
      }
      return Call(MethodInfo{"size", Method::kSize, 0}, args[0], {},
                  name.offset, paren);
    }
    // quantity() or semver() (KnownFunction checked). Literal arguments only:
    // they are parsed (and rejected) here, once.
    if (args.size() != 1 ||
        ast_.nodes[args[0]].kind != NodeKind::kStringLiteral) {
      return Unsupported(name.offset,
                         absl::StrCat("'", name.text,
                                      "' with anything but one string "
                                      "literal"));
    }
    Node& literal = ast_.nodes[args[0]];
    if (name.text == "quantity") {
      auto milli = ParseQuantityMilli(literal.text, "quantity");
      if (!milli.ok()) {
        return TypeError(
            paren, absl::StrCat("invalid quantity \"", literal.text, "\""));
      }
      literal.kind = NodeKind::kQuantityLiteral;
      literal.type = CelType::kQuantity;
      literal.int_value = *milli;
    } else {
      if (!ParseSemver(literal.text).has_value()) {
        return TypeError(paren,
                         absl::StrCat("invalid semver \"", literal.text, "\""));
      }
      literal.kind = NodeKind::kSemverLiteral;
      literal.type = CelType::kSemver;
    }
    return args[0];
  }

  absl::string_view src_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int nesting_ = 0;
  Ast ast_;
};

}  // namespace

absl::StatusOr<Ast> Parse(absl::string_view expression) {
  DS_ASSIGN_OR_RETURN(std::vector<Token> tokens, Lex(expression));
  return Parser(expression, std::move(tokens)).Run();
}

}  // namespace deviceshare::dra::cel_internal
