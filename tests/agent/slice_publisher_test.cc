// SlicePublisher (agent/slice_publisher.h) against the in-memory API
// server, which validates every slice as the API server does.
#include "deviceshare/agent/slice_publisher.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/dra/resource_slice.h"
#include "deviceshare/kube/api_client.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/fake_api_server.h"
#include "testing/status_matchers.h"

namespace deviceshare::agent {
namespace {

using ::deviceshare::testing::IsOk;

dra::ResourceSlice Slice(int k, int devices) {
  dra::ResourceSlice slice;
  slice.name = absl::StrCat("node-a-gpu.deviceshare.io-", k);
  slice.driver = "gpu.deviceshare.io";
  slice.node_name = "node-a";
  slice.pool = {"node-a", 1, 1};
  for (int i = 0; i < devices; ++i) {
    dra::Device device;
    device.name = absl::StrCat("gpu-", k * 10 + i);
    device.attributes["index"] = dra::DeviceAttribute::Int(i);
    slice.devices.push_back(device);
  }
  return slice;
}

std::vector<dra::ResourceSlice> Pool(std::vector<int> devices_per_slice) {
  std::vector<dra::ResourceSlice> pool;
  for (size_t k = 0; k < devices_per_slice.size(); ++k) {
    pool.push_back(Slice(static_cast<int>(k), devices_per_slice[k]));
  }
  for (auto& slice : pool) {
    slice.pool.resource_slice_count = static_cast<int64_t>(pool.size());
  }
  return pool;
}

class SlicePublisherTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto api = kube::ApiClient::Create(server_.kube_config());
    ASSERT_THAT(api.status(), IsOk());
    api_ = *std::move(api);
    publisher_ = std::make_unique<SlicePublisher>(
        api_.get(), "gpu.deviceshare.io", "node-a");
  }

  testing::FakeApiServer server_;
  std::unique_ptr<kube::ApiClient> api_;
  std::unique_ptr<SlicePublisher> publisher_;
};

TEST_F(SlicePublisherTest, WritesOnlyWhenThePoolChanges) {
  auto first = publisher_->Publish(Pool({2, 1}));
  ASSERT_THAT(first.status(), IsOk());
  EXPECT_EQ(first->generation, 1);
  EXPECT_EQ(first->written, 2);
  ASSERT_EQ(server_.ResourceSlices().size(), 2u);

  auto same = publisher_->Publish(Pool({2, 1}));
  ASSERT_THAT(same.status(), IsOk());
  EXPECT_EQ(same->written, 0);
  EXPECT_EQ(same->generation, 1);
  EXPECT_EQ(server_.request_counts().slice_updates, 0);

  // A GPU withdrawn: one slice fewer, the rest at a new generation.
  auto smaller = publisher_->Publish(Pool({2}));
  ASSERT_THAT(smaller.status(), IsOk());
  EXPECT_EQ(smaller->generation, 2);
  EXPECT_EQ(smaller->deleted, 1);
  ASSERT_EQ(server_.ResourceSlices().size(), 1u);
  EXPECT_EQ(server_.ResourceSlices()[0]["spec"]["pool"]["generation"], 2);
  EXPECT_EQ(server_.ResourceSlices()[0]["spec"]["pool"]["resourceSliceCount"],
            1);
}

TEST_F(SlicePublisherTest, ARestartedAgentContinuesAboveTheStoredGeneration) {
  ASSERT_THAT(publisher_->Publish(Pool({1})).status(), IsOk());
  ASSERT_THAT(publisher_->Publish(Pool({2})).status(), IsOk());
  SlicePublisher restarted(api_.get(), "gpu.deviceshare.io", "node-a");
  auto unchanged = restarted.Publish(Pool({2}));
  ASSERT_THAT(unchanged.status(), IsOk());
  EXPECT_EQ(unchanged->written, 0);
  EXPECT_EQ(unchanged->generation, 2);
  auto changed = restarted.Publish(Pool({3}));
  ASSERT_THAT(changed.status(), IsOk());
  EXPECT_EQ(changed->generation, 3);
}

TEST_F(SlicePublisherTest, AFailedWriteIsRetriedByTheNextPublish) {
  server_.FailNextResourceSliceWrites(1, 503);
  EXPECT_FALSE(publisher_->Publish(Pool({1})).ok());
  auto retried = publisher_->Publish(Pool({1}));
  ASSERT_THAT(retried.status(), IsOk());
  EXPECT_EQ(server_.ResourceSlices().size(), 1u);
}

TEST_F(SlicePublisherTest, OtherNodesAndDriversAreLeftAlone) {
  server_.UpsertResourceSlice(
      {{"apiVersion", "resource.k8s.io/v1"},
       {"kind", "ResourceSlice"},
       {"metadata", {{"name", "node-a-nvidia"}}},
       {"spec",
        {{"driver", "gpu.nvidia.com"},
         {"nodeName", "node-a"},
         {"pool",
          {{"name", "node-a"}, {"generation", 7}, {"resourceSliceCount", 1}}},
         {"devices", nlohmann::json::array()}}}});
  ASSERT_THAT(publisher_->Publish(Pool({1})).status(), IsOk());
  ASSERT_THAT(publisher_->Publish(Pool({})).status(), IsOk());
  EXPECT_TRUE(server_.GetResourceSlice("node-a-nvidia").has_value());
}

}  // namespace
}  // namespace deviceshare::agent
