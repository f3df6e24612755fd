#include "deviceshare/extender/extender_wire.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/status_matchers.h"

namespace deviceshare::extender {
namespace {

using ::deviceshare::testing::StatusIs;
using ::nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kPod[] =
    R"({"metadata":{"name":"p","namespace":"ns"},"spec":{"containers":[]}})";

// kube-scheduler's nodeCacheCapable body, with the keys spelled as Go
// marshals them.
TEST(DecodeExtenderArgsTest, GoNamesWithNodeNames) {
  auto args = DecodeExtenderArgs(absl::StrCat(
      R"({"Pod":)", kPod, R"(,"Nodes":null,"NodeNames":["a","b"]})"));
  ASSERT_OK(args);
  EXPECT_EQ(args->pod["metadata"]["name"], "p");
  EXPECT_EQ(args->pod["metadata"]["namespace"], "ns");
  ASSERT_TRUE(args->node_names.has_value());
  EXPECT_THAT(*args->node_names, ElementsAre("a", "b"));
  EXPECT_FALSE(args->nodes.has_value());
  EXPECT_THAT(args->NodeNamesOrFromList(), ElementsAre("a", "b"));
}

TEST(DecodeExtenderArgsTest, KeysMatchCaseInsensitively) {
  for (const char* pod_key : {"pod", "POD", "pOd"}) {
    for (const char* names_key : {"nodenames", "NODENAMES", "nodeNames"}) {
      auto args = DecodeExtenderArgs(absl::StrCat(
          R"({")", pod_key, R"(":)", kPod, R"(,")", names_key, R"(":["x"]})"));
      ASSERT_OK(args) << pod_key << " " << names_key;
      EXPECT_THAT(args->NodeNamesOrFromList(), ElementsAre("x"));
    }
  }
}

// Go's EqualFold also folds U+212A KELVIN SIGN with k and U+017F LONG S
// with s; other non-ASCII look-alikes do not match.
TEST(DecodeExtenderArgsTest, UnicodeFoldsAsGoDoes) {
  auto args = DecodeExtenderArgs(absl::StrCat(R"({"Pod":)", kPod,
                                              ","
                                              R"("NodeName\u017f":["x"]})"));
  ASSERT_OK(args);
  EXPECT_THAT(args->NodeNamesOrFromList(), ElementsAre("x"));

  auto binding = DecodeBindingArgs(
      R"({"PodName":"p","PodName\u017fpace":"ns","Node":"n"})");
  ASSERT_OK(binding);
  EXPECT_EQ(binding->pod_namespace, "ns");

  EXPECT_THAT(DecodeExtenderArgs(
                  absl::StrCat(R"({"P\u00f6d":)", kPod, R"(,"NodeNames":[]})")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "ExtenderArgs.Pod: missing or null"));
}

// Several keys folding to one field: the last in the body wins, as in Go,
// whatever the keys' sort order.
TEST(DecodeExtenderArgsTest, LastFoldedKeyWins) {
  auto args = DecodeExtenderArgs(absl::StrCat(
      R"({"Pod":)", kPod, R"(,"nodenames":["first"],"NodeNames":["second"]})"));
  ASSERT_OK(args);
  EXPECT_THAT(*args->node_names, ElementsAre("second"));

  args = DecodeExtenderArgs(absl::StrCat(
      R"({"Pod":)", kPod, R"(,"NodeNames":["first"],"nodenames":["second"]})"));
  ASSERT_OK(args);
  EXPECT_THAT(*args->node_names, ElementsAre("second"));

  // A pointer field is reset by a later null.
  EXPECT_THAT(
      DecodeExtenderArgs(absl::StrCat(
          R"({"Pod":)", kPod, R"(,"NodeNames":["a"],"nodeNames":null})")),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "ExtenderArgs: neither NodeNames nor Nodes is set"));
}

TEST(DecodeExtenderArgsTest, NodeListForm) {
  const std::string body = absl::StrCat(
      R"({"Pod":)", kPod,
      R"(,"Nodes":{"kind":"NodeList","items":[)"
      R"({"metadata":{"name":"n1","labels":{"a":"b"}}},)"
      R"({"metadata":{"name":"n2"},"status":{}}]},"NodeNames":null})");
  auto args = DecodeExtenderArgs(body);
  ASSERT_OK(args);
  EXPECT_FALSE(args->node_names.has_value());
  ASSERT_TRUE(args->nodes.has_value());
  EXPECT_EQ((*args->nodes)["kind"], "NodeList");
  EXPECT_EQ((*args->nodes)["items"][0]["metadata"]["labels"]["a"], "b");
  EXPECT_THAT(args->NodeNamesOrFromList(), ElementsAre("n1", "n2"));
}

TEST(DecodeExtenderArgsTest, NodeListWithoutItemsIsEmpty) {
  for (const char* nodes : {"{}", R"({"items":null})", R"({"items":[]})"}) {
    auto args = DecodeExtenderArgs(
        absl::StrCat(R"({"Pod":)", kPod, R"(,"Nodes":)", nodes, "}"));
    ASSERT_OK(args) << nodes;
    EXPECT_THAT(args->NodeNamesOrFromList(), IsEmpty());
  }
}

TEST(DecodeExtenderArgsTest, NodeNamesWinOverNodesWhenBothSent) {
  auto args = DecodeExtenderArgs(absl::StrCat(
      R"({"Pod":)", kPod,
      R"(,"NodeNames":["a"],"Nodes":{"items":[{"metadata":{"name":"b"}}]}})"));
  ASSERT_OK(args);
  EXPECT_TRUE(args->nodes.has_value());
  EXPECT_THAT(args->NodeNamesOrFromList(), ElementsAre("a"));
}

TEST(DecodeExtenderArgsTest, UnknownKeysAreIgnored) {
  auto args = DecodeExtenderArgs(absl::StrCat(
      R"({"Pod":)", kPod, R"(,"NodeNames":[],"Extra":{"x":[1,2]}})"));
  ASSERT_OK(args);
  EXPECT_THAT(args->NodeNamesOrFromList(), IsEmpty());
}

struct BadBody {
  std::string body;
  std::string message;
};

std::vector<BadBody> BadExtenderArgs() {
  const std::string pod = absl::StrCat(R"({"Pod":)", kPod, ",");
  const auto with_nodes = [&](const std::string& items) {
    return absl::StrCat(pod, R"("Nodes":{"items":)", items, "}}");
  };
  return {
      {"", "ExtenderArgs: body is not valid JSON: "},
      {"{", "ExtenderArgs: body is not valid JSON: "},
      {R"({"Pod":{}} trailing)", "ExtenderArgs: body is not valid JSON: "},
      {"[1,2]", "ExtenderArgs: body [1,2] is not a JSON object"},
      {"null", "ExtenderArgs: body null is not a JSON object"},
      {std::string(300, '[') + std::string(300, ']'),
       "ExtenderArgs: body nests deeper than 256 levels"},
      {R"({"NodeNames":[]})", "ExtenderArgs.Pod: missing or null"},
      {R"({"Pod":null,"NodeNames":[]})", "ExtenderArgs.Pod: missing or null"},
      {R"({"Pod":"p","NodeNames":[]})",
       R"(ExtenderArgs.Pod: "p" is not an object)"},
      {R"({"Pod":{},"NodeNames":[]})", "ExtenderArgs.Pod.metadata: missing"},
      {R"({"Pod":{"metadata":[]},"NodeNames":[]})",
       "ExtenderArgs.Pod.metadata: [] is not an object"},
      {R"({"Pod":{"metadata":{}},"NodeNames":[]})",
       "ExtenderArgs.Pod.metadata.name: missing"},
      {R"({"Pod":{"metadata":{"name":7}},"NodeNames":[]})",
       "ExtenderArgs.Pod.metadata.name: 7 is not a string"},
      {R"({"Pod":{"metadata":{"name":""}},"NodeNames":[]})",
       "ExtenderArgs.Pod.metadata.name: is empty"},
      {pod + R"("NodeNames":{"a":1}})",
       R"(ExtenderArgs.NodeNames: {"a":1} is not an array)"},
      {pod + R"("NodeNames":["a","b","c",42]})",
       "ExtenderArgs.NodeNames[3]: 42 is not a string"},
      {pod + R"("Nodes":[]})", "ExtenderArgs.Nodes: [] is not an object"},
      {with_nodes("{}"), "ExtenderArgs.Nodes.items: {} is not an array"},
      {with_nodes(R"([{"metadata":{"name":"a"}},3])"),
       "ExtenderArgs.Nodes.items[1]: 3 is not an object"},
      {with_nodes(R"([{"metadata":{"name":["a"]}}])"),
       R"(ExtenderArgs.Nodes.items[0].metadata.name: ["a"] is not a string)"},
      {with_nodes(R"([{"spec":{}}])"),
       "ExtenderArgs.Nodes.items[0].metadata: missing"},
      {pod + R"("Nodes":null,"NodeNames":null})",
       "ExtenderArgs: neither NodeNames nor Nodes is set"},
      {pod + R"("Other":1})",
       "ExtenderArgs: neither NodeNames nor Nodes is set"},
  };
}

TEST(DecodeExtenderArgsTest, BadBodiesNameTheFieldAndValue) {
  for (const BadBody& bad : BadExtenderArgs()) {
    auto args = DecodeExtenderArgs(bad.body);
    EXPECT_THAT(args, StatusIs(absl::StatusCode::kInvalidArgument,
                               ::testing::StartsWith(bad.message)))
        << bad.body;
  }
}

TEST(DecodeExtenderArgsTest, LongValuesAreCutInMessages) {
  const std::string long_name(1000, 'x');
  auto args = DecodeExtenderArgs(absl::StrCat(
      R"({"Pod":)", kPod, R"(,"NodeNames":[[")", long_name, R"("]]})"));
  ASSERT_THAT(args, StatusIs(absl::StatusCode::kInvalidArgument,
                             HasSubstr("ExtenderArgs.NodeNames[0]: [\"xxx")));
  EXPECT_LT(args.status().message().size(), 120u);
  EXPECT_THAT(std::string(args.status().message()), HasSubstr("..."));
}

TEST(DecodeExtenderArgsTest, NodeCountIsCapped) {
  const auto body_with = [](size_t count) {
    std::string body = absl::StrCat(R"({"Pod":)", kPod, R"(,"NodeNames":[)");
    for (size_t i = 0; i < count; ++i) {
      absl::StrAppend(&body, i == 0 ? "" : ",", "\"n\"");
    }
    return body + "]}";
  };
  auto at_cap = DecodeExtenderArgs(body_with(kMaxNodes));
  ASSERT_OK(at_cap);
  EXPECT_EQ(at_cap->node_names->size(), kMaxNodes);
  EXPECT_THAT(DecodeExtenderArgs(body_with(kMaxNodes + 1)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "ExtenderArgs.NodeNames: 100001 entries, more than "
                       "the 100000 allowed"));
}

TEST(DecodeExtenderArgsTest, DepthLimitIgnoresBracketsInStrings) {
  const std::string brackets(1000, '[');
  auto args = DecodeExtenderArgs(absl::StrCat(
      R"({"Pod":)", kPod, R"(,"NodeNames":["\")", brackets, R"("]})"));
  ASSERT_OK(args);
  EXPECT_EQ((*args->node_names)[0], "\"" + brackets);
}

