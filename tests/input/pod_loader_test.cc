// Tests of the pod reader: file order, uids, and the errors for invalid
// input, which must name the file, the document (and its line) and the
// field.
#include "deviceshare/input/pod_loader.h"

#include <string>

#include "deviceshare/config/device_config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/input_text.h"
#include "testing/status_matchers.h"

namespace deviceshare::input {
namespace {

using ::deviceshare::testing::Docs;
using ::deviceshare::testing::PodYaml;
using ::deviceshare::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using ::testing::StartsWith;

TEST(PodLoaderTest, PodsKeepFileOrderAndGetUids) {
  auto pods = LoadPodsYaml(
      Docs({PodYaml("b", "nvidia.com/gpu: 1"),
            "kind: List\nitems:\n- metadata: {name: a, uid: u-1}\n  spec: "
            "{containers: [{name: c}]}\n"}),
      "p.yaml", DeviceConfig());
  ASSERT_OK(pods);
  ASSERT_THAT(*pods, SizeIs(2));
  EXPECT_EQ((*pods)[0].Key(), "default/b");
  EXPECT_EQ((*pods)[0].uid, "default/b");
  EXPECT_EQ((*pods)[1].Key(), "default/a");
  EXPECT_EQ((*pods)[1].uid, "u-1");
}

TEST(PodLoaderTest, ErrorsNameFileDocumentAndField) {
  EXPECT_THAT(
      LoadPodsYaml(Docs({PodYaml("a", "nvidia.com/gpu: 1"),
                         PodYaml("b",
                                 "nvidia.com/gpu: 1, "
                                 "nvidia.com/gpumem: \"-3\"")}),
                   "p.yaml", DeviceConfig()),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(StartsWith("p.yaml: document 2 (line 13): pod default/b "
                                "container main: "),
                     HasSubstr("nvidia.com/gpumem"))));
  EXPECT_THAT(LoadPodsYaml(Docs({PodYaml("a", "nvidia.com/gpu: 1"),
                                 PodYaml("a", "nvidia.com/gpu: 2")}),
                           "p.yaml", DeviceConfig()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "p.yaml: document 2 (line 13): pod default/a is already "
                       "defined in document 1"));
  EXPECT_THAT(
      LoadPodsYaml("kind: Deployment\nmetadata: {name: d}\n", "p.yaml",
                   DeviceConfig()),
      StatusIs(absl::StatusCode::kInvalidArgument,
               "p.yaml: document 1 (line 1): kind: Deployment, want Pod or "
               "ResourceQuota"));
  EXPECT_THAT(
      LoadPodsYaml("kind: Pod\nmetadata: {name: a\n", "p.yaml", DeviceConfig()),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(StartsWith("p.yaml: "), HasSubstr("line"))));
}

// A pod with an allocation record is running: listed apart with its node
// (spec.nodeName, else the record's node annotation) and annotations.
TEST(PodLoaderTest, PodsWithARecordAreRunningNotPending) {
  auto loaded = LoadPodObjectsYaml(
      Docs({PodYaml("new", "nvidia.com/gpu: 1"),
            PodYaml("old", "nvidia.com/gpu: 1",
                    "hami.io/vgpu-devices-allocated: 'GPU-0,NVIDIA,1,1:;', "
                    "hami.io/vgpu-node: n7")}),
      "p.yaml", DeviceConfig());
  ASSERT_OK(loaded);
  ASSERT_THAT(loaded->pods, SizeIs(1));
  EXPECT_EQ(loaded->pods[0].Key(), "default/new");
  ASSERT_THAT(loaded->running, SizeIs(1));
  EXPECT_EQ(loaded->running[0].request.Key(), "default/old");
  EXPECT_EQ(loaded->running[0].node, "n7");
  EXPECT_EQ(loaded->running[0].annotations.at("hami.io/vgpu-devices-allocated"),
            "GPU-0,NVIDIA,1,1:;");
}

}  // namespace
}  // namespace deviceshare::input
