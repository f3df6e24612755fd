#include "deviceshare/input/input_file.h"

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace deviceshare::input {
namespace {

// Reads the rest of `in` into a string that starts with `expected` bytes
// of room: a big file grown by doubling would be copied (and held twice)
// as it grows.
absl::StatusOr<std::string> ReadAll(std::istream& in, absl::string_view name,
                                    size_t max_bytes, size_t expected) {
  std::string text;
  if (expected <= max_bytes) text.reserve(expected);
  char chunk[1 << 16];
  while (in) {
    in.read(chunk, sizeof chunk);
    const size_t got = static_cast<size_t>(in.gcount());
    if (text.size() + got > max_bytes) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "%s: holds more than %d bytes, the most an input may hold", name,
          max_bytes));
    }
    text.append(chunk, got);
  }
  if (in.bad()) {
    return absl::DataLossError(absl::StrFormat("%s: read error", name));
  }
  return text;
}

absl::Status Prefixed(const absl::Status& status, absl::string_view prefix) {
  if (status.ok()) return status;
  return absl::Status(status.code(), absl::StrCat(prefix, status.message()));
}

}  // namespace

absl::StatusOr<std::string> ReadInputFile(absl::string_view flag,
                                          absl::string_view path,
                                          size_t max_bytes) {
  std::ifstream in{std::string(path), std::ios::binary};
  if (!in) {
    return absl::NotFoundError(absl::StrFormat("%s %s: cannot open: %s", flag,
                                               path, std::strerror(errno)));
  }
  std::error_code size_error;
  const uintmax_t size =
      std::filesystem::file_size(std::string(path), size_error);
  return ReadAll(in, absl::StrCat(flag, " ", path), max_bytes,
                 size_error ? 0 : static_cast<size_t>(size));
}

absl::StatusOr<std::string> ReadInputStream(std::istream& in,
                                            absl::string_view name,
                                            size_t max_bytes) {
  return ReadAll(in, name, max_bytes, /*expected=*/0);
}

absl::Status InFile(absl::string_view file, const absl::Status& status) {
  return Prefixed(status, absl::StrCat(file, ": "));
}

absl::Status InDocument(absl::string_view file, size_t document,
                        const absl::Status& status) {
  return Prefixed(status, absl::StrCat(file, ": document ", document, ": "));
}

absl::Status AtLine(absl::string_view file, size_t line,
                    const absl::Status& status) {
  return Prefixed(status, absl::StrCat(file, ": line ", line, ": "));
}

}  // namespace deviceshare::input