// kube-scheduler's plain bodies take a fast scanner, anything else the
// general reader; every spelling of the same content decodes alike.
TEST(DecodeExtenderArgsTest, SpellingsOfOneBodyDecodeAlike) {
  const std::string pod = kPod;
  const std::vector<std::string> bodies = {
      absl::StrCat(R"({"Pod":)", pod, ",\"NodeNames\":[\"a\",\"\u00e9\"]}"),
      absl::StrCat(R"({"Pod":)", pod, R"(,"NodeNames":["a","\u00e9"]})"),
      absl::StrCat(" \t\r\n{ \"pod\" :\n", pod,
                   " ,\t\"nodenames\" : [ \"a\" ,\"\u00e9\" ] } \n"),
      absl::StrCat(R"({"P\u006fd":)", pod, R"(,"NodeNames":["a","\u00e9"]})"),
      absl::StrCat(R"({"NodeNames":["\u0061","\u00e9"],"Nodes":null,"Pod":)",
                   pod, "}"),
      absl::StrCat(R"({"Pod":)", pod,
                   R"(,"NodeNames":["a","\u00e9"],"Unknown":[{}]})"),
  };
  auto first = DecodeExtenderArgs(bodies[0]);
  ASSERT_OK(first);
  EXPECT_THAT(*first->node_names, ElementsAre("a", "\u00e9"));
  for (const std::string& body : bodies) {
    auto args = DecodeExtenderArgs(body);
    ASSERT_OK(args) << body;
    EXPECT_EQ(args->pod, first->pod) << body;
    EXPECT_EQ(args->node_names, first->node_names) << body;
    EXPECT_FALSE(args->nodes.has_value()) << body;
  }
}

