// The fake API server's read faults, slow pod patches and pod snapshot
// (fake_api_server_faults.cc), which the churn soak (bench/churn_soak.cc)
// relies on.
#include <httplib.h>

#include <chrono>
#include <memory>
#include <string>

#include "deviceshare/kube/api_client.h"
#include "deviceshare/kube/object_paths.h"
#include "gtest/gtest.h"
#include "testing/fake_api_server.h"
#include "testing/status_matchers.h"

namespace deviceshare::testing {
namespace {

using ::deviceshare::kube::ApiClient;
using ::deviceshare::kube::HttpStatusOf;
using ::deviceshare::kube::NodesPath;
using ::deviceshare::kube::PodPath;
using ::deviceshare::kube::PodsPath;
using nlohmann::json;

json Pod(const std::string& name) {
  return {{"metadata", {{"name", name}, {"namespace", "default"}}},
          {"spec", json::object()}};
}

class FakeApiFaultsTest : public ::testing::Test {
 protected:
  FakeApiServer server_;
  std::unique_ptr<ApiClient> client_ =
      *ApiClient::Create(server_.kube_config());
};

TEST_F(FakeApiFaultsTest, ListsAndWatchesFailThenServeAgain) {
  server_.UpsertPod(Pod("p"));
  server_.FailNextListsAndWatches(2, 503);
  EXPECT_EQ(HttpStatusOf(client_->Get(PodsPath()).status()), 503);
  httplib::Client raw("127.0.0.1", server_.port());
  auto watch = raw.Get("/api/v1/nodes?watch=true&timeoutSeconds=1");
  ASSERT_TRUE(watch);
  EXPECT_EQ(watch->status, 503);
  EXPECT_NE(watch->body.find("injected failure"), std::string::npos);
  absl::StatusOr<json> listed = client_->Get(PodsPath());
  ASSERT_OK(listed);
  EXPECT_EQ((*listed)["items"].size(), 1u);
  EXPECT_OK(client_->Get(NodesPath()));
  EXPECT_EQ(server_.request_counts().lists, 3);
  EXPECT_EQ(server_.request_counts().watches, 1);
}

TEST_F(FakeApiFaultsTest, PodPatchesWaitForTheDelayThenApply) {
  server_.UpsertPod(Pod("p"));
  server_.SetPodPatchDelay(absl::Milliseconds(300));
  const auto start = std::chrono::steady_clock::now();
  EXPECT_OK(client_->MergePatch(PodPath("default", "p"),
                                {{"metadata", {{"labels", {{"a", "b"}}}}}}));
  EXPECT_GE(std::chrono::steady_clock::now() - start,
            std::chrono::milliseconds(300));
  EXPECT_EQ(server_.GetPod("default", "p")->at("metadata").at("labels")["a"],
            "b");
  server_.SetPodPatchDelay(absl::ZeroDuration());
  EXPECT_OK(client_->MergePatch(PodPath("default", "p"),
                                {{"metadata", {{"labels", {{"a", "c"}}}}}}));
}

TEST_F(FakeApiFaultsTest, PodSnapshotHoldsEveryPodAsStored) {
  EXPECT_TRUE(server_.PodSnapshot().empty());
  server_.UpsertPod(Pod("b"));
  const json a = server_.UpsertPod(Pod("a"));
  server_.UpsertPod(Pod("c"));
  server_.DeletePod("default", "c");
  const auto pods = server_.PodSnapshot();
  ASSERT_EQ(pods.size(), 2u);
  EXPECT_EQ(*pods[0], a);
  EXPECT_EQ((*pods[1])["metadata"]["name"], "b");
}

}  // namespace
}  // namespace deviceshare::testing
