// ApiClient::Watch against hand-written httplib servers that frame the
// stream in awkward ways, and against FakeApiServer.
#include <httplib.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "deviceshare/kube/api_client.h"
#include "deviceshare/kube/object_paths.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/fake_api_server.h"
#include "testing/status_matchers.h"
#include "testing/wait_for.h"

namespace deviceshare::kube {
namespace {

using ::deviceshare::testing::FakeApiServer;
using ::deviceshare::testing::StatusIs;
using ::deviceshare::testing::WaitFor;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Serves GET /watch with the given chunks, one per write, then ends the
// stream; or, with `hold`, keeps it open and silent until destroyed.
class ChunkServer {
 public:
  explicit ChunkServer(std::vector<std::string> chunks, bool hold = false,
                       int status = 200)
      : chunks_(std::move(chunks)), hold_(hold) {
    server_.Get("/watch", [this, status](const httplib::Request&,
                                         httplib::Response& res) {
      started_.Notify();
      res.status = status;
      auto next = std::make_shared<size_t>(0);
      res.set_chunked_content_provider(
          "application/json", [this, next](size_t, httplib::DataSink& sink) {
            if (*next < chunks_.size()) {
              const std::string& chunk = chunks_[(*next)++];
              return sink.write(chunk.data(), chunk.size());
            }
            if (hold_ && !release_.WaitForNotificationWithTimeout(
                             absl::Milliseconds(50))) {
              return true;
            }
            sink.done();
            return true;
          });
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    EXPECT_TRUE(WaitFor([this] { return server_.is_running(); }));
  }
  ~ChunkServer() {
    release_.Notify();
    server_.stop();
    thread_.join();
  }

  std::unique_ptr<ApiClient> Client() {
    absl::StatusOr<std::unique_ptr<ApiClient>> client =
        ApiClient::Create({.server = absl::StrCat("http://127.0.0.1:", port_)});
    EXPECT_OK(client);
    return *std::move(client);
  }
  absl::Notification& started() { return started_; }

 private:
  const std::vector<std::string> chunks_;
  const bool hold_;
  absl::Notification started_;
  absl::Notification release_;
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
};

std::vector<std::string> Names(const std::vector<json>& events) {
  std::vector<std::string> names;
  for (const json& event : events) {
    names.push_back(absl::StrCat(event["type"].get<std::string>(), " ",
                                 event["object"]["name"].get<std::string>()));
  }
  return names;
}

TEST(ApiClientWatchTest, ReassemblesLinesSplitAcrossChunks) {
  ChunkServer server({
      R"({"type":"ADDED","obj)",
      R"(ect":{"name":"a"}})",
      "\n{\"type\":\"MODIFIED\",\"object\":{\"name\":\"a\"}}\n{\"type\":",
      "\"DELETED\",\"object\":{\"name\":\"a\"}}\n\n",
  });
  std::vector<json> events;
  EXPECT_OK(server.Client()->Watch("/watch", [&](const json& event) {
    events.push_back(event);
    return true;
  }));
  EXPECT_THAT(Names(events), ElementsAre("ADDED a", "MODIFIED a", "DELETED a"));
}

TEST(ApiClientWatchTest, HandlerReturningFalseEndsTheWatch) {
  ChunkServer server({"{\"type\":\"ADDED\",\"object\":{\"name\":\"a\"}}\n"
                      "{\"type\":\"ADDED\",\"object\":{\"name\":\"b\"}}\n"},
                     /*hold=*/true);
  int calls = 0;
  EXPECT_OK(server.Client()->Watch("/watch", [&](const json&) {
    ++calls;
    return false;
  }));
  EXPECT_EQ(calls, 1);
}

TEST(ApiClientWatchTest, StopEndsASilentStream) {
  ChunkServer server({}, /*hold=*/true);
  std::unique_ptr<ApiClient> client = server.Client();
  std::atomic<bool> stop{false};
  absl::Notification returned;
  absl::Status status = absl::UnknownError("not returned");
  std::thread watcher([&] {
    status = client->Watch(
        "/watch", [](const json&) { return true; }, &stop);
    returned.Notify();
  });
  ASSERT_TRUE(
      server.started().WaitForNotificationWithTimeout(absl::Seconds(10)));
  EXPECT_FALSE(returned.HasBeenNotified());
  stop = true;
  // The stream would stay open for as long as the server lives; the watch
  // must be cut from the client side.
  EXPECT_TRUE(returned.WaitForNotificationWithTimeout(absl::Seconds(5)));
  watcher.join();
  EXPECT_OK(status);
}

TEST(ApiClientWatchTest, LineThatIsNotJsonIsDataLoss) {
  ChunkServer server({"{\"type\":\"ADDED\",\"object\":{}}\n", "<html>\n"});
  int calls = 0;
  EXPECT_THAT(server.Client()->Watch("/watch",
                                     [&](const json&) {
                                       ++calls;
                                       return true;
                                     }),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("<html>")));
  EXPECT_EQ(calls, 1);
}

TEST(ApiClientWatchTest, ErrorStatusCarriesTheApiMessage) {
  ChunkServer server({R"({"kind":"Status","code":403,"message":"forbidden: )"
                      R"(no watch for you"})"},
                     /*hold=*/false, /*status=*/403);
  absl::Status status =
      server.Client()->Watch("/watch", [](const json&) { return true; });
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kPermissionDenied,
                               HasSubstr("no watch for you")));
  EXPECT_EQ(HttpStatusOf(status), 403);
}

TEST(ApiClientWatchTest, FakeServerStreamsChangesAfterTheResourceVersion) {
  FakeApiServer server;
  server.UpsertNode({{"metadata", {{"name", "old"}}}});
  const std::string rv = std::to_string(server.resource_version());
  std::unique_ptr<ApiClient> client = *ApiClient::Create(server.kube_config());
  std::vector<std::string> seen;
  std::thread changer([&] {
    ASSERT_TRUE(WaitFor([&] { return server.open_watches() == 1; }));
    server.UpsertNode({{"metadata", {{"name", "n1"}}}});
    server.DeleteNode("n1");
  });
  EXPECT_OK(client->Watch(
      WithQuery(NodesPath(), {{"watch", "true"}, {"resourceVersion", rv}}),
      [&](const json& event) {
        seen.push_back(absl::StrCat(
            event["type"].get<std::string>(), " ",
            event["object"]["metadata"]["name"].get<std::string>()));
        return seen.size() < 2;
      }));
  changer.join();
  EXPECT_THAT(seen, ElementsAre("ADDED n1", "DELETED n1"));
}

TEST(ApiClientWatchTest, TooOldResourceVersionIsGoneWhenTheServerSays410) {
  FakeApiServer server;
  server.UpsertNode({{"metadata", {{"name", "n1"}}}});
  server.UpsertNode({{"metadata", {{"name", "n2"}}}});
  server.CompactHistory();
  server.AnswerExpiredWatchesWithHttp410(true);
  std::unique_ptr<ApiClient> client = *ApiClient::Create(server.kube_config());
  absl::Status status = client->Watch(
      WithQuery(NodesPath(), {{"watch", "1"}, {"resourceVersion", "1"}}),
      [](const json&) { return true; });
  EXPECT_TRUE(IsGone(status)) << status;
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kFailedPrecondition,
                               HasSubstr("too old resource version")));
}

}  // namespace
}  // namespace deviceshare::kube
