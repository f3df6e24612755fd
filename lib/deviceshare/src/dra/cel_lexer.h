// File: src/dra/cel_lexer.h (internal)
//
// Splits a CEL selector into tokens. Literals of kinds the subset does not
// support (floats, unsigned, bytes, raw and triple-quoted strings) are
// errors here, "unsupported: ..." with their position.
#ifndef DEVICESHARE_SRC_DRA_CEL_LEXER_H_
#define DEVICESHARE_SRC_DRA_CEL_LEXER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace deviceshare::dra::cel_internal {

enum class TokenKind : uint8_t { kEnd, kIdent, kInt, kString, kPunct };

struct Token {
  TokenKind kind = TokenKind::kEnd;
  int offset = 0;    // byte offset in the source
  std::string text;  // identifier, punctuation, or the decoded string
  int64_t int_value = 0;
};

// The tokens of `source`, ending with one kEnd token.
absl::StatusOr<std::vector<Token>> Lex(absl::string_view source);

}  // namespace deviceshare::dra::cel_internal

#endif  // DEVICESHARE_SRC_DRA_CEL_LEXER_H_