TEST(DecodeExtenderArgsTest, DepthLimitCountsTheWholeBody) {
  const auto body_with = [](int brackets) {
    return absl::StrCat(R"({"Pod":{"metadata":{"name":"p"},"x":)",
                        std::string(brackets, '['), std::string(brackets, ']'),
                        R"(},"NodeNames":[]})");
  };
  EXPECT_OK(DecodeExtenderArgs(body_with(kMaxJsonDepth - 2)));
  EXPECT_THAT(DecodeExtenderArgs(body_with(kMaxJsonDepth - 1)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "ExtenderArgs: body nests deeper than 256 levels"));
}

TEST(DecodeExtenderArgsTest, AlmostPlainBodiesAreStillChecked) {
  const std::string pod = absl::StrCat(R"({"Pod":)", kPod, ",");
  const std::vector<BadBody> bad_bodies = {
      {pod + R"("NodeNames":["a",]})", "ExtenderArgs: body is not valid JSON"},
      {pod + R"("NodeNames":["a"],})", "ExtenderArgs: body is not valid JSON"},
      {pod + R"("NodeNames":nul})", "ExtenderArgs: body is not valid JSON"},
      {pod + "\"NodeNames\":[\"a\tb\"]}",
       "ExtenderArgs: body is not valid JSON"},
      {pod + "\"NodeNames\":[\"\xC3\x28\"]}",
       "ExtenderArgs: body is not valid JSON"},
      {R"({"Pod":tru,"NodeNames":[]})", "ExtenderArgs: body is not valid JSON"},
      {R"({"Pod":{"metadata":{"name":"p"}},"NodeNames":[]} x)",
       "ExtenderArgs: body is not valid JSON"},
      {R"({"Pod":{"metadata":{"name":"p"}}"NodeNames":[]})",
       "ExtenderArgs: body is not valid JSON"},
      {R"({"Pod":5,"NodeNames":[]})", "ExtenderArgs.Pod: 5 is not an object"},
      {pod + R"("NodeNames":[true]})",
       "ExtenderArgs.NodeNames[0]: true is not a string"},
  };
  for (const BadBody& bad : bad_bodies) {
    EXPECT_THAT(DecodeExtenderArgs(bad.body),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         ::testing::StartsWith(bad.message)))
        << bad.body;
  }
}

