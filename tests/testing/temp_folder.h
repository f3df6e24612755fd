// File: testing/temp_folder.h
//
// TempFolder: a folder of one test's own for the files, sockets and
// kubeconfigs it writes, made under $TMPDIR (else /tmp) and removed with
// everything in it when the object goes. ctest runs every test executable
// with TMPDIR set to a fresh folder and fails a test that leaves anything
// there (tests/testing/run_in_temp_folder.sh), so a test writes nowhere
// else: not to a path under /tmp spelled out, not beside its folder.
//
// Thread safety: a TempFolder is not shared between threads while it is
// made or removed; its path may be read from any thread.
#ifndef DEVICESHARE_TESTS_TESTING_TEMP_FOLDER_H_
#define DEVICESHARE_TESTS_TESTING_TEMP_FOLDER_H_

#include <string>

#include "absl/strings/string_view.h"

namespace deviceshare::testing {

// $TMPDIR when set and not empty, else "/tmp"; no trailing '/'.
std::string TempRoot();

class TempFolder {
 public:
  // Makes TempRoot()/<prefix>XXXXXX; a failure is a test failure (and
  // path() is then empty). Keep `prefix` short where unix sockets go
  // inside: a socket's path holds at most 107 bytes.
  explicit TempFolder(absl::string_view prefix = "ds-test-");
  ~TempFolder();
  TempFolder(const TempFolder&) = delete;
  TempFolder& operator=(const TempFolder&) = delete;

  const std::string& path() const { return path_; }
  // path()/name.
  std::string File(absl::string_view name) const;

 private:
  std::string path_;
};

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_TEMP_FOLDER_H_
