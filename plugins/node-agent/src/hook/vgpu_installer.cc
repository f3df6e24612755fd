#include "deviceshare/agent/vgpu_installer.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace deviceshare::agent {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat(path, ": cannot read: ", std::strerror(errno)));
  }
  std::ostringstream content;
  content << in.rdbuf();
  return content.str();
}

// Writes `content` to `path` through a temporary file and rename(2), so
// readers see the old file or the new one, never a torn one.
absl::Status ReplaceFile(const std::string& path, const std::string& content,
                         mode_t mode) {
  absl::StatusOr<std::string> current = ReadFile(path);
  if (current.ok() && *current == content) return absl::OkStatus();
  const std::string temporary = absl::StrCat(path, ".tmp-", getpid());
  int fd =
      open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);
  if (fd < 0) {
    return absl::PermissionDeniedError(
        absl::StrCat(temporary, ": cannot create: ", std::strerror(errno)));
  }
  size_t written = 0;
  while (written < content.size()) {
    ssize_t n = write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      std::string reason = std::strerror(errno);
      close(fd);
      unlink(temporary.c_str());
      return absl::InternalError(
          absl::StrCat(temporary, ": write failed: ", reason));
    }
    written += static_cast<size_t>(n);
  }
  fchmod(fd, mode);
  if (fsync(fd) != 0 || close(fd) != 0) {
    unlink(temporary.c_str());
    return absl::InternalError(
        absl::StrCat(temporary, ": cannot flush: ", std::strerror(errno)));
  }
  if (rename(temporary.c_str(), path.c_str()) != 0) {
    std::string reason = std::strerror(errno);
    unlink(temporary.c_str());
    return absl::InternalError(
        absl::StrCat(path, ": cannot replace: ", reason));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status InstallVgpuLibrary(const std::string& library,
                                const std::string& hook_path) {
  absl::StatusOr<std::string> image = ReadFile(library);
  if (!image.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--vgpu-library: ", image.status().message()));
  }
  if (image->size() < 4 || image->compare(0, 4,
                                          "\x7f"
                                          "ELF") != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--vgpu-library: \"", library, "\" is not an ELF shared library"));
  }
  std::error_code error;
  std::filesystem::create_directories(hook_path, error);
  if (error) {
    return absl::PermissionDeniedError(absl::StrCat(
        "--hook-path: cannot create \"", hook_path, "\": ", error.message()));
  }
  absl::Status status =
      ReplaceFile(absl::StrCat(hook_path, "/libvgpu.so"), *image, 0755);
  if (!status.ok()) return status;
  return ReplaceFile(absl::StrCat(hook_path, "/ld.so.preload"),
                     absl::StrCat(kContainerVgpuLibrary, "\n"), 0644);
}

}  // namespace deviceshare::agent