TEST(DecodeBindingArgsTest, GoNamesAndOtherCasings) {
  auto args = DecodeBindingArgs(
      R"({"PodName":"p","PodNamespace":"ns","PodUID":"u-1","Node":"n"})");
  ASSERT_OK(args);
  EXPECT_EQ(args->pod_name, "p");
  EXPECT_EQ(args->pod_namespace, "ns");
  EXPECT_EQ(args->pod_uid, "u-1");
  EXPECT_EQ(args->node, "n");

  args = DecodeBindingArgs(
      R"({"podname":"p","podnamespace":"ns","poduid":null,"NODE":"n"})");
  ASSERT_OK(args);
  EXPECT_EQ(args->pod_name, "p");
  EXPECT_EQ(args->pod_uid, "");
  EXPECT_EQ(args->node, "n");
}

// For a string field Go skips a null: the earlier value stays.
TEST(DecodeBindingArgsTest, LaterNullKeepsEarlierString) {
  auto args = DecodeBindingArgs(
      R"({"PodName":"p","podname":null,"PodNamespace":"ns","Node":"n"})");
  ASSERT_OK(args);
  EXPECT_EQ(args->pod_name, "p");
}

TEST(DecodeBindingArgsTest, BadBodiesNameTheFieldAndValue) {
  const std::vector<BadBody> bad_bodies = {
      {"nope", "ExtenderBindingArgs: body is not valid JSON: "},
      {R"("x")", R"(ExtenderBindingArgs: body "x" is not a JSON object)"},
      {R"({"PodNamespace":"ns","Node":"n"})",
       "ExtenderBindingArgs.PodName: missing"},
      {R"({"PodName":null,"PodNamespace":"ns","Node":"n"})",
       "ExtenderBindingArgs.PodName: missing"},
      {R"({"PodName":"","PodNamespace":"ns","Node":"n"})",
       "ExtenderBindingArgs.PodName: is empty"},
      {R"({"PodName":"p","PodNamespace":1,"Node":"n"})",
       "ExtenderBindingArgs.PodNamespace: 1 is not a string"},
      {R"({"PodName":"p","PodNamespace":"ns","PodUID":{},"Node":"n"})",
       "ExtenderBindingArgs.PodUID: {} is not a string"},
      {R"({"PodName":"p","PodNamespace":"ns"})",
       "ExtenderBindingArgs.Node: missing"},
      {R"({"PodName":"p","PodNamespace":"ns","Node":true})",
       "ExtenderBindingArgs.Node: true is not a string"},
  };
  for (const BadBody& bad : bad_bodies) {
    EXPECT_THAT(DecodeBindingArgs(bad.body),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         ::testing::StartsWith(bad.message)))
        << bad.body;
  }
}

