#include "deviceshare/trust/record_keys.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace deviceshare::trust {
namespace {

constexpr size_t kMaxIdLength = 32;
constexpr size_t kMinSecretBytes = 32;
constexpr size_t kMaxSecretBytes = 1024;

bool ValidId(absl::string_view id) {
  if (id.empty() || id.size() > kMaxIdLength) return false;
  for (char c : id) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' &&
        c != '_') {
      return false;
    }
  }
  return true;
}

absl::Status LineError(absl::string_view source, int line,
                       absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat(source, ":", line, ": ", message));
}

// One `<id>: <base64>` line.
absl::StatusOr<RecordKey> ParseLine(absl::string_view text,
                                    absl::string_view source, int line) {
  const size_t colon = text.find(':');
  if (colon == absl::string_view::npos) {
    return LineError(source, line, "expected `<key id>: <base64 secret>`");
  }
  RecordKey key;
  key.id = std::string(absl::StripAsciiWhitespace(text.substr(0, colon)));
  if (!ValidId(key.id)) {
    return LineError(source, line,
                     absl::StrCat("key id \"", absl::CHexEscape(key.id),
                                  "\": want 1..32 of [A-Za-z0-9_-]"));
  }
  const std::string encoded(absl::StripAsciiWhitespace(text.substr(colon + 1)));
  if (!absl::Base64Unescape(encoded, &key.secret)) {
    return LineError(source, line,
                     absl::StrCat("key ", key.id, ": secret is not base64"));
  }
  if (key.secret.size() < kMinSecretBytes ||
      key.secret.size() > kMaxSecretBytes) {
    return LineError(
        source, line,
        absl::StrCat("key ", key.id, ": secret has ", key.secret.size(),
                     " bytes, want ", kMinSecretBytes, "..", kMaxSecretBytes));
  }
  return key;
}

// The file's modification time and size: what a rewrite changes.
absl::StatusOr<std::string> FileStamp(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) {
    return absl::NotFoundError(
        absl::StrCat("--record-key-file ", path, ": cannot stat"));
  }
  return absl::StrCat(info.st_mtim.tv_sec, ".", info.st_mtim.tv_nsec, "/",
                      info.st_size);
}

}  // namespace

absl::StatusOr<RecordKeys> RecordKeys::Parse(absl::string_view text,
                                             absl::string_view source) {
  std::vector<RecordKey> keys;
  int line = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line;
    absl::string_view content = absl::StripAsciiWhitespace(raw);
    if (content.empty() || absl::StartsWith(content, "#")) continue;
    absl::StatusOr<RecordKey> key = ParseLine(content, source, line);
    if (!key.ok()) return key.status();
    for (const RecordKey& seen : keys) {
      if (seen.id == key->id) {
        return LineError(source, line,
                         absl::StrCat("key id ", key->id, " appears twice"));
      }
    }
    keys.push_back(*std::move(key));
  }
  if (keys.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(source, ": no key (want `<key id>: <base64 secret>`)"));
  }
  return RecordKeys(std::move(keys));
}

const RecordKey* RecordKeys::Find(absl::string_view id) const {
  for (const RecordKey& key : keys_) {
    if (key.id == id) return &key;
  }
  return nullptr;
}

absl::StatusOr<RecordKeys> LoadRecordKeys(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("--record-key-file ", path, ": cannot read"));
  }
  std::stringstream text;
  text << in.rdbuf();
  return RecordKeys::Parse(text.str(),
                           absl::StrCat("--record-key-file ", path));
}

absl::StatusOr<std::unique_ptr<RecordKeySource>> RecordKeySource::Create(
    std::string path, const Clock* clock, absl::Duration check_interval) {
  std::unique_ptr<RecordKeySource> source(
      new RecordKeySource(std::move(path), clock, check_interval));
  absl::StatusOr<std::string> stamp = FileStamp(source->path_);
  if (!stamp.ok()) return stamp.status();
  absl::StatusOr<RecordKeys> keys = LoadRecordKeys(source->path_);
  if (!keys.ok()) return keys.status();
  absl::MutexLock lock(&source->mu_);
  source->keys_ = std::make_shared<const RecordKeys>(*std::move(keys));
  source->stamp_ = *stamp;
  source->next_check_ = clock->Now() + check_interval;
  return source;
}

RecordKeySource::RecordKeySource(std::string path, const Clock* clock,
                                 absl::Duration check_interval)
    : path_(std::move(path)), clock_(clock), check_interval_(check_interval) {}

std::shared_ptr<const RecordKeys> RecordKeySource::Keys() {
  absl::MutexLock lock(&mu_);
  const absl::Time now = clock_->Now();
  if (now < next_check_) return keys_;
  next_check_ = now + check_interval_;
  absl::StatusOr<std::string> stamp = FileStamp(path_);
  if (!stamp.ok()) {
    last_error_ = stamp.status();
    return keys_;
  }
  if (*stamp == stamp_) return keys_;
  absl::StatusOr<RecordKeys> keys = LoadRecordKeys(path_);
  if (!keys.ok()) {
    last_error_ = keys.status();
    return keys_;
  }
  keys_ = std::make_shared<const RecordKeys>(*std::move(keys));
  stamp_ = *stamp;
  last_error_ = absl::OkStatus();
  return keys_;
}

absl::Status RecordKeySource::last_error() const {
  absl::MutexLock lock(&mu_);
  return last_error_;
}

}  // namespace deviceshare::trust
