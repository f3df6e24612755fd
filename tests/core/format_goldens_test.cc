#include "testing/format_goldens.h"

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deviceshare::testing {
namespace {

using ::testing::HasSubstr;

TEST(CodecGoldensTest, EachGoldenOccursVerbatimInFormatsMd) {
  const std::string path =
      absl::StrCat(DEVICESHARE_REFERENCE_DIR, "/formats.md");
  std::ifstream file(path);
  // docs/reference/ is part of the repository: a missing file fails.
  ASSERT_TRUE(file.is_open()) << "no reference file at " << path;
  std::stringstream contents;
  contents << file.rdbuf();
  const std::string text = contents.str();
  for (const char* golden : goldens::kAll) {
    EXPECT_THAT(text, HasSubstr(golden)) << "golden drifted from " << path;
  }
}

}  // namespace
}  // namespace deviceshare::testing
