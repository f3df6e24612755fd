// ServedJournal: replays what was served, survives a torn last line, and
// refuses a corrupt one elsewhere by line number.
#include "deviceshare/agent/served_journal.h"

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/input_text.h"

namespace deviceshare::agent {
namespace {

std::string TempPath(const std::string& name) {
  // Inside the test process's own folder, removed when it exits.
  const auto dir = std::filesystem::path(testing::ProcessTempFolder()) /
                   absl::StrCat("journal-", name);
  std::filesystem::remove_all(dir);
  return (dir / "served.journal").string();
}

TEST(ServedJournalTest, ReplaysServedUnservedAndForgotten) {
  const std::string path = TempPath("replay");
  {
    auto journal = ServedJournal::Open(path);
    ASSERT_TRUE(journal.ok()) << journal.status();
    ASSERT_TRUE((*journal)->Serve({"p1", 0, "a", {"GPU-0::0"}}).ok());
    ASSERT_TRUE((*journal)->Serve({"p1", 1, "b", {"GPU-0::1"}}).ok());
    ASSERT_TRUE((*journal)->Serve({"p2", 0, "c", {"GPU-1::0"}}).ok());
    ASSERT_TRUE((*journal)->Unserve("p1", 1).ok());
    ASSERT_TRUE((*journal)->Forget("p2").ok());
  }
  auto journal = ServedJournal::Open(path);
  ASSERT_TRUE(journal.ok()) << journal.status();
  ASSERT_EQ((*journal)->served().size(), 1u);
  EXPECT_EQ((*journal)->served().begin()->second,
            (ServedContainer{"p1", 0, "a", {"GPU-0::0"}}));
}

TEST(ServedJournalTest, DropsATornLastLine) {
  const std::string path = TempPath("torn");
  {
    auto journal = ServedJournal::Open(path);
    ASSERT_TRUE(journal.ok());
    ASSERT_TRUE((*journal)->Serve({"p1", 0, "a", {"GPU-0::0"}}).ok());
  }
  std::ofstream(path, std::ios::app) << "{\"served\":{\"pod\":\"p2\"";
  auto journal = ServedJournal::Open(path);
  ASSERT_TRUE(journal.ok()) << journal.status();
  EXPECT_EQ((*journal)->served().size(), 1u);
}

TEST(ServedJournalTest, NamesACorruptLine) {
  const std::string path = TempPath("corrupt");
  std::filesystem::create_directories(
      std::filesystem::path(path).parent_path());
  std::ofstream(path) << "garbage\n{\"forgotten\":\"p\"}\n";
  auto journal = ServedJournal::Open(path);
  EXPECT_EQ(journal.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_THAT(journal.status().message(), ::testing::HasSubstr("line 1"));
}

}  // namespace
}  // namespace deviceshare::agent
