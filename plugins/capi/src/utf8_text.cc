#include "utf8_text.h"

#include <cstdint>

namespace deviceshare::capi {
namespace {

struct Lead {
  size_t continuation = 0;  // bytes after the lead byte
  uint32_t bits = 0;        // the lead byte's share of the code point
  uint32_t minimum = 0;     // below it the form is overlong
};

// false for a byte that cannot lead a sequence (a continuation byte, or
// 0xF8 and above).
bool LeadOf(unsigned char byte, Lead& lead) {
  if ((byte & 0xE0) == 0xC0) {
    lead = {1, byte & 0x1Fu, 0x80};
  } else if ((byte & 0xF0) == 0xE0) {
    lead = {2, byte & 0x0Fu, 0x800};
  } else if ((byte & 0xF8) == 0xF0) {
    lead = {3, byte & 0x07u, 0x10000};
  } else {
    return false;
  }
  return true;
}

}  // namespace

size_t FirstNonUtf8(absl::string_view text) {
  size_t i = 0;
  while (i < text.size()) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x80) {
      ++i;
      continue;
    }
    Lead lead;
    if (!LeadOf(byte, lead) || text.size() - i <= lead.continuation) return i;
    uint32_t code_point = lead.bits;
    for (size_t k = 1; k <= lead.continuation; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if ((next & 0xC0) != 0x80) return i;
      code_point = (code_point << 6) | (next & 0x3Fu);
    }
    if (code_point < lead.minimum || code_point > 0x10FFFF ||
        (code_point >= 0xD800 && code_point <= 0xDFFF)) {
      return i;
    }
    i += lead.continuation + 1;
  }
  return absl::string_view::npos;
}

}  // namespace deviceshare::capi
