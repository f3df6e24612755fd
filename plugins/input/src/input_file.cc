#include "deviceshare/input/input_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

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
                                          absl::string_view path) {
  std::ifstream in{std::string(path), std::ios::binary};
  if (!in) {
    return absl::NotFoundError(absl::StrFormat("%s %s: cannot open: %s", flag,
                                               path, std::strerror(errno)));
  }
  return ReadInputStream(in, absl::StrCat(flag, " ", path));
}

absl::StatusOr<std::string> ReadInputStream(std::istream& in,
                                            absl::string_view name) {
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    return absl::DataLossError(absl::StrFormat("%s: read error", name));
  }
  return buffer.str();
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
