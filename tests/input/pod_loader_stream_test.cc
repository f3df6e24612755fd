// Tests of the pods reader on big inputs (issue 45, "Big inputs"): a List
// is read an item at a time, so one far past the per-document node limit
// reads while an alias bomb inside one item is still refused; errors name
// the item; a limit on pending pods leaves the rest unread but still reads
// what follows them.
#include <string>

#include "absl/strings/str_cat.h"
#include "deviceshare/config/device_config.h"
#include "deviceshare/input/pod_loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/input_text.h"
#include "testing/status_matchers.h"

namespace deviceshare::input {
namespace {

using ::deviceshare::testing::Docs;
using ::deviceshare::testing::PodYaml;
using ::deviceshare::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using ::testing::StartsWith;

// A small pod as `kubectl get pods -o json` prints it, with `limits`
// inside its container's resources (a JSON object body).
std::string JsonPod(int i, const std::string& limits = "") {
  return absl::StrCat(
      R"({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p)", i,
      R"(", "namespace": "default"}, "spec": {"containers": [{"name": "main",)",
      R"( "image": "x", "resources": {"limits": {)",
      limits.empty() ? R"("nvidia.com/gpu": 1)" : limits, "}}}]}}");
}

// A JSON List of `count` pods, items before kind as kubectl prints them.
std::string JsonList(int count) {
  std::string text = "{\"apiVersion\": \"v1\", \"items\": [\n";
  for (int i = 0; i < count; ++i) {
    absl::StrAppend(&text, i > 0 ? ",\n" : "", JsonPod(i));
  }
  absl::StrAppend(&text, "\n], \"kind\": \"List\", \"metadata\": {}}\n");
  return text;
}

// The same pods as a YAML List, one flow mapping per item.
std::string YamlList(int count) {
  std::string text = "apiVersion: v1\nitems:\n";
  for (int i = 0; i < count; ++i) {
    absl::StrAppend(&text, "- ", JsonPod(i), "\n");
  }
  absl::StrAppend(&text, "kind: List\n");
  return text;
}

// 80,000 pods of 16 nodes each: 1.28 million nodes, past the 2^20 a
// document may expand to, each item far below it.
constexpr int kBigList = 80000;

TEST(PodLoaderStreamTest, AJsonListPastTheNodeLimitReadsInFileOrder) {
  auto pods = LoadPodsYaml(JsonList(kBigList), "p.json", DeviceConfig());
  ASSERT_OK(pods);
  ASSERT_THAT(*pods, SizeIs(kBigList));
  EXPECT_EQ((*pods)[0].Key(), "default/p0");
  EXPECT_EQ((*pods)[1].Key(), "default/p1");
  EXPECT_EQ((*pods)[kBigList - 1].Key(),
            absl::StrCat("default/p", kBigList - 1));
}

TEST(PodLoaderStreamTest, AYamlListPastTheNodeLimitReadsInFileOrder) {
  auto pods = LoadPodsYaml(YamlList(kBigList), "p.yaml", DeviceConfig());
  ASSERT_OK(pods);
  ASSERT_THAT(*pods, SizeIs(kBigList));
  EXPECT_EQ((*pods)[0].Key(), "default/p0");
  EXPECT_EQ((*pods)[kBigList - 1].Key(),
            absl::StrCat("default/p", kBigList - 1));
}

TEST(PodLoaderStreamTest, ABadItemIsNamedByFileDocumentIndexAndField) {
  const std::string items = absl::StrCat(
      JsonPod(0), ",\n", JsonPod(1), ",\n",
      JsonPod(2, R"("nvidia.com/gpu": 1, "nvidia.com/gpumem": "-3")"));
  for (const std::string& text :
       {absl::StrCat("{\"items\": [", items, "], \"kind\": \"List\"}"),
        absl::StrCat("# kubectl get pods -o yaml\nitems: [", items,
                     "]\nkind: PodList\n")}) {
    EXPECT_THAT(
        LoadPodsYaml(text, "p.json", DeviceConfig()),
        StatusIs(
            absl::StatusCode::kInvalidArgument,
            AllOf(StartsWith("p.json: document 1 (line "),
                  HasSubstr("): items[2]: pod default/p2 container main: "),
                  HasSubstr("nvidia.com/gpumem"))))
        << text;
  }
  // The second document's items, on the line it starts.
  EXPECT_THAT(
      LoadPodsYaml(Docs({PodYaml("a", "nvidia.com/gpu: 1"),
                         "kind: List\nitems:\n- 7\n"}),
                   "p.yaml", DeviceConfig()),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "p.yaml: document 2 (line 13): items[0]: a number, want an "
               "object"));
}

TEST(PodLoaderStreamTest, ItemsOutsideAListAreRefused) {
  EXPECT_THAT(LoadPodsYaml("{\"kind\": \"Pod\", \"items\": []}", "p.json",
                           DeviceConfig()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("p.json: document 1 (line 1): kind: Pod has "
                                 "a list of items")));
  EXPECT_THAT(LoadPodsYaml("kind: List\nitems: 3\n", "p.yaml", DeviceConfig()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "p.yaml: document 1 (line 1): kind List: items is "
                       "missing or not a list"));
}

TEST(PodLoaderStreamTest, AnAliasBombInOneItemIsStillRefused) {
  // Each field of the one item is ten of the one before: by field f (line
  // 8) the item expands past 2^20 nodes on its own.
  std::string text =
      "kind: List\nitems:\n- a: &b0 [x, x, x, x, x, x, x, x, x, x]\n";
  for (int level = 1; level <= 5; ++level) {
    absl::StrAppend(&text, "  ", std::string(1, static_cast<char>('a' + level)),
                    ": &b", level, " [");
    for (int i = 0; i < 10; ++i) {
      absl::StrAppend(&text, i > 0 ? ", " : "", "*b", level - 1);
    }
    absl::StrAppend(&text, "]\n");
  }
  EXPECT_THAT(LoadPodsYaml(text, "p.yaml", DeviceConfig()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(StartsWith("p.yaml: YAML line 8"),
                             HasSubstr("more than 1048576 nodes"))));
}

TEST(PodLoaderStreamTest, APendingLimitLeavesLaterPendingPodsUnreadOnly) {
  const std::string text = Docs(
      {PodYaml("a", "nvidia.com/gpu: 1"), PodYaml("b", "nvidia.com/gpu: 1"),
       // Past the limit: never read, so its error is not seen.
       PodYaml("c", "nvidia.com/gpu: 1, nvidia.com/gpumem: \"-3\""),
       // Running and quota objects after the limit still count.
       PodYaml("old", "nvidia.com/gpu: 1",
               "hami.io/vgpu-devices-allocated: 'GPU-0,NVIDIA,1,1:;', "
               "hami.io/vgpu-node: n7"),
       "apiVersion: v1\nkind: ResourceQuota\nmetadata: {name: q, namespace: "
       "default}\nspec:\n  hard: {limits.nvidia.com/gpumem: 1000}\n"});
  EXPECT_THAT(LoadPodObjectsYaml(text, "p.yaml", DeviceConfig()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       StartsWith("p.yaml: document 3 (line 25): pod "
                                  "default/c")));
  auto loaded = LoadPodObjectsYaml(text, "p.yaml", DeviceConfig(),
                                   /*resolve_priorities=*/false,
                                   /*pending_limit=*/2);
  ASSERT_OK(loaded);
  ASSERT_THAT(loaded->pods, SizeIs(2));
  EXPECT_EQ(loaded->pods[1].Key(), "default/b");
  EXPECT_EQ(loaded->pending_past_limit, 1);
  EXPECT_TRUE(loaded->pending_limit_reached);
  ASSERT_THAT(loaded->running, SizeIs(1));
  EXPECT_EQ(loaded->running[0].request.Key(), "default/old");
  EXPECT_THAT(loaded->quotas, SizeIs(1));
}

}  // namespace
}  // namespace deviceshare::input
