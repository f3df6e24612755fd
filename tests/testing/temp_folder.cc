#include "testing/temp_folder.h"

#include <stdlib.h>

#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace deviceshare::testing {

std::string TempRoot() {
  const char* root = getenv("TMPDIR");
  std::string path = root != nullptr && root[0] != '\0' ? root : "/tmp";
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

TempFolder::TempFolder(absl::string_view prefix) {
  std::string pattern = absl::StrCat(TempRoot(), "/", prefix, "XXXXXX");
  if (mkdtemp(pattern.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp " << pattern << ": "
                  << std::error_code(errno, std::generic_category()).message();
    return;
  }
  path_ = std::move(pattern);
}

TempFolder::~TempFolder() {
  if (path_.empty()) return;
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string TempFolder::File(absl::string_view name) const {
  return absl::StrCat(path_, "/", name);
}

}  // namespace deviceshare::testing
