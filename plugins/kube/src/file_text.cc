#include "file_text.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace deviceshare::kube::internal {
namespace {

constexpr std::streamoff kMaxFileBytes = std::streamoff{16} << 20;

}  // namespace

absl::StatusOr<std::string> ReadFileText(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    const int error = errno;
    std::string message = absl::StrCat(path, ": ", std::strerror(error));
    if (error == ENOENT || error == ENOTDIR) {
      return absl::NotFoundError(message);
    }
    if (error == EACCES) return absl::PermissionDeniedError(message);
    return absl::UnavailableError(message);
  }
  in.seekg(0, std::ios::end);
  const std::streamoff size = in.tellg();
  if (size > kMaxFileBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": larger than 16 MiB (", size, " bytes)"));
  }
  in.seekg(0, std::ios::beg);
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) {
    return absl::UnavailableError(absl::StrCat(path, ": read failed"));
  }
  return text.str();
}

std::string ResolvePath(absl::string_view base_dir, absl::string_view path) {
  if (path.empty() || path.front() == '/' || base_dir.empty()) {
    return std::string(path);
  }
  return absl::StrCat(base_dir, "/", path);
}

std::string DirName(absl::string_view path) {
  const size_t slash = path.rfind('/');
  if (slash == absl::string_view::npos) return "";
  if (slash == 0) return "/";
  return std::string(path.substr(0, slash));
}

}  // namespace deviceshare::kube::internal
