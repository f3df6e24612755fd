// ScanPlainExtenderArgs: the fast reader of extender_args_fields.h.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "extender_args_fields.h"
#include "go_object.h"
#include "json_text.h"

namespace deviceshare::extender::internal {
namespace {

using Json = nlohmann::json;

// Reads the top level of the body by hand. Every method returns false (or
// nullopt) at the first thing it does not expect; the caller then gives up.
class PlainScanner {
 public:
  explicit PlainScanner(absl::string_view text) : text_(text) {}

  bool AtEnd() {
    SkipSpace();
    return pos_ == text_.size();
  }

  bool Consume(char c) {
    SkipSpace();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  bool ConsumeNull() {
    SkipSpace();
    if (text_.substr(pos_, 4) != "null") return false;
    pos_ += 4;
    return true;
  }

  // A string with no escapes whose bytes JSON allows unescaped: no control
  // characters, valid UTF-8 (as nlohmann insists).
  std::optional<absl::string_view> PlainString() {
    if (!Consume('"')) return std::nullopt;
    const size_t start = pos_;
    while ((pos_ = SkipPlain(text_, pos_)) < text_.size()) {
      const auto c = static_cast<uint8_t>(text_[pos_]);
      if (c == '"') {
        return text_.substr(start, pos_++ - start);
      }
      if (c < 0x80) return std::nullopt;  // a backslash or control character
      if (size_t length = Utf8SequenceLength(text_, pos_)) {
        pos_ += length;
      } else {
        return std::nullopt;
      }
    }
    return std::nullopt;
  }

  // The text of the value that starts here, found by its brackets and
  // strings only (nlohmann validates it afterwards); nullopt when it nests
  // deeper than `max_depth` or is cut short.
  std::optional<absl::string_view> ValueText(int max_depth) {
    SkipSpace();
    const size_t start = pos_;
    int depth = 0;
    bool in_string = false;
    for (; pos_ < text_.size(); ++pos_) {
      const char c = text_[pos_];
      if (in_string) {
        if (c == '\\') {
          ++pos_;
        } else if (c == '"') {
          in_string = false;
          if (depth == 0) return text_.substr(start, ++pos_ - start);
        }
        continue;
      }
      switch (c) {
        case '"':
          in_string = true;
          break;
        case '[':
        case '{':
          if (++depth > max_depth) return std::nullopt;
          break;
        case ']':
        case '}':
          if (depth == 0) return EndScalar(start);
          if (--depth == 0) return text_.substr(start, ++pos_ - start);
          break;
        case ',':
        case ' ':
        case '\t':
        case '\n':
        case '\r':
          if (depth == 0) return EndScalar(start);
          break;
        default:
          // A control byte outside a string is never JSON, but nlohmann
          // stops at a NUL as if the text ended there: leave such a body to
          // the general reader, which sees the whole of it.
          if (static_cast<unsigned char>(c) < 0x20) return std::nullopt;
          break;
      }
    }
    return depth == 0 && !in_string ? EndScalar(start) : std::nullopt;
  }

 private:
  void SkipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
            text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  // A number or literal ends where the enclosing syntax resumes.
  std::optional<absl::string_view> EndScalar(size_t start) {
    if (pos_ == start) return std::nullopt;
    return text_.substr(start, pos_ - start);
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

// nullopt for text nlohmann rejects; the general reader reports it.
std::optional<Json> ParseValue(absl::string_view text) {
  try {
    return Json::parse(text.begin(), text.end());
  } catch (const Json::exception&) {
    return std::nullopt;
  }
}

// The names are copied into one buffer, not a string each.
std::optional<NameList> ScanNames(PlainScanner& scanner) {
  NameList names;
  if (!scanner.Consume('[')) return std::nullopt;
  if (scanner.Consume(']')) return names;
  do {
    std::optional<absl::string_view> name = scanner.PlainString();
    if (!name.has_value() || names.size() >= kMaxNodes) return std::nullopt;
    names.push_back(*name);
  } while (scanner.Consume(','));
  if (!scanner.Consume(']')) return std::nullopt;
  return names;
}

}  // namespace

std::optional<ExtenderArgs> ScanPlainExtenderArgs(absl::string_view body) {
  // The top-level object is one level; its values get the rest.
  constexpr int kValueDepth = kMaxJsonDepth - 1;
  PlainScanner scanner(body);
  ExtenderArgs args;
  bool seen_pod = false;
  bool seen_names = false;
  bool seen_nodes = false;
  if (!scanner.Consume('{')) return std::nullopt;
  if (!scanner.Consume('}')) {
    do {
      std::optional<absl::string_view> key = scanner.PlainString();
      if (!key.has_value() || !scanner.Consume(':')) return std::nullopt;
      if (GoFoldEquals(*key, "NodeNames")) {
        if (std::exchange(seen_names, true)) return std::nullopt;
        if (scanner.ConsumeNull()) continue;
        args.node_names = ScanNames(scanner);
        if (!args.node_names.has_value()) return std::nullopt;
        continue;
      }
      const bool pod = GoFoldEquals(*key, "Pod");
      if (!pod && !GoFoldEquals(*key, "Nodes")) return std::nullopt;
      if (std::exchange(pod ? seen_pod : seen_nodes, true)) return std::nullopt;
      std::optional<absl::string_view> text = scanner.ValueText(kValueDepth);
      if (!text.has_value()) return std::nullopt;
      std::optional<Json> value = ParseValue(*text);
      if (!value.has_value()) return std::nullopt;
      if (pod) {
        args.pod = std::move(*value);
      } else if (!value->is_null()) {
        args.nodes = std::move(*value);
      }
    } while (scanner.Consume(','));
    if (!scanner.Consume('}')) return std::nullopt;
  }
  if (!scanner.AtEnd()) return std::nullopt;
  return args;
}

}  // namespace deviceshare::extender::internal
