#include "deviceshare/codec/yaml_json.h"

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "deviceshare/status_macros.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/yaml.h"

namespace deviceshare {
namespace {

using nlohmann::json;

// yaml-cpp resolves `&a [*a]` into a node that contains itself, and aliases
// let a few lines expand into millions of nodes ("billion laughs"). Both
// limits are far above anything a Kubernetes object or config map needs.
// Nodes alone do not bound memory: a few hundred bytes of nested aliases to
// one long string expand into hundreds of MiB, so the text of scalars and
// keys is bounded too (the API server caps an object at 1.5 MiB).
constexpr int kMaxDepth = 256;
constexpr int64_t kMaxNodes = int64_t{1} << 20;
constexpr int64_t kMaxTextBytes = int64_t{64} << 20;

// The tags yaml-cpp reports: "?" for a plain scalar, "!" for a quoted or
// block scalar (which YAML never resolves to anything but a string).
constexpr char kPlainTag[] = "?";
constexpr char kNonPlainTag[] = "!";
constexpr char kStrTag[] = "tag:yaml.org,2002:str";
constexpr char kIntTag[] = "tag:yaml.org,2002:int";
constexpr char kFloatTag[] = "tag:yaml.org,2002:float";
constexpr char kBoolTag[] = "tag:yaml.org,2002:bool";
constexpr char kNullTag[] = "tag:yaml.org,2002:null";

absl::Status ErrorAt(const YAML::Mark& mark, absl::string_view message) {
  if (mark.is_null()) {
    return absl::InvalidArgumentError(absl::StrFormat("YAML: %s", message));
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "YAML line %d, column %d: %s", mark.line + 1, mark.column + 1, message));
}

bool IsDigits(absl::string_view s, int base) {
  if (s.empty()) return false;
  for (char c : s) {
    bool ok = base == 8    ? (c >= '0' && c <= '7')
              : base == 16 ? absl::ascii_isxdigit(static_cast<unsigned char>(c))
                           : absl::ascii_isdigit(static_cast<unsigned char>(c));
    if (!ok) return false;
  }
  return true;
}

int DigitValue(char c) {
  unsigned char u = static_cast<unsigned char>(c);
  return absl::ascii_isdigit(u) ? c - '0' : absl::ascii_tolower(u) - 'a' + 10;
}

// Integers that do not fit int64 stay numbers: unsigned when they fit
// uint64, else double, as nlohmann's own JSON parser does.
json IntegerValue(bool negative, absl::string_view digits, int base) {
  constexpr uint64_t kUint64Max = std::numeric_limits<uint64_t>::max();
  constexpr uint64_t kInt64Max = std::numeric_limits<int64_t>::max();
  uint64_t magnitude = 0;
  bool overflow = false;
  for (char c : digits) {
    uint64_t d = DigitValue(c);
    if (magnitude > (kUint64Max - d) / base) {
      overflow = true;
      break;
    }
    magnitude = magnitude * base + d;
  }
  if (!overflow && !negative) {
    if (magnitude <= kInt64Max) return json(static_cast<int64_t>(magnitude));
    return json(magnitude);
  }
  if (!overflow && magnitude <= kInt64Max + 1) {
    // -(2^63) has no positive int64 counterpart; negate in unsigned space.
    return json(static_cast<int64_t>(~magnitude + 1));
  }
  double value = 0;
  if (base == 10) {
    // Correctly rounded, unlike accumulating digit by digit.
    value = std::strtod(std::string(digits).c_str(), nullptr);
  } else {
    for (char c : digits) value = value * base + DigitValue(c);
  }
  return json(negative ? -value : value);
}

// YAML 1.2 core schema: [-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+.
std::optional<json> ResolveInt(absl::string_view s) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'o' || s[1] == 'x')) {
    int base = s[1] == 'o' ? 8 : 16;
    absl::string_view digits = s.substr(2);
    if (!IsDigits(digits, base)) return std::nullopt;
    return IntegerValue(false, digits, base);
  }
  bool negative = false;
  absl::string_view digits = s;
  if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) {
    negative = digits[0] == '-';
    digits.remove_prefix(1);
  }
  if (!IsDigits(digits, 10)) return std::nullopt;
  return IntegerValue(negative, digits, 10);
}

