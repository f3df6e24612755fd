// File: file_text.h (internal)
//
// Whole small files (tokens, certificates, kubeconfigs) read into memory.
#ifndef DEVICESHARE_KUBE_SRC_FILE_TEXT_H_
#define DEVICESHARE_KUBE_SRC_FILE_TEXT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace deviceshare::kube::internal {

// The file's bytes. NotFound when it does not exist, PermissionDenied or
// Unavailable for other failures; the message names the path. Files larger
// than 16 MiB are rejected: nothing this library reads is that big.
absl::StatusOr<std::string> ReadFileText(const std::string& path);

// `path` if absolute or `base_dir` is empty, else `base_dir/path`.
std::string ResolvePath(absl::string_view base_dir, absl::string_view path);

// The directory part of `path` ("" when it has none).
std::string DirName(absl::string_view path);

}  // namespace deviceshare::kube::internal

#endif  // DEVICESHARE_KUBE_SRC_FILE_TEXT_H_
