// File: deviceplugin/socket_files.h
//
// Which socket file is there now. Kubelet signals its restart only by
// deleting every socket in the device plugin directory and creating
// kubelet.sock again, so the plugin compares file identities: device and
// inode, plus the change time, because a freshly freed inode number is
// often handed to the very next file created.
#ifndef DEVICESHARE_AGENT_DEVICEPLUGIN_SOCKET_FILES_H_
#define DEVICESHARE_AGENT_DEVICEPLUGIN_SOCKET_FILES_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"

namespace deviceshare::agent::deviceplugin {

struct FileIdentity {
  uint64_t device = 0;
  uint64_t inode = 0;
  int64_t change_seconds = 0;
  int64_t change_nanos = 0;

  bool operator==(const FileIdentity& other) const = default;
};

// nullopt when nothing is at `path`.
std::optional<FileIdentity> IdentifyFile(const std::string& path);

// Removes `path` when it exists; an error names the path and errno text.
absl::Status RemoveIfPresent(const std::string& path);

// The most bytes a unix socket path may have (sun_path less its NUL).
inline constexpr size_t kMaxUnixSocketPath = 107;

}  // namespace deviceshare::agent::deviceplugin

#endif  // DEVICESHARE_AGENT_DEVICEPLUGIN_SOCKET_FILES_H_
