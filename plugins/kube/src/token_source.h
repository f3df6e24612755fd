// File: token_source.h (internal)
//
// The bearer token of every request. A token file is re-read at most once
// per refresh interval: in-cluster service-account tokens are rotated by the
// kubelet, and a client that read the file once would start failing with
// 401 after the old token expires.
//
// Thread safety: Token() may be called from any thread.
#ifndef DEVICESHARE_KUBE_SRC_TOKEN_SOURCE_H_
#define DEVICESHARE_KUBE_SRC_TOKEN_SOURCE_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "deviceshare/clock.h"

namespace deviceshare::kube::internal {

class TokenSource {
 public:
  // `token_file` empty: always `token`. `clock` must outlive the source.
  TokenSource(std::string token, std::string token_file,
              absl::Duration refresh_interval, const Clock* clock);

  // Reads the file now; an error when it is set but unreadable or empty.
  absl::Status Load();

  // The current token ("" when there is none). A failed re-read keeps the
  // previous token: a file being replaced is briefly missing.
  std::string Token();

 private:
  absl::Status ReadLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const std::string token_file_;
  const absl::Duration refresh_interval_;
  const Clock* const clock_;
  absl::Mutex mu_;
  std::string token_ ABSL_GUARDED_BY(mu_);
  absl::Time last_read_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace deviceshare::kube::internal

#endif  // DEVICESHARE_KUBE_SRC_TOKEN_SOURCE_H_
