#include "deviceshare/codec/yaml_json.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::StatusIs;
using ::nlohmann::json;
using ::testing::AllOf;
using ::testing::HasSubstr;

json Parse(const std::string& text) {
  absl::StatusOr<json> parsed = ParseJsonOrYaml(text);
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return parsed.ok() ? *parsed : json();
}

TEST(YamlJsonTest, PlainIntegersFollowTheCoreSchema) {
  json v = Parse("a: 42\nb: -7\nc: +3\nd: 0o17\ne: 0x1F\nf: 0123\n");
  EXPECT_TRUE(v["a"].is_number_integer());
  EXPECT_EQ(v["a"].get<int64_t>(), 42);
  EXPECT_EQ(v["b"].get<int64_t>(), -7);
  EXPECT_EQ(v["c"].get<int64_t>(), 3);
  EXPECT_EQ(v["d"].get<int64_t>(), 15);
  EXPECT_EQ(v["e"].get<int64_t>(), 31);
  // YAML 1.2 dropped 1.1's leading-zero octal: 0123 is decimal.
  EXPECT_EQ(v["f"].get<int64_t>(), 123);
}

TEST(YamlJsonTest, IntegersBeyondInt64StayNumbers) {
  json v = Parse(
      "max: 9223372036854775807\nmin: -9223372036854775808\n"
      "u: 18446744073709551615\nhuge: 99999999999999999999999\n");
  EXPECT_EQ(v["max"].get<int64_t>(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(v["min"].get<int64_t>(), std::numeric_limits<int64_t>::min());
  EXPECT_TRUE(v["u"].is_number_unsigned());
  EXPECT_EQ(v["u"].get<uint64_t>(), std::numeric_limits<uint64_t>::max());
  EXPECT_TRUE(v["huge"].is_number_float());
  EXPECT_DOUBLE_EQ(v["huge"].get<double>(), 1e23);
}

TEST(YamlJsonTest, PlainFloats) {
  json v = Parse(
      "a: 1.5\nb: -2e3\nc: .5\nd: 1.\ne: .inf\nf: -.Inf\ng: .nan\nh: "
      "6.02E+23\n");
  EXPECT_TRUE(v["a"].is_number_float());
  EXPECT_DOUBLE_EQ(v["a"].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(v["b"].get<double>(), -2000);
  EXPECT_DOUBLE_EQ(v["c"].get<double>(), 0.5);
  EXPECT_DOUBLE_EQ(v["d"].get<double>(), 1.0);
  EXPECT_TRUE(std::isinf(v["e"].get<double>()));
  EXPECT_GT(v["e"].get<double>(), 0);
  EXPECT_LT(v["f"].get<double>(), 0);
  EXPECT_TRUE(std::isnan(v["g"].get<double>()));
  EXPECT_DOUBLE_EQ(v["h"].get<double>(), 6.02e23);
}

TEST(YamlJsonTest, BooleansAndNulls) {
  json v = Parse(
      "t1: true\nt2: True\nt3: TRUE\nf1: false\nf2: FALSE\n"
      "n1: ~\nn2: null\nn3: NULL\nn4:\n");
  for (const char* k : {"t1", "t2", "t3"}) EXPECT_EQ(v[k], json(true)) << k;
  for (const char* k : {"f1", "f2"}) EXPECT_EQ(v[k], json(false)) << k;
  for (const char* k : {"n1", "n2", "n3", "n4"}) {
    EXPECT_TRUE(v[k].is_null()) << k;
  }
}

TEST(YamlJsonTest, Yaml11WordsAreStrings) {
  json v = Parse("a: yes\nb: no\nc: on\nd: off\ne: y\nf: 1_000\ng: 12x\n");
  EXPECT_EQ(v["a"], json("yes"));
  EXPECT_EQ(v["b"], json("no"));
  EXPECT_EQ(v["c"], json("on"));
  EXPECT_EQ(v["d"], json("off"));
  EXPECT_EQ(v["e"], json("y"));
  EXPECT_EQ(v["f"], json("1_000"));
  EXPECT_EQ(v["g"], json("12x"));
}

TEST(YamlJsonTest, QuotedAndBlockScalarsStayStrings) {
  json v = Parse(
      "a: \"42\"\nb: '1.5'\nc: \"true\"\nd: 'null'\ne: \"\"\n"
      "f: |\n  3000\ng: >\n  false\n");
  EXPECT_EQ(v["a"], json("42"));
  EXPECT_EQ(v["b"], json("1.5"));
  EXPECT_EQ(v["c"], json("true"));
  EXPECT_EQ(v["d"], json("null"));
  EXPECT_EQ(v["e"], json(""));
  EXPECT_EQ(v["f"], json("3000\n"));
  EXPECT_EQ(v["g"], json("false\n"));
}

TEST(YamlJsonTest, StandardTagsForceTheType) {
  json v = Parse("a: !!str 42\nb: !!int \"7\"\nc: !!float 3\nd: !!bool true\n");
  EXPECT_EQ(v["a"], json("42"));
  EXPECT_EQ(v["b"], json(7));
  EXPECT_TRUE(v["c"].is_number_float());
  EXPECT_DOUBLE_EQ(v["c"].get<double>(), 3.0);
  EXPECT_EQ(v["d"], json(true));
}

TEST(YamlJsonTest, BadTagsAreErrorsWithPosition) {
  EXPECT_THAT(
      ParseJsonOrYaml("a: 1\nb: !!int abc\n"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("line 2, column 4"), HasSubstr("\"abc\""))));
  EXPECT_THAT(ParseJsonOrYaml("a: !Ref thing\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("line 1"),
                             HasSubstr("unsupported tag \"!Ref\""))));
}

TEST(YamlJsonTest, NestedStructures) {
  json v = Parse(
      "spec:\n  containers:\n  - name: main\n    resources:\n"
      "      limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: \"3000\"}\n");
  const json& limits = v["spec"]["containers"][0]["resources"]["limits"];
  EXPECT_EQ(limits["nvidia.com/gpu"], json(1));
  EXPECT_EQ(limits["nvidia.com/gpumem"], json("3000"));
}

TEST(YamlJsonTest, AliasesAreExpanded) {
  json v = Parse("base: &b {x: 1}\ncopy: *b\nlist: [*b, *b]\n");
  EXPECT_EQ(v["copy"], json({{"x", 1}}));
  EXPECT_EQ(v["list"], json::array({json({{"x", 1}}), json({{"x", 1}})}));
}

TEST(YamlJsonTest, RecursiveAliasIsAnErrorNotACrash) {
  EXPECT_THAT(ParseJsonOrYaml("a: &x [1, *x]\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("nesting deeper")));
}

// A YAML text whose key a<levels> expands to 10^levels copies of `leaf`:
// each level is a list of ten aliases to the one below.
std::string NestedAliases(const std::string& leaf, int levels) {
  std::string text = "a0: &a0 " + leaf + "\n";
  for (int i = 1; i <= levels; ++i) {
    std::string below = "*a" + std::to_string(i - 1);
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) text += (j ? ", " : "") + below;
    text += "]\n";
  }
  return text;
}

TEST(YamlJsonTest, AliasBombIsRefused) {
  EXPECT_THAT(
      ParseJsonOrYaml(NestedAliases("[x, x, x, x, x, x, x, x, x, x]", 8)),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("more than")));
}

// Few nodes, many bytes: 10^5 copies of one 1 KiB string.
TEST(YamlJsonTest, AliasBombOfTextIsRefused) {
  EXPECT_THAT(
      ParseJsonOrYaml(NestedAliases("\"" + std::string(1024, 'x') + "\"", 5)),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("MiB of text")));
}

