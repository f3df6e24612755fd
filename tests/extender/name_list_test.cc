// NameList: the names in order, each as given (empty ones and bytes beyond
// ASCII included), compared and copied whole.
#include "deviceshare/extender/name_list.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deviceshare::extender {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(NameListTest, KeepsEachNameInOrder) {
  NameList names;
  EXPECT_THAT(names, IsEmpty());
  names.push_back("node-a");
  names.push_back("");
  names.push_back("ip-10-0-1-23.ec2.internal");
  names.push_back("n\u00e9");
  ASSERT_EQ(names.size(), 4u);
  EXPECT_EQ(names[1], "");
  EXPECT_THAT(
      names, ElementsAre("node-a", "", "ip-10-0-1-23.ec2.internal", "n\u00e9"));
  EXPECT_THAT(
      names.ToStrings(),
      ElementsAre("node-a", "", "ip-10-0-1-23.ec2.internal", "n\u00e9"));
  EXPECT_THAT(
      names.Views(),
      ElementsAre("node-a", "", "ip-10-0-1-23.ec2.internal", "n\u00e9"));
}

TEST(NameListTest, EqualWhenTheSameNamesInTheSameOrder) {
  EXPECT_EQ(NameList({"a", "bc"}),
            NameList(std::vector<std::string>{"a", "bc"}));
  // Same bytes, other boundaries.
  EXPECT_NE(NameList({"a", "bc"}), NameList({"ab", "c"}));
  EXPECT_NE(NameList({"a", "bc"}), NameList({"bc", "a"}));
  EXPECT_NE(NameList({"a"}), NameList({"a", ""}));
}

}  // namespace
}  // namespace deviceshare::extender
