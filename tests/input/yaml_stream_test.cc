// Tests of the streaming reader under the pods loader (codec/
// yaml_stream.h) with each of its parsers: libyaml (input/
// libyaml_stream.h) reads as yaml-cpp does, falls back to yaml-cpp where
// it refuses a text, and the JSON path keeps YAML's rules.
#include "deviceshare/codec/yaml_stream.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/input/libyaml_stream.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::StatusIs;
using ::nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// What a stream handed out, as text: "D@L" per document start, "D[i]=..."
// per item, "D=..." per document ("D*=" with its items handed out); a
// restart forgets it all.
class Recorder final : public YamlDocumentVisitor {
 public:
  std::vector<std::string> seen;

  absl::Status OnDocumentStart(size_t document, size_t line) override {
    seen.push_back(absl::StrCat(document, "@", line));
    return absl::OkStatus();
  }
  absl::Status OnItem(size_t document, size_t index, json item) override {
    seen.push_back(absl::StrCat(document, "[", index, "]=", item.dump()));
    return absl::OkStatus();
  }
  absl::Status OnDocument(size_t document, json value,
                          bool items_split) override {
    seen.push_back(absl::StrCat(
        document, items_split ? "*=" : "=",
        value.dump(-1, ' ', false, json::error_handler_t::replace)));
    return absl::OkStatus();
  }
  void OnRestart() override {
    seen.clear();
    restarted = true;
  }
  bool restarted = false;
};

absl::StatusOr<std::vector<std::string>> Read(const std::string& text,
                                              YamlEventParser parser,
                                              bool split_items = true) {
  Recorder recorder;
  absl::Status read = StreamYamlDocuments(text, recorder, split_items, parser);
  if (!read.ok()) return read;
  return recorder.seen;
}

// libyaml is optional (libyaml-dev): without it yaml-cpp alone reads, and
// the tests that compare the two have nothing to compare.
bool HaveLibyaml() { return input::LibyamlParser() != nullptr; }
constexpr char kNoLibyaml[] = "built without libyaml: yaml-cpp alone reads";

TEST(YamlStreamTest, LibyamlReadsTheExamplesAsYamlCppDoes) {
  if (!HaveLibyaml()) GTEST_SKIP() << kNoLibyaml;
  int files = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(DEVICESHARE_EXAMPLES_DIR)) {
    if (entry.path().extension() != ".yaml") continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    for (bool split : {false, true}) {
      auto cpp = Read(text.str(), nullptr, split);
      auto libyaml = Read(text.str(), input::LibyamlParser(), split);
      ASSERT_OK(cpp);
      ASSERT_OK(libyaml);
      EXPECT_EQ(*cpp, *libyaml) << entry.path();
    }
    ++files;
  }
  EXPECT_GT(files, 10);
}

TEST(YamlStreamTest, ScalarsAnchorsAndEmptyDocumentsReadAlike) {
  if (!HaveLibyaml()) GTEST_SKIP() << kNoLibyaml;
  const std::string text =
      "---\n---\n# only a comment\n---\n"
      "a: &x {n: 1, s: '1', t: !!str 2, f: 1.5, b: true, z: ~, "
      "big: 99999999999999999999, h: 0x1F}\n"
      "b: *x\nc: [*x, \"q\"]\nd: |\n  block\nitems:\n- 1\n- *x\n- {k: v}\n"
      "---\n- &k key\n- {*k : v}\n";
  auto cpp = Read(text, nullptr);
  auto libyaml = Read(text, input::LibyamlParser());
  ASSERT_OK(cpp);
  ASSERT_OK(libyaml);
  EXPECT_EQ(*cpp, *libyaml);
  EXPECT_THAT(*cpp, ElementsAre("1@5", "1[0]=1", HasSubstr("1[1]={\"b\":true"),
                                "1[2]={\"k\":\"v\"}",
                                HasSubstr("1*={\"a\":{\"b\":true"), "2@15",
                                "2=[\"key\",{\"key\":\"v\"}]"));
}

TEST(YamlStreamTest, WhatLibyamlRefusesYamlCppReadsAgain) {
  if (!HaveLibyaml()) GTEST_SKIP() << kNoLibyaml;
  // Not UTF-8: libyaml stops at the byte, yaml-cpp keeps it.
  const std::string text = "a: 1\n---\nname: \"p\xff\"\n";
  auto read = Read(text, input::LibyamlParser());
  ASSERT_OK(read);
  EXPECT_EQ(*read, *Read(text, nullptr));
  Recorder recorder;
  ASSERT_OK(StreamYamlDocuments(text, recorder, true, input::LibyamlParser()));
  EXPECT_TRUE(recorder.restarted);
  // A real error is yaml-cpp's, with its line and column.
  EXPECT_THAT(Read("a: [1\nb: 2\n", input::LibyamlParser()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Read("a: [1\nb: 2\n", nullptr).status().message()));
}

TEST(YamlStreamTest, ALoneCrReadsAsYamlCppReadsIt) {
  if (!HaveLibyaml()) GTEST_SKIP() << kNoLibyaml;
  // libyaml ends the comment at the CR (YAML's rule) and would read b;
  // yaml-cpp reads one comment. Found by comparing the two under the
  // fuzzer.
  const std::string text = "a: 1 # note\rb: 2\n";
  auto cpp = Read(text, nullptr);
  ASSERT_OK(cpp);
  EXPECT_THAT(*cpp, ElementsAre("1@1", "1={\"a\":1}"));
  auto libyaml = Read(text, input::LibyamlParser());
  ASSERT_OK(libyaml);
  EXPECT_EQ(*libyaml, *cpp);
}

TEST(YamlStreamTest, BothParsersRefuseWhatJsonCannotHold) {
  for (YamlEventParser parser :
       {YamlEventParser{nullptr}, input::LibyamlParser()}) {
    EXPECT_THAT(Read("a: 1\na: 2\n", parser),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         "YAML line 2, column 1: duplicate key \"a\""));
    EXPECT_THAT(Read("~: 1\n", parser),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("a mapping key must be a scalar")));
    EXPECT_THAT(Read("a: &a [*a]\n", parser),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("recursive alias")));
    EXPECT_THAT(Read("a: !!int x\n", parser),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("\"x\" is not a valid")));
  }
}

TEST(YamlStreamTest, JsonKeepsYamlsRules) {
  EXPECT_THAT(
      Read("{\"items\": [{\"a\": 1, \"a\": 2}], \"kind\": \"List\"}", nullptr),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "JSON: items[0]: duplicate key \"a\""));
  auto read =
      Read("\n\n {\"items\": [1, {\"b\": [2]}], \"kind\": \"List\"}", nullptr);
  ASSERT_OK(read);
  EXPECT_THAT(*read, ElementsAre("1@3", "1[0]=1", "1[1]={\"b\":[2]}",
                                 "1*={\"items\":[],\"kind\":\"List\"}"));
  // Past JSON's number range: read as YAML, as before.
  auto big = Read("{\"a\": 1e400}", nullptr);
  ASSERT_OK(big);
  EXPECT_THAT(*big, ElementsAre("1@1", "1={\"a\":null}"));
}

}  // namespace
}  // namespace deviceshare
