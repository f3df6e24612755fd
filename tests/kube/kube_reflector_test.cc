#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "deviceshare/kube/object_paths.h"
#include "deviceshare/kube/reflector.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/fake_api_server.h"
#include "testing/fakes.h"
#include "testing/input_text.h"
#include "testing/status_matchers.h"
#include "testing/wait_for.h"

namespace deviceshare::kube {
namespace {

using ::deviceshare::testing::FakeApiServer;
using ::deviceshare::testing::WaitFor;
using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

json Pod(const std::string& name, const std::string& node = "") {
  json pod = {{"metadata", {{"name", name}, {"namespace", "default"}}},
              {"spec", json::object()}};
  if (!node.empty()) pod["spec"]["nodeName"] = node;
  return pod;
}

// What a consumer of the reflector would hold: the objects by name, rebuilt
// by replace and patched by events, plus a log of the calls.
class View {
 public:
  ReflectorHandler Handler() {
    return {[this](std::vector<json> items) {
              absl::MutexLock lock(&mu_);
              objects_.clear();
              for (const json& item : items) {
                objects_[Name(item)] = item;
                kinds_.insert(item.value("kind", ""));
              }
              ++replaces_;
            },
            [this](absl::string_view type, const json& object) {
              absl::MutexLock lock(&mu_);
              log_.push_back(absl::StrCat(type, " ", Name(object)));
              if (type == "DELETED") {
                objects_.erase(Name(object));
              } else {
                objects_[Name(object)] = object;
              }
            }};
  }

  std::set<std::string> names() const {
    absl::MutexLock lock(&mu_);
    std::set<std::string> names;
    for (const auto& [name, object] : objects_) names.insert(name);
    return names;
  }
  std::vector<std::string> log() const {
    absl::MutexLock lock(&mu_);
    return log_;
  }
  int replaces() const {
    absl::MutexLock lock(&mu_);
    return replaces_;
  }
  std::set<std::string> kinds() const {
    absl::MutexLock lock(&mu_);
    return kinds_;
  }

 private:
  static std::string Name(const json& object) {
    return object["metadata"]["name"].get<std::string>();
  }

  mutable absl::Mutex mu_;
  std::map<std::string, json> objects_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> log_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> kinds_ ABSL_GUARDED_BY(mu_);
  int replaces_ ABSL_GUARDED_BY(mu_) = 0;
};

ReflectorOptions FastOptions() {
  ReflectorOptions options;
  options.initial_backoff = absl::Milliseconds(5);
  options.max_backoff = absl::Milliseconds(50);
  return options;
}

class ReflectorTest : public ::testing::Test {
 protected:
  void StartReflector(const std::string& path = PodsPath()) {
    reflector_ = std::make_unique<Reflector>(client_.get(), path,
                                             view_.Handler(), FastOptions());
    reflector_->Start();
    ASSERT_TRUE(reflector_->WaitForSync(absl::Seconds(10)));
    ASSERT_TRUE(WaitFor([this] { return server_.open_watches() == 1; }));
  }

  bool CaughtUp() {
    return reflector_->resource_version() ==
           std::to_string(server_.resource_version());
  }