// YAML 1.2 core schema floats, including .inf and .nan.
std::optional<json> ResolveFloat(absl::string_view s) {
  absl::string_view body = s;
  bool negative = false;
  if (!body.empty() && (body[0] == '-' || body[0] == '+')) {
    negative = body[0] == '-';
    body.remove_prefix(1);
  }
  if (body == ".inf" || body == ".Inf" || body == ".INF") {
    double inf = std::numeric_limits<double>::infinity();
    return json(negative ? -inf : inf);
  }
  if (s == ".nan" || s == ".NaN" || s == ".NAN") {
    return json(std::numeric_limits<double>::quiet_NaN());
  }
  // [-+]? ( \. [0-9]+ | [0-9]+ ( \. [0-9]* )? ) ( [eE] [-+]? [0-9]+ )?
  size_t i = 0;
  size_t int_digits = 0;
  while (i < body.size() && absl::ascii_isdigit(body[i])) ++i, ++int_digits;
  size_t frac_digits = 0;
  if (i < body.size() && body[i] == '.') {
    ++i;
    while (i < body.size() && absl::ascii_isdigit(body[i])) ++i, ++frac_digits;
  }
  if (int_digits == 0 && frac_digits == 0) return std::nullopt;
  if (i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
    ++i;
    if (i < body.size() && (body[i] == '-' || body[i] == '+')) ++i;
    size_t exp_digits = 0;
    while (i < body.size() && absl::ascii_isdigit(body[i])) ++i, ++exp_digits;
    if (exp_digits == 0) return std::nullopt;
  }
  if (i != body.size()) return std::nullopt;
  double value = 0;
  // The pattern above is already checked; SimpleAtod only refuses values out
  // of double's range, where strtod gives the right +-inf or 0.
  if (!absl::SimpleAtod(s, &value)) {
    value = std::strtod(std::string(s).c_str(), nullptr);
  }
  return json(value);
}

std::optional<json> ResolveBool(absl::string_view s) {
  if (s == "true" || s == "True" || s == "TRUE") return json(true);
  if (s == "false" || s == "False" || s == "FALSE") return json(false);
  return std::nullopt;
}

bool IsNull(absl::string_view s) {
  return s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL";
}

absl::StatusOr<json> ConvertScalar(const YAML::Node& node) {
  const std::string& tag = node.Tag();
  const std::string& text = node.Scalar();
  if (tag == kNonPlainTag || tag == kStrTag) return json(text);
  if (tag == kPlainTag) {
    if (IsNull(text)) return json(nullptr);
    if (auto b = ResolveBool(text)) return *b;
    if (auto i = ResolveInt(text)) return *i;
    if (auto f = ResolveFloat(text)) return *f;
    return json(text);
  }
  std::optional<json> value;
  if (tag == kIntTag) {
    value = ResolveInt(text);
  } else if (tag == kFloatTag) {
    value = ResolveFloat(text);
    if (!value) value = ResolveInt(text);
    if (value) value = json(value->get<double>());
  } else if (tag == kBoolTag) {
    value = ResolveBool(text);
  } else if (tag == kNullTag) {
    if (IsNull(text)) value = json(nullptr);
  } else {
    return ErrorAt(node.Mark(), absl::StrFormat("unsupported tag \"%s\"", tag));
  }
  if (!value) {
    return ErrorAt(node.Mark(),
                   absl::StrFormat("\"%s\" is not a valid %s", text, tag));
  }
  return *value;
}

