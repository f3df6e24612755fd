// File: trust/record_keys.h
//
// RecordKeys: the secret keys allocation records are signed with, read from
// a key file (`--record-key-file`, mounted from a Secret):
//
//   # comments and blank lines are skipped
//   2026-11:  base64 of at least 32 random bytes     <- signs new records
//   2026-05:  base64 of the previous key             <- still verifies
//
// One key per line, `<id>: <base64 secret>`. The first key signs; every
// key verifies, so a key is rotated by putting a new one first, rolling
// the scheduler and agents, and dropping the old line once no running pod
// carries its signatures. Ids are 1..32 characters of [A-Za-z0-9_-] (they
// travel in the signature); secrets are 32..1024 bytes once decoded.
//
// RecordKeySource re-reads the file when it changes (a Secret update
// reaches a mounted file within a minute): at most once per
// `check_interval`, by modification time and size. A file that no longer
// parses keeps the keys last read and says why in last_error().
//
// Errors name the file (or `source`), the line and the field.
//
// Thread safety: RecordKeys is an immutable value. RecordKeySource's
// methods may be called from any thread.
#ifndef DEVICESHARE_TRUST_RECORD_KEYS_H_
#define DEVICESHARE_TRUST_RECORD_KEYS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "deviceshare/clock.h"

namespace deviceshare::trust {

struct RecordKey {
  std::string id;
  std::string secret;  // raw bytes
};

class RecordKeys {
 public:
  // Parses the key file's text; `source` names it in errors.
  static absl::StatusOr<RecordKeys> Parse(absl::string_view text,
                                          absl::string_view source);

  // The key that signs (the first).
  const RecordKey& signing() const { return keys_.front(); }
  // The key with `id`, or null.
  const RecordKey* Find(absl::string_view id) const;
  const std::vector<RecordKey>& keys() const { return keys_; }

 private:
  explicit RecordKeys(std::vector<RecordKey> keys) : keys_(std::move(keys)) {}
  std::vector<RecordKey> keys_;  // never empty
};

// Reads and parses the key file at `path`.
absl::StatusOr<RecordKeys> LoadRecordKeys(const std::string& path);

class RecordKeySource {
 public:
  // Loads `path` now (its errors are Create's).
  static absl::StatusOr<std::unique_ptr<RecordKeySource>> Create(
      std::string path, const Clock* clock,
      absl::Duration check_interval = absl::Seconds(10));

  // The keys, re-read first if the file changed and the interval passed.
  std::shared_ptr<const RecordKeys> Keys();
  // Why the last re-read was not taken; OK when it was (or none was due).
  absl::Status last_error() const;

 private:
  RecordKeySource(std::string path, const Clock* clock,
                  absl::Duration check_interval);

  const std::string path_;
  const Clock* const clock_;
  const absl::Duration check_interval_;
  mutable absl::Mutex mu_;
  std::shared_ptr<const RecordKeys> keys_ ABSL_GUARDED_BY(mu_);
  std::string stamp_ ABSL_GUARDED_BY(mu_);  // modification time and size
  absl::Time next_check_ ABSL_GUARDED_BY(mu_);
  absl::Status last_error_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deviceshare::trust

#endif  // DEVICESHARE_TRUST_RECORD_KEYS_H_
