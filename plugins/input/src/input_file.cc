#include "deviceshare/input/input_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace deviceshare::input {
namespace {

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
  return ReadInputStream(in, absl::StrCat(flag, " ", path), max_bytes);
}

absl::StatusOr<std::string> ReadInputStream(std::istream& in,
                                            absl::string_view name,
                                            size_t max_bytes) {
  std::string text;
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
