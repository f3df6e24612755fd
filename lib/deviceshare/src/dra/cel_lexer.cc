#include "dra/cel_lexer.h"

#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "dra/cel_ast.h"

namespace deviceshare::dra::cel_internal {
namespace {

bool IsIdentStart(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsHexDigit(char c) {
  return IsDigit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}
int HexValue(char c) {
  if (IsDigit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c - 'A' + 10;
}

class Lexer {
 public:
  explicit Lexer(absl::string_view source) : src_(source) {}

  absl::StatusOr<std::vector<Token>> Run() {
    std::vector<Token> tokens;
    while (true) {
      SkipSpaceAndComments();
      Token token;
      token.offset = static_cast<int>(pos_);
      if (pos_ >= src_.size()) {
        tokens.push_back(std::move(token));
        return tokens;
      }
      char c = src_[pos_];
      absl::Status status;
      if (IsIdentStart(c)) {
        status = Ident(token);
      } else if (IsDigit(c) || (c == '.' && pos_ + 1 < src_.size() &&
                                IsDigit(src_[pos_ + 1]))) {
        status = Number(token);
      } else if (c == '"' || c == '\'') {
        status = String(token);
      } else {
        status = Punct(token);
      }
      if (!status.ok()) return status;
      tokens.push_back(std::move(token));
    }
  }

 private:
  absl::Status Error(size_t offset, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("syntax error at ",
                     Position(src_, static_cast<int>(offset)), ": ", what));
  }
  absl::Status Unsupported(size_t offset, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat("unsupported: ", what, " at ",
                     Position(src_, static_cast<int>(offset))));
  }

  void SkipSpaceAndComments() {
    while (pos_ < src_.size()) {
      char c = src_[pos_];
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f') {
        ++pos_;
      } else if (c == '/' && pos_ + 1 < src_.size() && src_[pos_ + 1] == '/') {
        while (pos_ < src_.size() && src_[pos_] != '\n') ++pos_;
      } else {
        return;
      }
    }
  }

  absl::Status Ident(Token& token) {
    size_t start = pos_;
    // r"..." and b"..." are raw and bytes strings in CEL.
    if (pos_ + 1 < src_.size() &&
        (src_[pos_ + 1] == '"' || src_[pos_ + 1] == '\'')) {
      char p = src_[pos_];
      if (p == 'r' || p == 'R') return Unsupported(start, "raw string literal");
      if (p == 'b' || p == 'B') return Unsupported(start, "bytes literal");
    }
    while (pos_ < src_.size() &&
           (IsIdentStart(src_[pos_]) || IsDigit(src_[pos_]))) {
      ++pos_;
    }
    token.kind = TokenKind::kIdent;
    token.text = std::string(src_.substr(start, pos_ - start));
    return absl::OkStatus();
  }

  absl::Status Number(Token& token) {
    size_t start = pos_;
    bool hex = src_[pos_] == '0' && pos_ + 1 < src_.size() &&
               (src_[pos_ + 1] == 'x' || src_[pos_ + 1] == 'X');
    uint64_t value = 0;
    bool overflow = false;
    const uint64_t kMax = std::numeric_limits<int64_t>::max();
    auto accumulate = [&](int base, int digit) {
      if (value > (kMax - digit) / base) overflow = true;
      if (!overflow) value = value * base + digit;
    };
    if (hex) {
      pos_ += 2;
      if (pos_ >= src_.size() || !IsHexDigit(src_[pos_])) {
        return Error(start, "malformed hex literal");
      }
      while (pos_ < src_.size() && IsHexDigit(src_[pos_])) {
        accumulate(16, HexValue(src_[pos_++]));
      }
    } else {
      while (pos_ < src_.size() && IsDigit(src_[pos_])) {
        accumulate(10, src_[pos_++] - '0');
      }
      if (pos_ < src_.size() &&
          (src_[pos_] == '.' || src_[pos_] == 'e' || src_[pos_] == 'E')) {
        bool fraction = src_[pos_] != '.' ||
                        (pos_ + 1 < src_.size() && IsDigit(src_[pos_ + 1]));
        if (fraction) return Unsupported(start, "floating-point literal");
      }
    }
    if (pos_ < src_.size() && (src_[pos_] == 'u' || src_[pos_] == 'U')) {
      return Unsupported(start, "unsigned integer literal");
    }
    if (pos_ < src_.size() &&
        (IsIdentStart(src_[pos_]) || IsDigit(src_[pos_]))) {
      return Error(pos_, "malformed number");
    }
    if (overflow) return Error(start, "integer literal out of range");
    token.kind = TokenKind::kInt;
    token.int_value = static_cast<int64_t>(value);
    token.text = std::string(src_.substr(start, pos_ - start));
    return absl::OkStatus();
  }

  absl::Status String(Token& token) {
    size_t start = pos_;
    char quote = src_[pos_];
    if (src_.substr(pos_, 3) == std::string(3, quote)) {
      return Unsupported(start, "triple-quoted string literal");
    }
    ++pos_;
    std::string out;
    while (true) {
      if (pos_ >= src_.size() || src_[pos_] == '\n' || src_[pos_] == '\r') {
        return Error(start, "unterminated string literal");
      }
      char c = src_[pos_];
      if (c == quote) {
        ++pos_;
        break;
      }
      if (c != '\\') {
        out.push_back(c);
        ++pos_;
        continue;
      }
      if (pos_ + 1 >= src_.size()) {
        return Error(start, "unterminated string literal");
      }
      char e = src_[pos_ + 1];
      switch (e) {
        case '"':
        case '\'':
        case '\\':
          out.push_back(e);
          break;
        case 'n':
          out.push_back('\n');
          break;
        case 't':
          out.push_back('\t');
          break;
        case 'r':
          out.push_back('\r');
          break;
        default:
          return Unsupported(pos_, absl::StrCat("escape sequence '\\",
                                                std::string(1, e), "'"));
      }
      pos_ += 2;
    }
    token.kind = TokenKind::kString;
    token.text = std::move(out);
    return absl::OkStatus();
  }

  absl::Status Punct(Token& token) {
    static constexpr absl::string_view kTwo[] = {
        "&&", "||", "==", "!=", "<=", ">="};
    for (absl::string_view two : kTwo) {
      if (src_.substr(pos_, 2) == two) {
        token.kind = TokenKind::kPunct;
        token.text = std::string(two);
        pos_ += 2;
        return absl::OkStatus();
      }
    }
    char c = src_[pos_];
    static constexpr absl::string_view kOne = ".[](),!<>-+*/%?:{}";
    if (kOne.find(c) == absl::string_view::npos) {
      if (static_cast<unsigned char>(c) >= 0x20 &&
          static_cast<unsigned char>(c) < 0x7f) {
        return Error(pos_, absl::StrCat("unexpected character '",
                                        std::string(1, c), "'"));
      }
      return Error(pos_, absl::StrCat("unexpected byte 0x",
                                      absl::Hex(static_cast<unsigned char>(c),
                                                absl::kZeroPad2)));
    }
    token.kind = TokenKind::kPunct;
    token.text = std::string(1, c);
    ++pos_;
    return absl::OkStatus();
  }

  absl::string_view src_;
  size_t pos_ = 0;
};

}  // namespace

absl::StatusOr<std::vector<Token>> Lex(absl::string_view source) {
  return Lexer(source).Run();
}

}  // namespace deviceshare::dra::cel_internal
