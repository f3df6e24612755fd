// File: c_status.h
//
// Where absl::Status meets the C API's error convention (deviceshare.h): a
// deviceshare_code (absl::StatusCode's value) returned, and on failure the
// message in a malloc'd string for the caller to deviceshare_free(). Every
// entry point runs its body through Guarded(), so no exception crosses the
// C boundary: anything thrown becomes DEVICESHARE_INTERNAL with a message.
#ifndef DEVICESHARE_CAPI_C_STATUS_H_
#define DEVICESHARE_CAPI_C_STATUS_H_

#include <exception>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "deviceshare/c/deviceshare.h"

namespace deviceshare::capi {

// `text` in malloc'd memory (NUL-terminated; an embedded NUL ends it for a
// C reader); nullptr when out of memory.
char* CopyToC(absl::string_view text) noexcept;

// The code of `status`; on failure *error (when `error` is not null) gets
// its message. On success *error is left alone.
deviceshare_code Report(const absl::Status& status, char** error) noexcept;

// DEVICESHARE_INTERNAL with "internal error: <what>".
deviceshare_code ReportInternal(const char* what, char** error) noexcept;

// InvalidArgument "<name> is NULL" when `argument` is null.
absl::Status RequireArgument(const void* argument, const char* name);

// A text argument: RequireArgument, then InvalidArgument naming the byte
// when it is not UTF-8 (utf8_text.h).
absl::Status RequireText(const char* text, const char* name);
// The same for a text that may be NULL (then: not given).
absl::Status CheckOptionalText(const char* text, const char* name);

// `status` with "<prefix>: " before its message (OK stays OK): the
// argument or object an error came from.
absl::Status Prefixed(absl::string_view prefix, const absl::Status& status);

// Sets *out to a malloc'd copy of `text`; ResourceExhausted when the copy
// cannot be made (then *out is left alone).
absl::Status SetOutput(char** out, absl::string_view text);

// Runs `body` (returning absl::Status) and reports its status; exceptions
// become DEVICESHARE_INTERNAL.
template <typename Body>
deviceshare_code Guarded(char** error, Body&& body) noexcept {
  try {
    return Report(std::forward<Body>(body)(), error);
  } catch (const std::exception& e) {
    return ReportInternal(e.what(), error);
  } catch (...) {
    return ReportInternal("unknown exception", error);
  }
}

}  // namespace deviceshare::capi

#endif  // DEVICESHARE_CAPI_C_STATUS_H_