TEST(YamlJsonTest, DuplicateKeyIsAnError) {
  EXPECT_THAT(ParseJsonOrYaml("a: 1\nb: 2\na: 3\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("line 3, column 1"),
                             HasSubstr("duplicate key \"a\""))));
}

TEST(YamlJsonTest, ComplexKeyIsAnError) {
  EXPECT_THAT(ParseJsonOrYaml("? [a, b]\n: 1\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("mapping key must be a scalar")));
}

TEST(YamlJsonTest, BrokenYamlReportsLineAndColumn) {
  EXPECT_THAT(ParseJsonOrYaml("a: 1\nb: [1, 2\nc: d\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("line 3"), HasSubstr("column"))));
  EXPECT_THAT(
      ParseJsonOrYaml("a:\n  - b\n c: d\n"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line 3")));
}

TEST(YamlJsonTest, JsonIsParsedExactly) {
  json v = Parse(R"({"a": 1, "b": [true, null, "x"], "c": 1.25,
                    "d": "\u00e9", "e": 18446744073709551615})");
  EXPECT_EQ(v["a"], json(1));
  EXPECT_EQ(v["b"], json::array({true, nullptr, "x"}));
  EXPECT_DOUBLE_EQ(v["c"].get<double>(), 1.25);
  EXPECT_EQ(v["d"].get<std::string>(), "\xc3\xa9");
  EXPECT_EQ(v["e"].get<uint64_t>(), std::numeric_limits<uint64_t>::max());
}

TEST(YamlJsonTest, BrokenJsonReportsLine) {
  EXPECT_THAT(
      ParseJsonOrYaml("{\"a\": 1,\n \"b\": [1, 2}\n"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line 2")));
}

TEST(YamlJsonTest, EmptyTextIsNull) {
  EXPECT_TRUE(Parse("").is_null());
  EXPECT_TRUE(Parse("# only a comment\n").is_null());
}

TEST(YamlDocumentsTest, SplitsDocumentsAndSkipsEmptyOnes) {
  absl::StatusOr<std::vector<json>> docs = ParseYamlDocuments(
      "---\n---\nkind: Pod\n---\n# nothing\n---\n"
      "kind: Node\n...\n");
  ASSERT_OK(docs);
  ASSERT_EQ(docs->size(), 2);
  EXPECT_EQ((*docs)[0]["kind"], json("Pod"));
  EXPECT_EQ((*docs)[1]["kind"], json("Node"));
}

TEST(YamlDocumentsTest, SingleDocumentWithoutMarkers) {
  absl::StatusOr<std::vector<json>> docs = ParseYamlDocuments("a: 1\n");
  ASSERT_OK(docs);
  ASSERT_EQ(docs->size(), 1);
  EXPECT_EQ((*docs)[0], json({{"a", 1}}));
  absl::StatusOr<std::vector<json>> none = ParseYamlDocuments("");
  ASSERT_OK(none);
  EXPECT_TRUE(none->empty());
}

TEST(YamlDocumentsTest, ErrorInALaterDocumentNamesItsLine) {
  EXPECT_THAT(ParseYamlDocuments("a: 1\n---\nb: [\n"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("line")));
  EXPECT_THAT(ParseYamlDocuments("a: 1\n---\nb: 1\nb: 2\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("line 4"), HasSubstr("duplicate"))));
}

}  // namespace

// yaml-cpp 0.7's LoadAll would allocate until memory runs out on these
// (found by the C API's fuzzer).
TEST(YamlDocumentsTest, StrayCommaAtTheTopIsAnErrorNotAnEndlessLoop) {
  for (const char* text :
       {",", ", n\r", "a: 1\n---\n,", "# c\n,", "&a ,", "!!str ,"}) {
    EXPECT_THAT(
        ParseYamlDocuments(text),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("stray ','")))
        << text;
  }
  // Many empty documents are still documents.
  absl::StatusOr<std::vector<json>> docs =
      ParseYamlDocuments("---\n---\n---\n---\nkind: Pod\n");
  ASSERT_OK(docs);
  EXPECT_EQ(docs->size(), 1);
}

}  // namespace deviceshare
