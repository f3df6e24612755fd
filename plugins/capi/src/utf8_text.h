// File: utf8_text.h
//
// The C API's texts must be UTF-8, as Kubernetes writes objects (JSON
// requires it; YAML allows UTF-16 too, which no Kubernetes tool writes).
// Checking at the boundary keeps malformed bytes away from the parsers and
// from error messages that echo them, and gives the caller the byte to
// look at.
#ifndef DEVICESHARE_CAPI_UTF8_TEXT_H_
#define DEVICESHARE_CAPI_UTF8_TEXT_H_

#include <cstddef>

#include "absl/strings/string_view.h"

namespace deviceshare::capi {

// The offset of the first byte that does not start a well-formed UTF-8
// sequence (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF);
// absl::string_view::npos when every byte does.
size_t FirstNonUtf8(absl::string_view text);

}  // namespace deviceshare::capi

#endif  // DEVICESHARE_CAPI_UTF8_TEXT_H_