TEST(EncodeFilterResultTest, NodeNamesForm) {
  FilterResult result;
  result.node_names = {"a", "b"};
  result.failed_nodes = {{"c", "CardInsufficientMemory"}};
  result.failed_and_unresolvable_nodes = {{"d", "no GPU"}};
  const std::string text = EncodeFilterResult(result, false);
  EXPECT_EQ(text, R"({"Nodes":null,"NodeNames":["a","b"],)"
                  R"("FailedNodes":{"c":"CardInsufficientMemory"},)"
                  R"("FailedAndUnresolvableNodes":{"d":"no GPU"},"Error":""})");
  const json parsed = json::parse(text);
  EXPECT_EQ(parsed["NodeNames"], json({"a", "b"}));
}

TEST(EncodeFilterResultTest, EmptyResultKeepsEveryField) {
  EXPECT_EQ(EncodeFilterResult(FilterResult{.error = "boom"}, false),
            R"({"Nodes":null,"NodeNames":[],"FailedNodes":{},)"
            R"("FailedAndUnresolvableNodes":{},"Error":"boom"})");
}

TEST(EncodeFilterResultTest, NodesFormWithoutObjectsListsStubs) {
  FilterResult result;
  result.node_names = {"n1", "n2"};
  const json parsed = json::parse(EncodeFilterResult(result, true));
  ASSERT_TRUE(parsed["Nodes"].is_object());
  ASSERT_EQ(parsed["Nodes"]["items"].size(), 2u);
  EXPECT_EQ(parsed["Nodes"]["items"][0]["metadata"]["name"], "n1");
  EXPECT_EQ(parsed["Nodes"]["items"][1]["metadata"]["name"], "n2");
  EXPECT_EQ(parsed["NodeNames"], json({"n1", "n2"}));
}

TEST(EncodeFilterResultTest, NodesFormEchoesPassingNodeObjects) {
  auto args = DecodeExtenderArgs(absl::StrCat(
      R"({"Pod":)", kPod,
      R"(,"Nodes":{"kind":"NodeList","metadata":{"resourceVersion":"7"},)"
      R"("items":[{"metadata":{"name":"n1"},"status":{"x":1}},)"
      R"({"metadata":{"name":"n2"}},{"metadata":{"name":"n3"},"spec":{}}]}})"));
  ASSERT_OK(args);
  FilterResult result;
  result.node_names = {"n3", "n1"};
  result.nodes = NodeListWith(*args->nodes, result.node_names);
  const json parsed = json::parse(EncodeFilterResult(result, true));
  const json& nodes = parsed["Nodes"];
  EXPECT_EQ(nodes["kind"], "NodeList");
  EXPECT_EQ(nodes["metadata"]["resourceVersion"], "7");
  ASSERT_EQ(nodes["items"].size(), 2u);  // the list's order
  EXPECT_EQ(nodes["items"][0], (*args->nodes)["items"][0]);
  EXPECT_EQ(nodes["items"][1], (*args->nodes)["items"][2]);
}

