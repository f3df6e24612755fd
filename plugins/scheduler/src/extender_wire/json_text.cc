#include "json_text.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "deviceshare/json_text.h"

namespace deviceshare::extender::internal {
namespace {

void AppendEscapedAscii(uint8_t c, std::string* out) {
  switch (c) {
    case '"':
      out->append("\\\"");
      return;
    case '\\':
      out->append("\\\\");
      return;
    case '\n':
      out->append("\\n");
      return;
    case '\r':
      out->append("\\r");
      return;
    case '\t':
      out->append("\\t");
      return;
    case '\b':
      out->append("\\b");
      return;
    case '\f':
      out->append("\\f");
      return;
    default: {
      static constexpr char kHex[] = "0123456789abcdef";
      const char escaped[] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
      out->append(escaped, sizeof(escaped));
    }
  }
}

// Bytes that are copied as they are: printable ASCII but `"` and `\`.
constexpr std::array<bool, 256> kPlain = [] {
  std::array<bool, 256> plain{};
  for (int c = 0x20; c < 0x80; ++c) plain[c] = c != '"' && c != '\\';
  return plain;
}();

// Whether the 8 bytes at `p` are all plain, tested at once (SWAR): no
// byte below 0x20, none with the high bit, none equal to `"` or `\`.
bool EightPlain(const char* p) {
  constexpr uint64_t kOnes = 0x0101010101010101;
  constexpr uint64_t kHigh = 0x8080808080808080;
  uint64_t w;
  std::memcpy(&w, p, sizeof(w));
  const auto has_zero = [&](uint64_t v) { return (v - kOnes) & ~v & kHigh; };
  const uint64_t below_space = (w - kOnes * 0x20) & ~w & kHigh;
  return ((below_space | has_zero(w ^ (kOnes * '"')) |
           has_zero(w ^ (kOnes * '\\')) | (w & kHigh))) == 0;
}

}  // namespace

size_t Utf8SequenceLength(absl::string_view text, size_t i) {
  const auto byte = [&](size_t k) -> uint8_t {
    return i + k < text.size() ? static_cast<uint8_t>(text[i + k]) : 0;
  };
  const auto continuation = [](uint8_t b, uint8_t lo = 0x80,
                               uint8_t hi = 0xBF) {
    return b >= lo && b <= hi;
  };
  const uint8_t lead = byte(0);
  if (lead >= 0xC2 && lead <= 0xDF) return continuation(byte(1)) ? 2 : 0;
  if (lead >= 0xE0 && lead <= 0xEF) {
    const uint8_t lo = lead == 0xE0 ? 0xA0 : 0x80;
    const uint8_t hi = lead == 0xED ? 0x9F : 0xBF;
    return continuation(byte(1), lo, hi) && continuation(byte(2)) ? 3 : 0;
  }
  if (lead >= 0xF0 && lead <= 0xF4) {
    const uint8_t lo = lead == 0xF0 ? 0x90 : 0x80;
    const uint8_t hi = lead == 0xF4 ? 0x8F : 0xBF;
    return continuation(byte(1), lo, hi) && continuation(byte(2)) &&
                   continuation(byte(3))
               ? 4
               : 0;
  }
  return 0;
}

size_t SkipPlain(absl::string_view text, size_t i) {
  while (i + 8 <= text.size() && EightPlain(text.data() + i)) i += 8;
  while (i < text.size() && kPlain[static_cast<uint8_t>(text[i])]) ++i;
  return i;
}

void AppendJsonString(absl::string_view text, std::string* out) {
  out->push_back('"');
  size_t run_start = 0;  // bytes [run_start, i) are copied as they are
  size_t i = 0;
  while ((i = SkipPlain(text, i)) < text.size()) {
    const auto c = static_cast<uint8_t>(text[i]);
    if (c >= 0x80) {
      if (size_t length = Utf8SequenceLength(text, i); length > 0) {
        i += length;
        continue;
      }
    }
    out->append(text.data() + run_start, i - run_start);
    if (c < 0x80) {
      AppendEscapedAscii(c, out);
    } else {
      out->append("\\ufffd");
    }
    run_start = ++i;
  }
  out->append(text.data() + run_start, text.size() - run_start);
  out->push_back('"');
}

std::string DescribeValue(const nlohmann::json& value) {
  constexpr size_t kMaxLength = 64;
  std::string text = JsonText(value);
  if (text.size() > kMaxLength) {
    size_t cut = kMaxLength;
    // Never split a UTF-8 sequence: the message may be sent on as JSON.
    while (cut > 0 && (static_cast<uint8_t>(text[cut]) & 0xC0) == 0x80) --cut;
    text.resize(cut);
    text.append("...");
  }
  return text;
}

}  // namespace deviceshare::extender::internal
