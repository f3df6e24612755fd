#include "token_source.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "file_text.h"

namespace deviceshare::kube::internal {

TokenSource::TokenSource(std::string token, std::string token_file,
                         absl::Duration refresh_interval, const Clock* clock)
    : token_file_(std::move(token_file)),
      refresh_interval_(refresh_interval),
      clock_(clock),
      token_(std::move(token)) {}

absl::Status TokenSource::Load() {
  absl::MutexLock lock(&mu_);
  return ReadLocked();
}

std::string TokenSource::Token() {
  absl::MutexLock lock(&mu_);
  if (!token_file_.empty() && clock_->Now() - last_read_ >= refresh_interval_) {
    // Errors are dropped on purpose: see the header.
    ReadLocked().IgnoreError();
  }
  return token_;
}

absl::Status TokenSource::ReadLocked() {
  if (token_file_.empty()) return absl::OkStatus();
  // Counted as a read even when it fails, so a missing file is not retried
  // on every request.
  last_read_ = clock_->Now();
  absl::StatusOr<std::string> text = ReadFileText(token_file_);
  if (!text.ok()) {
    return absl::Status(text.status().code(),
                        absl::StrCat("token file ", text.status().message()));
  }
  absl::string_view token = absl::StripAsciiWhitespace(*text);
  if (token.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("token file ", token_file_, ": empty"));
  }
  token_ = std::string(token);
  return absl::OkStatus();
}

}  // namespace deviceshare::kube::internal