class Converter {
 public:
  absl::StatusOr<json> Convert(const YAML::Node& node, int depth) {
    if (depth > kMaxDepth) {
      return ErrorAt(node.Mark(),
                     absl::StrFormat("nesting deeper than %d levels (a "
                                     "recursive alias?)",
                                     kMaxDepth));
    }
    if (++nodes_ > kMaxNodes) {
      return ErrorAt(
          node.Mark(),
          absl::StrFormat("document expands to more than %d nodes", kMaxNodes));
    }
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return json(nullptr);
      case YAML::NodeType::Scalar:
        DS_RETURN_IF_ERROR(CountText(node, node.Scalar().size()));
        return ConvertScalar(node);
      case YAML::NodeType::Sequence: {
        json array = json::array();
        for (const YAML::Node& item : node) {
          DS_ASSIGN_OR_RETURN(json value, Convert(item, depth + 1));
          array.push_back(std::move(value));
        }
        return array;
      }
      case YAML::NodeType::Map: {
        json object = json::object();
        for (auto it = node.begin(); it != node.end(); ++it) {
          // The iterator hands out a temporary pair of handles; copy them
          // (a Node is a shared pointer) rather than refer into it.
          YAML::Node key = it->first;
          YAML::Node item = it->second;
          if (!key.IsScalar()) {
            return ErrorAt(key.Mark(),
                           "a mapping key must be a scalar to become JSON");
          }
          std::string name = key.Scalar();
          DS_RETURN_IF_ERROR(CountText(key, name.size()));
          if (object.contains(name)) {
            return ErrorAt(key.Mark(),
                           absl::StrFormat("duplicate key \"%s\"", name));
          }
          DS_ASSIGN_OR_RETURN(json value, Convert(item, depth + 1));
          object.emplace(name, std::move(value));
        }
        return object;
      }
    }
    return ErrorAt(node.Mark(), "unknown YAML node type");
  }

 private:
  absl::Status CountText(const YAML::Node& node, size_t bytes) {
    text_bytes_ += static_cast<int64_t>(bytes);
    if (text_bytes_ <= kMaxTextBytes) return absl::OkStatus();
    return ErrorAt(node.Mark(),
                   absl::StrFormat("document expands to more than %d MiB of "
                                   "text (an alias bomb?)",
                                   kMaxTextBytes >> 20));
  }

  int64_t nodes_ = 0;
  int64_t text_bytes_ = 0;
};

// The API server sends JSON; nlohmann parses it faster than yaml-cpp and
// with JSON's own number rules. Anything it rejects goes through YAML,
// which also gives the line and column of a real error.
std::optional<json> TryParseJson(absl::string_view text) {
  absl::string_view trimmed = absl::StripLeadingAsciiWhitespace(text);
  if (trimmed.empty() || (trimmed[0] != '{' && trimmed[0] != '[')) {
    return std::nullopt;
  }
  json value = json::parse(text.begin(), text.end(), /*cb=*/nullptr,
                           /*allow_exceptions=*/false);
  if (value.is_discarded()) return std::nullopt;
  return value;
}

// Counts a stream's documents and nothing else.
class DocumentCounter final : public YAML::EventHandler {
 public:
  int64_t documents() const { return documents_; }

  void OnDocumentStart(const YAML::Mark&) override { ++documents_; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

 private:
  int64_t documents_ = 0;
};

// yaml-cpp 0.7's LoadAll never returns on a stream whose top level holds a
// token no node starts with, e.g. a stray ',' (jbeder/yaml-cpp#1040, fixed
// upstream in 2024 by #1318/#1319): each next document consumes nothing
// and comes back empty, and LoadAll keeps them all until memory runs out.
// A stream of n bytes holds at most n/3 + 1 documents (each after the
// first starts with "---"), so an event-only pass that counts them past
// that has found the loop. (YAML::Load reads one document: not affected.)
absl::Status CheckDocumentsEnd(const std::string& text) {
  std::istringstream input(text);
  YAML::Parser parser(input);
  DocumentCounter counter;
  const int64_t most = static_cast<int64_t>(text.size()) / 3 + 1;
  while (parser.HandleNextDocument(counter)) {
    if (counter.documents() > most) {
      return absl::InvalidArgumentError(
          "YAML: a token no document can start with at the top level (a "
          "stray ',')");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<nlohmann::json> ParseJsonOrYaml(absl::string_view text) {
  if (std::optional<json> parsed = TryParseJson(text)) return *parsed;
  try {
    YAML::Node root = YAML::Load(std::string(text));
    return Converter().Convert(root, 0);
  } catch (const YAML::Exception& e) {
    return ErrorAt(e.mark, e.msg);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrFormat("YAML: %s", e.what()));
  }
}

absl::StatusOr<std::vector<nlohmann::json>> ParseYamlDocuments(
    absl::string_view text) {
  try {
    const std::string stream(text);
    DS_RETURN_IF_ERROR(CheckDocumentsEnd(stream));
    std::vector<YAML::Node> documents = YAML::LoadAll(stream);
    std::vector<json> result;
    result.reserve(documents.size());
    for (const YAML::Node& document : documents) {
      if (document.IsNull() || !document.IsDefined()) continue;
      DS_ASSIGN_OR_RETURN(json value, Converter().Convert(document, 0));
      result.push_back(std::move(value));
    }
    return result;
  } catch (const YAML::Exception& e) {
    return ErrorAt(e.mark, e.msg);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrFormat("YAML: %s", e.what()));
  }
}

}  // namespace deviceshare
