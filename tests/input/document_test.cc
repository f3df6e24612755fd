// Tests of the pieces every reader shares: reading a file or a stream
// whole, locating errors in a file, the lines where YAML documents start,
// and the objects of a Kubernetes document (Lists included).
#include <sstream>
#include <string>

#include "deviceshare/input/input_file.h"
#include "deviceshare/input/kube_objects.h"
#include "deviceshare/input/yaml_document_lines.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/input_text.h"
#include "testing/status_matchers.h"

namespace deviceshare::input {
namespace {

using ::deviceshare::testing::StatusIs;
using ::deviceshare::testing::WriteTempFile;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::testing::StartsWith;

TEST(InputFileTest, ReadsFilesAndStreamsWhole) {
  const std::string text = "a: 1\n---\nb: 2\n";
  auto read = ReadInputFile("--pods", WriteTempFile("pods.yaml", text));
  ASSERT_OK(read);
  EXPECT_EQ(*read, text);
  std::istringstream stream(text);
  auto streamed = ReadInputStream(stream, "stdin");
  ASSERT_OK(streamed);
  EXPECT_EQ(*streamed, text);
}

// A stream that never ends (--cluster /dev/zero) is read up to the limit
// and refused, not read until memory runs out.
TEST(InputFileTest, AnEndlessInputIsRefusedAtTheLimit) {
  EXPECT_THAT(ReadInputFile("--cluster", "/dev/zero", 1 << 20),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       StartsWith("--cluster /dev/zero: holds more than "
                                  "1048576 bytes")));
  std::istringstream stream(std::string(100, 'x'));
  EXPECT_THAT(ReadInputStream(stream, "stdin", 99),
              StatusIs(absl::StatusCode::kResourceExhausted));
  std::istringstream exact(std::string(100, 'x'));
  EXPECT_OK(ReadInputStream(exact, "stdin", 100));
}

TEST(InputFileTest, ErrorsNameTheFlagFileDocumentAndLine) {
  EXPECT_THAT(ReadInputFile("--cluster", "/nonexistent/c.yaml"),
              StatusIs(absl::StatusCode::kNotFound,
                       StartsWith("--cluster /nonexistent/c.yaml: cannot "
                                  "open: ")));
  const absl::Status bad = absl::InvalidArgumentError("bad");
  EXPECT_THAT(InFile("f", bad), StatusIs(bad.code(), "f: bad"));
  EXPECT_THAT(InDocument("f", 2, bad),
              StatusIs(bad.code(), "f: document 2: bad"));
  EXPECT_THAT(AtLine("f", 7, bad), StatusIs(bad.code(), "f: line 7: bad"));
  EXPECT_OK(InFile("f", absl::OkStatus()));
}

TEST(YamlDocumentLinesTest, SkipEmptyDocumentsLikeTheParser) {
  EXPECT_THAT(YamlDocumentLines("# c\na: 1\n---\n---\n\n# x\nb: 2\n"),
              ElementsAre(2, 7));
  EXPECT_THAT(YamlDocumentLines("a: [\n"), IsEmpty());
}

TEST(YamlDocumentLinesTest, ErrorsNameDocumentAndLine) {
  YamlDocumentErrors errors("p.yaml", "a: 1\n---\n\nb: 2\n");
  const absl::Status bad = absl::InvalidArgumentError("bad");
  EXPECT_THAT(errors.At(2, bad),
              StatusIs(bad.code(), "p.yaml: document 2 (line 4): bad"));
  EXPECT_THAT(errors.At(3, bad),
              StatusIs(bad.code(), "p.yaml: document 3: bad"));
}

TEST(KubeObjectsTest, KindOfReadsAStringKindOnly) {
  EXPECT_EQ(KindOf(nlohmann::json{{"kind", "Node"}}), "Node");
  EXPECT_EQ(KindOf(nlohmann::json{{"kind", 3}}), "");
  EXPECT_EQ(KindOf(nlohmann::json::object()), "");
}

TEST(KubeObjectsTest, ListsGiveTheirItemsOtherDocumentsThemselves) {
  const nlohmann::json pod = {{"kind", "Pod"}};
  auto single = DocumentObjects(pod, "Pod");
  ASSERT_OK(single);
  ASSERT_THAT(*single, SizeIs(1));
  EXPECT_EQ((*single)[0].object, &pod);
  EXPECT_EQ((*single)[0].where, "");
  for (const char* kind : {"List", "PodList"}) {
    const nlohmann::json list = {{"kind", kind}, {"items", {pod, pod}}};
    auto items = DocumentObjects(list, "Pod");
    ASSERT_OK(items);
    ASSERT_THAT(*items, SizeIs(2));
    EXPECT_EQ((*items)[1].object, &list["items"][1]);
    EXPECT_EQ((*items)[1].where, "items[1]: ");
  }
  auto node_list = DocumentObjects({{"kind", "NodeList"}}, "Pod");
  ASSERT_OK(node_list);
  EXPECT_THAT(*node_list, SizeIs(1));
  EXPECT_THAT(DocumentObjects({{"kind", "List"}, {"items", 3}}, "Pod"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "kind List: items is missing or not a list"));
}

}  // namespace
}  // namespace deviceshare::input
