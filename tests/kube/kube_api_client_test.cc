#include <httplib.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "deviceshare/kube/api_client.h"
#include "deviceshare/kube/events.h"
#include "deviceshare/kube/object_paths.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/fake_api_server.h"
#include "testing/fakes.h"
#include "testing/status_matchers.h"
#include "testing/wait_for.h"

namespace deviceshare::kube {
namespace {

using ::deviceshare::testing::FakeApiServer;
using ::deviceshare::testing::FakeApiServerOptions;
using ::deviceshare::testing::StatusIs;
using ::deviceshare::testing::WaitFor;
using nlohmann::json;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Optional;

json Pod(const std::string& name, const std::string& node = "") {
  json pod = {{"metadata", {{"name", name}, {"namespace", "default"}}},
              {"spec", {{"containers", json::array()}}}};
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  return pod;
}

json Binding(const std::string& pod, const std::string& node) {
  return {{"apiVersion", "v1"},
          {"kind", "Binding"},
          {"metadata", {{"name", pod}, {"namespace", "default"}}},
          {"target", {{"kind", "Node"}, {"name", node}}}};
}

std::unique_ptr<ApiClient> ClientFor(const KubeConfig& config,
                                     ApiClientOptions options = {}) {
  absl::StatusOr<std::unique_ptr<ApiClient>> client =
      ApiClient::Create(config, options);
  EXPECT_OK(client);
  return client.ok() ? *std::move(client) : nullptr;
}

class ApiClientTest : public ::testing::Test {
 protected:
  FakeApiServer server_;
  std::unique_ptr<ApiClient> client_ = ClientFor(server_.kube_config());
};

TEST_F(ApiClientTest, GetReturnsTheObject) {
  server_.UpsertPod(Pod("p1"));
  absl::StatusOr<json> pod = client_->Get(PodPath("default", "p1"));
  ASSERT_OK(pod);
  EXPECT_EQ((*pod)["metadata"]["name"], "p1");
  EXPECT_FALSE((*pod)["metadata"]["uid"].get<std::string>().empty());
}

TEST_F(ApiClientTest, MergePatchIsAppliedAndRecorded) {
  server_.UpsertPod(Pod("p1"));
  const json patch = {
      {"metadata", {{"annotations", {{"a", "1"}}}, {"labels", nullptr}}}};
  absl::StatusOr<json> patched =
      client_->MergePatch(PodPath("default", "p1"), patch);
  ASSERT_OK(patched);
  EXPECT_EQ((*patched)["metadata"]["annotations"]["a"], "1");
  EXPECT_THAT(server_.GetPod("default", "p1"),
              Optional(::testing::Truly([](const json& pod) {
                return pod["metadata"]["annotations"]["a"] == "1";
              })));
  ASSERT_EQ(server_.Patches().size(), 1u);
  EXPECT_EQ(server_.Patches()[0].path, "/api/v1/namespaces/default/pods/p1");
  EXPECT_EQ(server_.Patches()[0].patch, patch);
}

TEST_F(ApiClientTest, SecondBindingIsAConflictWithHttpStatus409) {
  server_.UpsertPod(Pod("p1"));
  absl::StatusOr<json> bound =
      client_->Post(PodBindingPath("default", "p1"), Binding("p1", "n1"));
  ASSERT_OK(bound);
  EXPECT_EQ((*bound)["status"], "Success");
  EXPECT_EQ((*server_.GetPod("default", "p1"))["spec"]["nodeName"], "n1");

  absl::StatusOr<json> again =
      client_->Post(PodBindingPath("default", "p1"), Binding("p1", "n2"));
  EXPECT_THAT(again, StatusIs(absl::StatusCode::kAlreadyExists,
                              AllOf(HasSubstr("POST /api/v1/namespaces/"
                                              "default/pods/p1/binding"),
                                    HasSubstr("HTTP 409"),
                                    HasSubstr("already assigned to node "
                                              "\"n1\""))));
  EXPECT_EQ(HttpStatusOf(again.status()), 409);
  EXPECT_TRUE(IsConflict(again.status()));
  EXPECT_EQ(server_.Bindings().size(), 1u);
}

TEST_F(ApiClientTest, MissingObjectIsNotFoundWithTheApiMessage) {
  absl::StatusOr<json> pod = client_->Get(PodPath("default", "nope"));
  EXPECT_THAT(pod, StatusIs(absl::StatusCode::kNotFound,
                            AllOf(HasSubstr("GET /api/v1/namespaces/default/"
                                            "pods/nope"),
                                  HasSubstr("HTTP 404"),
                                  HasSubstr("pods \"nope\" not found"))));
  EXPECT_EQ(HttpStatusOf(pod.status()), 404);
  EXPECT_FALSE(IsConflict(pod.status()));
}

TEST_F(ApiClientTest, StaleResourceVersionInPatchIsAConflict) {
  const json stored = server_.UpsertPod(Pod("p1"));
  server_.SetPodPhase("default", "p1", "Running");
  absl::StatusOr<json> patched = client_->MergePatch(
      PodPath("default", "p1"),
      {{"metadata",
        {{"resourceVersion", stored["metadata"]["resourceVersion"]},
         {"annotations", {{"a", "1"}}}}}});
  EXPECT_TRUE(IsConflict(patched.status())) << patched.status();
  EXPECT_TRUE(server_.Patches().empty());
}

TEST_F(ApiClientTest, InjectedFailuresMapToCodes) {
  server_.UpsertPod(Pod("p1"));
  server_.FailNextPodPatches(1, 500);
  server_.FailNextBindings(1, 429);
  absl::StatusOr<json> patched =
      client_->MergePatch(PodPath("default", "p1"), {{"spec", json::object()}});
  EXPECT_THAT(patched, StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_EQ(HttpStatusOf(patched.status()), 500);
  EXPECT_THAT(
      client_->Post(PodBindingPath("default", "p1"), Binding("p1", "n1")),
      StatusIs(absl::StatusCode::kUnavailable, HasSubstr("HTTP 429")));
  // Only the next ones fail.
  EXPECT_OK(client_->MergePatch(PodPath("default", "p1"),
                                {{"spec", json::object()}}));
}

TEST_F(ApiClientTest, PostPodEventSendsACoreV1Event) {
  ASSERT_OK(PostPodEvent(*client_, {"team", "p1", "uid-1"}, "Warning",
                         "FailedBinding", "no GPU left", "deviceshare",
                         absl::FromUnixSeconds(1700000000)));
  ASSERT_EQ(server_.Events().size(), 1u);
  const json event = server_.Events()[0];
  EXPECT_EQ(event["metadata"]["namespace"], "team");
  EXPECT_EQ(event["involvedObject"], json({{"apiVersion", "v1"},
                                           {"kind", "Pod"},
                                           {"namespace", "team"},
                                           {"name", "p1"},
                                           {"uid", "uid-1"}}));
  EXPECT_EQ(event["type"], "Warning");
  EXPECT_EQ(event["reason"], "FailedBinding");
  EXPECT_EQ(event["message"], "no GPU left");
  EXPECT_EQ(event["source"]["component"], "deviceshare");
  EXPECT_EQ(event["firstTimestamp"], "2023-11-14T22:13:20Z");
  EXPECT_EQ(event["count"], 1);
}

TEST(PodEventTest, LongMessageIsCutAtACharacterBoundary) {
  // 'é' is two bytes: a cut at an odd byte would split one.
  std::string message;
  for (int i = 0; i < 1000; ++i) message += "\xC3\xA9";
  const json event = MakePodEvent({"ns", "p", ""}, "Normal", "R", message, "c",
                                  absl::UnixEpoch());
  const std::string cut = event["message"];
  EXPECT_LE(cut.size(), 1024u);
  EXPECT_EQ(cut.substr(cut.size() - 5), "\xC3\xA9...");
  EXPECT_FALSE(event["involvedObject"].contains("uid"));
}

TEST(ApiClientAuthTest, WrongTokenIsUnauthenticated) {
  FakeApiServerOptions options;
  options.token = "right";
  FakeApiServer server(options);
  KubeConfig config = server.kube_config();
  config.bearer_token = "wrong";
  std::unique_ptr<ApiClient> client = ClientFor(config);
  absl::StatusOr<json> nodes = client->Get(NodesPath());
  EXPECT_THAT(nodes, StatusIs(absl::StatusCode::kUnauthenticated));
  EXPECT_EQ(HttpStatusOf(nodes.status()), 401);
  EXPECT_EQ(server.request_counts().unauthorized, 1);
  EXPECT_OK(ClientFor(server.kube_config())->Get(NodesPath()));
}

TEST(ApiClientAuthTest, TokenFileIsReReadOncePerInterval) {
  FakeApiServerOptions options;
  options.token = "new";
  FakeApiServer server(options);
  const std::string token_file =
      ::testing::TempDir() + "/token-" + std::to_string(server.port());
  std::ofstream(token_file) << "old\n";
  KubeConfig config = server.kube_config();
  config.bearer_token.clear();
  config.token_file = token_file;
  testing::FakeClock clock;
  ApiClientOptions client_options;
  client_options.clock = &clock;
  std::unique_ptr<ApiClient> client = ClientFor(config, client_options);
  EXPECT_THAT(client->Get(NodesPath()),
              StatusIs(absl::StatusCode::kUnauthenticated));
  std::ofstream(token_file) << "new\n";
  clock.Advance(absl::Seconds(30));
  EXPECT_THAT(client->Get(NodesPath()),
              StatusIs(absl::StatusCode::kUnauthenticated));
  clock.Advance(absl::Seconds(31));
  EXPECT_OK(client->Get(NodesPath()));
  // A vanished file keeps the last token.
  std::remove(token_file.c_str());
  clock.Advance(absl::Minutes(2));
  EXPECT_OK(client->Get(NodesPath()));
}

TEST(ApiClientCreateTest, RejectsBadSettings) {
  EXPECT_THAT(ApiClient::Create({.server = "ftp://x"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ftp")));
  EXPECT_THAT(
      ApiClient::Create({.server = "https://::1:6443"}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("brackets")));
  EXPECT_THAT(ApiClient::Create({.server = "https://h:99999"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("99999")));
  EXPECT_THAT(ApiClient::Create({.server = "https://h", .ca_pem = "junk"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("CA certificate")));
  EXPECT_THAT(
      ApiClient::Create(
          {.server = "https://h", .token_file = "/nonexistent/token"}),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("/nonexistent/token")));
}

TEST(ApiClientTransportTest, RefusedConnectionIsUnavailableWithoutHttpStatus) {
  KubeConfig config;
  {
    FakeApiServer server;
    config = server.kube_config();
  }
  std::unique_ptr<ApiClient> client = ClientFor(config);
  absl::StatusOr<json> nodes = client->Get(NodesPath());
  EXPECT_THAT(nodes, StatusIs(absl::StatusCode::kUnavailable,
                              HasSubstr("GET /api/v1/nodes")));
  EXPECT_EQ(HttpStatusOf(nodes.status()), std::nullopt);
}

TEST_F(ApiClientTest, SixteenThreadsShareTheClient) {
  constexpr int kThreads = 16;
  constexpr int kPerThread = 10;
  for (int t = 0; t < kThreads; ++t) {
    server_.UpsertPod(Pod(absl::StrCat("p", t)));
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string path = PodPath("default", absl::StrCat("p", t));
      for (int i = 0; i < kPerThread; ++i) {
        absl::StatusOr<json> patched = client_->MergePatch(
            path,
            {{"metadata", {{"annotations", {{"i", std::to_string(i)}}}}}});
        if (!patched.ok() || !client_->Get(path).ok()) ++failures;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(server_.request_counts().patches, kThreads * kPerThread);
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(
        (*server_.GetPod("default",
                         absl::StrCat("p", t)))["metadata"]["annotations"]["i"],
        std::to_string(kPerThread - 1));
  }
}

// A server whose handler returns only once `width` requests are inside it
// at the same time: a client that serialised its requests would never get
// there.
class BarrierServer {
 public:
  explicit BarrierServer(int width) : width_(width) {
    server_.new_task_queue = [width] {
      return new httplib::ThreadPool(width + 4);
    };
    server_.Get("/api/v1/nodes",
                [this](const httplib::Request&, httplib::Response& res) {
                  absl::MutexLock lock(&mu_);
                  ++inside_;
                  auto all_inside = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
                    return inside_ >= width_;
                  };
                  const bool met = mu_.AwaitWithTimeout(
                      absl::Condition(&all_inside), absl::Seconds(20));
                  res.status = met ? 200 : 504;
                  res.set_content("{}", "application/json");
                });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    EXPECT_TRUE(WaitFor([this] { return server_.is_running(); }));
  }
  ~BarrierServer() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return absl::StrCat("http://127.0.0.1:", port_); }

 private:
  const int width_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  absl::Mutex mu_;
  int inside_ ABSL_GUARDED_BY(mu_) = 0;
};

TEST(ApiClientConcurrencyTest, RequestsRunInParallelUpToThePoolSize) {
  // Below httplib's listen backlog of 5, so that no connection waits for
  // a resent SYN.
  constexpr int kWidth = 4;
  BarrierServer server(kWidth);
  ApiClientOptions options;
  options.max_connections = kWidth;
  std::unique_ptr<ApiClient> client =
      ClientFor({.server = server.url()}, options);
  std::vector<absl::Status> results(kWidth);
  std::vector<std::thread> threads;
  for (int i = 0; i < kWidth; ++i) {
    threads.emplace_back(
        [&, i] { results[i] = client->Get(NodesPath()).status(); });
  }
  for (std::thread& thread : threads) thread.join();
  for (const absl::Status& result : results) EXPECT_OK(result);
}

}  // namespace
}  // namespace deviceshare::kube
