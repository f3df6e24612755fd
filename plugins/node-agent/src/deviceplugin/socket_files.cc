#include "deviceplugin/socket_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace deviceshare::agent::deviceplugin {

std::optional<FileIdentity> IdentifyFile(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return std::nullopt;
  return FileIdentity{static_cast<uint64_t>(st.st_dev),
                      static_cast<uint64_t>(st.st_ino),
                      static_cast<int64_t>(st.st_ctim.tv_sec),
                      static_cast<int64_t>(st.st_ctim.tv_nsec)};
}

absl::Status RemoveIfPresent(const std::string& path) {
  if (::unlink(path.c_str()) == 0 || errno == ENOENT) return absl::OkStatus();
  return absl::InternalError(
      absl::StrCat("removing ", path, ": ", std::strerror(errno)));
}

}  // namespace deviceshare::agent::deviceplugin
