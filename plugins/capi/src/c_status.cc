#include "c_status.h"

#include <cstdlib>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "utf8_text.h"

namespace deviceshare::capi {

char* CopyToC(absl::string_view text) noexcept {
  char* copy = static_cast<char*>(std::malloc(text.size() + 1));
  if (copy == nullptr) return nullptr;
  if (!text.empty()) std::memcpy(copy, text.data(), text.size());
  copy[text.size()] = '\0';
  return copy;
}

deviceshare_code Report(const absl::Status& status, char** error) noexcept {
  if (status.ok()) return DEVICESHARE_OK;
  if (error != nullptr) *error = CopyToC(status.message());
  return static_cast<deviceshare_code>(status.code());
}

deviceshare_code ReportInternal(const char* what, char** error) noexcept {
  if (error != nullptr) {
    // Built by hand: a std::string could throw here, where nothing may.
    static constexpr char kPrefix[] = "internal error: ";
    const size_t prefix = sizeof(kPrefix) - 1;
    const size_t length = what == nullptr ? 0 : std::strlen(what);
    char* message = static_cast<char*>(std::malloc(prefix + length + 1));
    if (message != nullptr) {
      std::memcpy(message, kPrefix, prefix);
      if (length > 0) std::memcpy(message + prefix, what, length);
      message[prefix + length] = '\0';
    }
    *error = message;
  }
  return DEVICESHARE_INTERNAL;
}

absl::Status RequireArgument(const void* argument, const char* name) {
  if (argument != nullptr) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(name, " is NULL"));
}

absl::Status RequireText(const char* text, const char* name) {
  if (absl::Status given = RequireArgument(text, name); !given.ok()) {
    return given;
  }
  return CheckOptionalText(text, name);
}

absl::Status CheckOptionalText(const char* text, const char* name) {
  if (text == nullptr) return absl::OkStatus();
  const size_t at = FirstNonUtf8(text);
  if (at == absl::string_view::npos) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("%s: byte %d (0x%02x) is not UTF-8", name, at,
                      static_cast<unsigned char>(text[at])));
}

absl::Status Prefixed(absl::string_view prefix, const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrCat(prefix, ": ", status.message()));
}

absl::Status SetOutput(char** out, absl::string_view text) {
  char* copy = CopyToC(text);
  if (copy == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("out of memory copying ", text.size(), " bytes"));
  }
  *out = copy;
  return absl::OkStatus();
}

}  // namespace deviceshare::capi
