// The fake API server's own behaviour, which other suites (and the
// scheduler's end-to-end tests) rely on.
#include <httplib.h>

#include <memory>
#include <string>
#include <thread>

#include "absl/synchronization/notification.h"
#include "deviceshare/kube/api_client.h"
#include "deviceshare/kube/kube_config.h"
#include "deviceshare/kube/object_paths.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/fake_api_server.h"
#include "testing/input_text.h"
#include "testing/status_matchers.h"
#include "testing/wait_for.h"

namespace deviceshare::testing {
namespace {

using ::deviceshare::kube::ApiClient;
using ::deviceshare::kube::HttpStatusOf;
using ::deviceshare::kube::NodesPath;
using ::deviceshare::kube::PodBindingPath;
using ::deviceshare::kube::PodsPath;
using ::deviceshare::kube::WithQuery;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

json Pod(const std::string& ns, const std::string& name,
         const json& labels = json::object()) {
  return {{"metadata", {{"name", name}, {"namespace", ns}, {"labels", labels}}},
          {"spec", json::object()}};
}

json Binding(const std::string& name, const std::string& node,
             const std::string& uid = "") {
  json binding = {{"apiVersion", "v1"},
                  {"kind", "Binding"},
                  {"metadata", {{"name", name}, {"namespace", "default"}}},
                  {"target", {{"kind", "Node"}, {"name", node}}}};
  if (!uid.empty()) binding["metadata"]["uid"] = uid;
  return binding;
}

std::vector<std::string> ItemNames(const json& list) {
  std::vector<std::string> names;
  for (const json& item : list["items"]) {
    names.push_back(item["metadata"]["name"]);
  }
  return names;
}

class FakeApiServerTest : public ::testing::Test {
 protected:
  FakeApiServer server_;
  std::unique_ptr<ApiClient> client_ =
      *ApiClient::Create(server_.kube_config());
};

TEST_F(FakeApiServerTest, WrittenKubeconfigLoadsIntoAWorkingClient) {
  server_.UpsertNode({{"metadata", {{"name", "n1"}}}});
  absl::StatusOr<kube::KubeConfig> config = kube::LoadKubeconfig(
      server_.WriteKubeconfig(testing::ProcessTempFolder()));
  ASSERT_OK(config);
  EXPECT_EQ(config->server, server_.url());
  absl::StatusOr<std::unique_ptr<ApiClient>> client =
      ApiClient::Create(*config);
  ASSERT_OK(client);
  absl::StatusOr<json> nodes = (*client)->Get(NodesPath());
  ASSERT_OK(nodes);
  EXPECT_EQ((*nodes)["kind"], "NodeList");
  EXPECT_EQ((*nodes)["metadata"]["resourceVersion"],
            std::to_string(server_.resource_version()));
  EXPECT_THAT(ItemNames(*nodes), ElementsAre("n1"));
}

TEST_F(FakeApiServerTest, UpsertAssignsUidAndResourceVersionAndKeepsUid) {
  const json first = server_.UpsertPod(Pod("default", "p"));
  const json second = server_.UpsertPod(Pod("default", "p"));
  EXPECT_EQ(first["metadata"]["uid"], second["metadata"]["uid"]);
  EXPECT_NE(first["metadata"]["resourceVersion"],
            second["metadata"]["resourceVersion"]);
  EXPECT_EQ(second["metadata"]["resourceVersion"],
            std::to_string(server_.resource_version()));
}

TEST_F(FakeApiServerTest, ListsFilterByNamespaceFieldAndLabel) {
  server_.UpsertPod(Pod("a", "p1", {{"app", "x"}}));
  server_.UpsertPod(Pod("a", "p2", {{"app", "y"}}));
  server_.UpsertPod(Pod("b", "p3", {{"app", "x"}}));
  EXPECT_THAT(ItemNames(*client_->Get(PodsPath("a"))), ElementsAre("p1", "p2"));
  EXPECT_THAT(ItemNames(*client_->Get(
                  WithQuery(PodsPath(), {{"labelSelector", "app=x"}}))),
              ElementsAre("p1", "p3"));
  EXPECT_THAT(ItemNames(*client_->Get(WithQuery(
                  PodsPath(), {{"fieldSelector", "metadata.namespace!=a"}}))),
              ElementsAre("p3"));
  EXPECT_EQ(
      HttpStatusOf(
          client_->Get(WithQuery(PodsPath(), {{"labelSelector", "app in (x)"}}))
              .status()),
      400);
}

TEST_F(FakeApiServerTest, BindingFaultsThenSuccessThenConflict) {
  const json pod = server_.UpsertPod(Pod("default", "p"));
  server_.FailNextBindings(2, 503);
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(
        HttpStatusOf(
            client_->Post(PodBindingPath("default", "p"), Binding("p", "n1"))
                .status()),
        503);
  }
  EXPECT_EQ(HttpStatusOf(client_
                             ->Post(PodBindingPath("default", "p"),
                                    Binding("p", "n1", "other-uid"))
                             .status()),
            409);
  EXPECT_OK(client_->Post(PodBindingPath("default", "p"),
                          Binding("p", "n1", pod["metadata"]["uid"])));
  EXPECT_EQ(
      HttpStatusOf(
          client_->Post(PodBindingPath("default", "p"), Binding("p", "n1"))
              .status()),
      409);
  EXPECT_EQ(server_.Bindings().size(), 1u);
  EXPECT_EQ(server_.request_counts().bindings, 5);
  const json bound = *server_.GetPod("default", "p");
  EXPECT_EQ(bound["spec"]["nodeName"], "n1");
  EXPECT_EQ(bound["status"]["conditions"][0]["type"], "PodScheduled");
  EXPECT_EQ(HttpStatusOf(client_
                             ->Post(PodBindingPath("default", "absent"),
                                    Binding("absent", "n1"))
                             .status()),
            404);
}

TEST_F(FakeApiServerTest, OnlyMergePatchesAreAccepted) {
  server_.UpsertPod(Pod("default", "p"));
  httplib::Client raw("127.0.0.1", server_.port());
  httplib::Result result = raw.Patch("/api/v1/namespaces/default/pods/p", "[]",
                                     "application/json-patch+json");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 415);
  result = raw.Get("/api/v1/configmaps");
  ASSERT_TRUE(result);
  EXPECT_EQ(result->status, 404);
  EXPECT_THAT(result->body, HasSubstr("\"kind\":\"Status\""));
}

