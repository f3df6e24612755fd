// RecordKeySource: a rotated key file is picked up without a restart, at
// most once per interval; a broken rewrite keeps the keys last read.
#include <fstream>
#include <string>

#include "absl/strings/escaping.h"
#include "deviceshare/trust/record_keys.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/fakes.h"
#include "testing/status_matchers.h"
#include "testing/temp_folder.h"

namespace deviceshare::trust {
namespace {

using ::deviceshare::testing::FakeClock;
using ::deviceshare::testing::StatusIs;
using ::deviceshare::testing::TempFolder;
using ::testing::HasSubstr;

void Write(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::trunc);
  out << text;
}

std::string KeyLine(const std::string& id, char fill) {
  return id + ": " + absl::Base64Escape(std::string(32, fill)) + "\n";
}

TEST(RecordKeySourceTest, PicksUpARotatedFileAfterTheInterval) {
  TempFolder folder;
  const std::string path = folder.File("keys");
  Write(path, KeyLine("old", 'o'));
  FakeClock clock;
  absl::StatusOr<std::unique_ptr<RecordKeySource>> source =
      RecordKeySource::Create(path, &clock, absl::Seconds(10));
  ASSERT_OK(source.status());
  EXPECT_EQ((*source)->Keys()->signing().id, "old");
  Write(path, KeyLine("new", 'n') + KeyLine("old", 'o') + "# rotated\n");
  clock.Advance(absl::Seconds(5));
  EXPECT_EQ((*source)->Keys()->signing().id, "old");  // not due yet
  clock.Advance(absl::Seconds(5));
  EXPECT_EQ((*source)->Keys()->signing().id, "new");
  EXPECT_NE((*source)->Keys()->Find("old"), nullptr);

  Write(path, "broken\n");
  clock.Advance(absl::Seconds(10));
  EXPECT_EQ((*source)->Keys()->signing().id, "new");
  EXPECT_THAT((*source)->last_error(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("expected `<key id>: <base64 secret>`")));
}

TEST(RecordKeySourceTest, AMissingOrBadFileFailsAtStart) {
  TempFolder folder;
  FakeClock clock;
  EXPECT_THAT(
      RecordKeySource::Create(folder.File("absent"), &clock).status(),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("--record-key-file")));
  Write(folder.File("empty"), "");
  EXPECT_THAT(
      RecordKeySource::Create(folder.File("empty"), &clock).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no key")));
}

}  // namespace
}  // namespace deviceshare::trust