  FakeApiServer server_;
  std::unique_ptr<ApiClient> client_ =
      *ApiClient::Create(server_.kube_config());
  View view_;
  std::unique_ptr<Reflector> reflector_;
};

TEST_F(ReflectorTest, InitialListIsHandedToReplace) {
  server_.UpsertPod(Pod("a"));
  server_.UpsertPod(Pod("b"));
  StartReflector();
  EXPECT_EQ(view_.replaces(), 1);
  EXPECT_THAT(view_.names(), ElementsAre("a", "b"));
  EXPECT_THAT(view_.kinds(), ElementsAre("Pod"));
  EXPECT_EQ(reflector_->resource_version(),
            std::to_string(server_.resource_version()));
  EXPECT_TRUE(view_.log().empty());
}

TEST_F(ReflectorTest, LaterChangesArriveAsEventsInOrder) {
  server_.UpsertPod(Pod("a"));
  StartReflector();
  server_.UpsertPod(Pod("b"));
  server_.SetPodPhase("default", "a", "Running");
  server_.DeletePod("default", "a");
  ASSERT_TRUE(WaitFor([this] { return view_.log().size() == 3; }));
  EXPECT_THAT(view_.log(), ElementsAre("ADDED b", "MODIFIED a", "DELETED a"));
  EXPECT_THAT(view_.names(), ElementsAre("b"));
  EXPECT_TRUE(WaitFor([this] { return CaughtUp(); }));
  EXPECT_EQ(reflector_->stats().events, 3);
}

TEST_F(ReflectorTest, BookmarksAdvanceTheResourceVersionWithoutEvents) {
  StartReflector();
  // A node change moves the global resourceVersion; the pod watch only
  // learns of it through a bookmark.
  server_.UpsertNode({{"metadata", {{"name", "n1"}}}});
  server_.SendBookmarks();
  ASSERT_TRUE(WaitFor([this] { return CaughtUp(); }));
  EXPECT_GE(reflector_->stats().bookmarks, 1);
  EXPECT_TRUE(view_.log().empty());
}

TEST_F(ReflectorTest, ExpiredResourceVersionRelistsWithoutLosingChanges) {
  server_.UpsertPod(Pod("a"));
  server_.UpsertPod(Pod("b"));
  StartReflector();
  // Changes the watch never delivers, then history that no longer reaches
  // back to the reflector's resourceVersion.
  server_.PauseWatches();
  server_.DeletePod("default", "a");
  server_.UpsertPod(Pod("c"));
  server_.CompactHistory();
  server_.CloseWatches();
  server_.ResumeWatches();
  ASSERT_TRUE(WaitFor([this] { return view_.replaces() == 2; }));
  EXPECT_THAT(view_.names(), ElementsAre("b", "c"));
  EXPECT_EQ(reflector_->stats().relists, 1);
  // Watching again from the new list.
  server_.UpsertPod(Pod("d"));
  ASSERT_TRUE(WaitFor([this] { return view_.names().count("d") == 1; }));
  EXPECT_THAT(view_.log(), ElementsAre("ADDED d"));
}

TEST_F(ReflectorTest, Http410OnWatchAlsoRelists) {
  server_.AnswerExpiredWatchesWithHttp410(true);
  server_.UpsertPod(Pod("a"));
  StartReflector();
  server_.PauseWatches();
  server_.UpsertPod(Pod("b"));
  server_.CompactHistory();
  server_.CloseWatches();
  server_.ResumeWatches();
  ASSERT_TRUE(WaitFor([this] { return view_.replaces() == 2; }));
  EXPECT_THAT(view_.names(), ElementsAre("a", "b"));
  EXPECT_EQ(reflector_->stats().relists, 1);
}

TEST_F(ReflectorTest, ClosedStreamResumesFromTheLastResourceVersion) {
  server_.UpsertPod(Pod("a"));
  StartReflector();
  server_.CloseWatches();
  ASSERT_TRUE(WaitFor([this] {
    return reflector_->stats().rewatches >= 1 && server_.open_watches() == 1;
  }));
  server_.UpsertPod(Pod("b"));
  ASSERT_TRUE(WaitFor([this] { return view_.log().size() == 1; }));
  EXPECT_THAT(view_.log(), ElementsAre("ADDED b"));
  EXPECT_EQ(view_.replaces(), 1);
  EXPECT_EQ(reflector_->stats().relists, 0);
  EXPECT_EQ(server_.request_counts().lists, 1);
}

TEST_F(ReflectorTest, SelectorQueryTurnsTransitionsIntoAddsAndDeletes) {
  server_.UpsertPod(Pod("on-n1", "n1"));
  server_.UpsertPod(Pod("pending"));
  StartReflector(
      WithQuery(PodsPath(), {{"fieldSelector", "spec.nodeName=n1"}}));
  EXPECT_THAT(view_.names(), ElementsAre("on-n1"));
  server_.UpdatePod("default", "pending",
                    [](json& pod) { pod["spec"]["nodeName"] = "n1"; });
  server_.UpdatePod("default", "on-n1",
                    [](json& pod) { pod["spec"]["nodeName"] = "n2"; });
  ASSERT_TRUE(WaitFor([this] { return view_.log().size() == 2; }));
  EXPECT_THAT(view_.log(), ElementsAre("ADDED pending", "DELETED on-n1"));
}

TEST_F(ReflectorTest, StopCutsAnOpenWatchShort) {
  StartReflector();
  absl::Notification stopped;
  std::thread stopper([&] {
    reflector_->Stop();
    stopped.Notify();
  });
  // The watch asked for a five-minute stream.
  EXPECT_TRUE(stopped.WaitForNotificationWithTimeout(absl::Seconds(5)));
  stopper.join();
  const int replaces = view_.replaces();
  server_.UpsertPod(Pod("late"));
  reflector_->Stop();  // idempotent
  EXPECT_EQ(view_.replaces(), replaces);
  EXPECT_TRUE(view_.log().empty());
}

TEST(ReflectorRetryTest, FailedListsBackOffAndRetryUntilTheyWork) {
  testing::FakeApiServerOptions options;
  options.token = "good";
  FakeApiServer server(options);
  server.UpsertPod(Pod("a"));
  const std::string token_file = absl::StrCat(
      testing::ProcessTempFolder(), "/reflector-token-", server.port());
  std::ofstream(token_file) << "bad";
  KubeConfig config = server.kube_config();
  config.token_file = token_file;
  testing::FakeClock clock;
  ApiClientOptions client_options;
  client_options.clock = &clock;
  std::unique_ptr<ApiClient> client =
      *ApiClient::Create(config, client_options);
  View view;
  Reflector reflector(client.get(), PodsPath(), view.Handler(), FastOptions());
  reflector.Start();
  ASSERT_TRUE(WaitFor([&] { return reflector.stats().errors >= 2; }));
  EXPECT_FALSE(reflector.synced());
  EXPECT_EQ(HttpStatusOf(reflector.stats().last_error), 401);
  std::ofstream(token_file) << "good";
  clock.Advance(absl::Minutes(2));
  ASSERT_TRUE(reflector.WaitForSync(absl::Seconds(10)));
  EXPECT_THAT(view.names(), ElementsAre("a"));
}

TEST(ReflectorLifecycleTest, StopBeforeStartAndDestroyWithoutStart) {
  FakeApiServer server;
  std::unique_ptr<ApiClient> client = *ApiClient::Create(server.kube_config());
  { Reflector never_started(client.get(), PodsPath(), {}); }
  Reflector reflector(client.get(), PodsPath(), {});
  reflector.Stop();
  reflector.Start();
  EXPECT_FALSE(reflector.WaitForSync(absl::Milliseconds(50)));
  EXPECT_EQ(server.request_counts().lists, 0);
}

}  // namespace
}  // namespace deviceshare::kube