TEST_F(FakeApiServerTest, WatchFromZeroStartsWithEveryObjectAdded) {
  server_.UpsertPod(Pod("default", "a"));
  server_.UpsertPod(Pod("default", "b"));
  std::vector<std::string> seen;
  EXPECT_OK(client_->Watch(
      WithQuery(PodsPath(), {{"watch", "true"}}), [&](const json& event) {
        seen.push_back(event["type"].get<std::string>() + " " +
                       event["object"]["metadata"]["name"].get<std::string>());
        return seen.size() < 2;
      }));
  EXPECT_THAT(seen, ElementsAre("ADDED a", "ADDED b"));
}

TEST_F(FakeApiServerTest, TooOldResourceVersionGetsAnErrorEvent) {
  server_.UpsertPod(Pod("default", "a"));
  server_.UpsertPod(Pod("default", "b"));
  server_.CompactHistory();
  json error;
  EXPECT_OK(client_->Watch(
      WithQuery(PodsPath(), {{"watch", "true"}, {"resourceVersion", "1"}}),
      [&](const json& event) {
        error = event;
        return true;
      }));
  EXPECT_EQ(error["type"], "ERROR");
  EXPECT_EQ(error["object"]["code"], 410);
}

TEST_F(FakeApiServerTest, WatchEndsAfterTimeoutSeconds) {
  EXPECT_OK(client_->Watch(
      WithQuery(PodsPath(), {{"watch", "true"}, {"timeoutSeconds", "1"}}),
      [](const json&) { return true; }));
}

TEST(FakeApiServerShutdownTest, DestructorEndsOpenWatches) {
  auto server = std::make_unique<FakeApiServer>();
  std::unique_ptr<ApiClient> client = *ApiClient::Create(server->kube_config());
  absl::Notification returned;
  std::thread watcher([&] {
    client
        ->Watch(WithQuery(PodsPath(), {{"watch", "true"}}),
                [](const json&) { return true; })
        .IgnoreError();
    returned.Notify();
  });
  ASSERT_TRUE(WaitFor([&] { return server->open_watches() == 1; }));
  server.reset();
  EXPECT_TRUE(returned.WaitForNotificationWithTimeout(absl::Seconds(10)));
  watcher.join();
}

}  // namespace
}  // namespace deviceshare::testing