TEST(NodeListWithTest, ToleratesListsWithoutItems) {
  EXPECT_EQ(NodeListWith(json(nullptr), {"a"}),
            json({{"items", json::array()}}));
  EXPECT_EQ(NodeListWith(json({{"items", 3}}), {"a"}),
            json({{"items", json::array()}}));
  EXPECT_EQ(NodeListWith(json({{"items", {1, {{"metadata", 2}}}}}), {"a"}),
            json({{"items", json::array()}}));
}

TEST(EncodeFilterResultTest, OddNamesAreEscaped) {
  const std::vector<std::string> names = {
      "quote\"back\\slash",
      "ctl\n\r\t\b\f\x01\x1f",
      "utf8 \xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80",
      std::string("nul\0byte", 8),
      "bad \xFF utf8 \xC3",
      "overlong \xC0\xAF surrogate \xED\xA0\x80",
      "html <&> slash /",
  };
  const std::vector<std::string> expected = {
      names[0],
      names[1],
      names[2],
      names[3],
      "bad \xEF\xBF\xBD utf8 \xEF\xBF\xBD",
      "overlong \xEF\xBF\xBD\xEF\xBF\xBD surrogate "
      "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD",
      names[6],
  };
  FilterResult result;
  result.node_names = names;
  for (const std::string& name : names) result.failed_nodes[name] = name;
  result.error = names[1];
  const std::string text = EncodeFilterResult(result, false);
  EXPECT_THAT(text, HasSubstr(R"("ctl\n\r\t\b\f\u0001\u001f")"));
  const json parsed = json::parse(text);
  EXPECT_EQ(parsed["NodeNames"].get<std::vector<std::string>>(), expected);
  EXPECT_EQ(parsed["Error"], names[1]);
  for (size_t i = 0; i < names.size(); ++i) {
    EXPECT_EQ(parsed["FailedNodes"][expected[i]], expected[i]) << i;
  }
}

TEST(EncodePriorityListTest, RoundTrips) {
  EXPECT_EQ(EncodePriorityList({}), "[]");
  const std::string text =
      EncodePriorityList({{"a", 10}, {"b\"", 0}, {"c", -5}, {"d", INT64_MAX}});
  EXPECT_EQ(
      text,
      R"([{"Host":"a","Score":10},{"Host":"b\"","Score":0},)"
      R"({"Host":"c","Score":-5},{"Host":"d","Score":9223372036854775807}])");
  const json parsed = json::parse(text);
  ASSERT_EQ(parsed.size(), 4u);
  EXPECT_EQ(parsed[1]["Host"], "b\"");
  EXPECT_EQ(parsed[3]["Score"].get<int64_t>(), INT64_MAX);
}

TEST(EncodeBindingResultTest, EmitsErrorEvenWhenEmpty) {
  EXPECT_EQ(EncodeBindingResult(""), R"({"Error":""})");
  EXPECT_EQ(EncodeBindingResult("node \"n\" locked\n"),
            R"({"Error":"node \"n\" locked\n"})");
  EXPECT_EQ(json::parse(EncodeBindingResult("x\\y"))["Error"], "x\\y");
}

}  // namespace
}  // namespace deviceshare::extender

namespace deviceshare::extender {
namespace {

// Found by the fuzzer: nlohmann stops at a NUL byte as if the text ended, so
// a scanner that cut "null\0..." out of the body and parsed only that piece
// accepted a body that is not JSON.
TEST(DecodeExtenderArgsTest, ControlBytesAfterAValueAreNotJson) {
  std::string body = R"({"Pod":{"metadata":{"name":"p"}},"Nodes":null)";
  body += std::string("\0\0\0\x0f", 4);
  body += R"(,"NodeNames":["a"]})";
  EXPECT_FALSE(DecodeExtenderArgs(body).ok());
}

}  // namespace
}  // namespace deviceshare::extender
