// DraPluginServer against TestDraKubelet, which drives it the way kubelet
// 1.34's plugin watcher and DRA plugin manager do
// (testing/test_dra_kubelet.h), over unix sockets in a temporary folder.
#include "deviceshare/agent/dra_plugin_server.h"

#include <stdlib.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"
#include "testing/temp_folder.h"
#include "testing/test_dra_kubelet.h"
#include "testing/wait_for.h"

namespace deviceshare::agent {
namespace {

using ::deviceshare::testing::DraPluginInfo;
using ::deviceshare::testing::IsOk;
using ::deviceshare::testing::StatusIs;
using ::deviceshare::testing::TestDraKubelet;
using ::deviceshare::testing::WaitFor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr char kDriver[] = "gpu.deviceshare.io";
// Generous: a loaded 2-core machine may be slow; passing tests return as
// soon as the condition holds.
constexpr absl::Duration kWait = absl::Seconds(30);

// Answers derived from each claim, so that a test can tell what reached
// kubelet; failures, omissions and unasked-for entries on demand.
class FakePreparer : public ClaimPreparer {
 public:
  static ClaimPrepareResult PreparedFor(const ClaimRef& claim,
                                        bool with_share = false) {
    PreparedDevice device;
    device.request_names = {"gpu"};
    device.pool = "node-a";
    device.device = absl::StrCat("gpu-", claim.name);
    device.cdi_device_ids = {
        absl::StrCat("k8s.gpu.deviceshare.io/claim=", claim.uid)};
    if (with_share) device.share_id = absl::StrCat("share-", claim.uid);
    PreparedDevice whole = device;
    whole.request_names = {"b/share", "c"};
    whole.device = "gpu-whole";
    whole.share_id.clear();
    return {{device, whole}, ""};
  }

  std::map<std::string, ClaimPrepareResult> Prepare(
      const std::vector<ClaimRef>& claims) override {
    absl::MutexLock lock(&mu_);
    prepared_.push_back(claims);
    std::map<std::string, ClaimPrepareResult> answer;
    for (const ClaimRef& claim : claims) {
      if (leave_out_.count(claim.uid) > 0) continue;
      if (fail_.count(claim.uid) > 0) {
        answer[claim.uid].error = "no such device";
      } else {
        answer[claim.uid] = PreparedFor(claim, with_share_);
      }
    }
    if (!unasked_.empty()) answer[unasked_] = {};
    return answer;
  }

  std::map<std::string, std::string> Unprepare(
      const std::vector<ClaimRef>& claims) override {
    absl::MutexLock lock(&mu_);
    unprepared_.push_back(claims);
    std::map<std::string, std::string> answer;
    for (const ClaimRef& claim : claims) {
      if (leave_out_.count(claim.uid) > 0) continue;
      answer[claim.uid] = fail_.count(claim.uid) > 0 ? "busy" : "";
    }
    if (!unasked_.empty()) answer[unasked_] = "";
    return answer;
  }

  void set_leave_out(std::set<std::string> uids) {
    absl::MutexLock lock(&mu_);
    leave_out_ = std::move(uids);
  }
  void set_fail(std::set<std::string> uids) {
    absl::MutexLock lock(&mu_);
    fail_ = std::move(uids);
  }
  void set_unasked(std::string uid) {
    absl::MutexLock lock(&mu_);
    unasked_ = std::move(uid);
  }
  void set_with_share(bool with_share) {
    absl::MutexLock lock(&mu_);
    with_share_ = with_share;
  }
  std::vector<std::vector<ClaimRef>> prepared() const {
    absl::MutexLock lock(&mu_);
    return prepared_;
  }
  std::vector<std::vector<ClaimRef>> unprepared() const {
    absl::MutexLock lock(&mu_);
    return unprepared_;
  }

 private:
  mutable absl::Mutex mu_;
  std::set<std::string> leave_out_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> fail_ ABSL_GUARDED_BY(mu_);
  std::string unasked_ ABSL_GUARDED_BY(mu_);
  bool with_share_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::vector<ClaimRef>> prepared_ ABSL_GUARDED_BY(mu_);
  std::vector<std::vector<ClaimRef>> unprepared_ ABSL_GUARDED_BY(mu_);
};

const std::vector<ClaimRef> kClaims = {
    {"team-a", "uid-1", "train"},
    {"team-a", "uid-2", "infer"},
    {"team-b", "uid-3", "notebook"},
};

class DraPluginServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Short: a unix socket path must fit in 108 bytes.
    dir_ = folder_.path();
    ASSERT_FALSE(dir_.empty());
    kubelet_ = std::make_unique<TestDraKubelet>(RegistryDir());
  }

  void TearDown() override {
    servers_.clear();
    kubelet_.reset();
  }

  std::string PluginDir() const { return dir_ + "/plugins"; }
  std::string RegistryDir() const { return dir_ + "/plugins_registry"; }

  DraPluginServerOptions FastOptions() const {
    DraPluginServerOptions options;
    options.plugin_dir = PluginDir();
    options.registry_dir = RegistryDir();
    options.watchdog_interval = absl::Milliseconds(20);
    return options;
  }

  DraPluginServer& NewServer(DraPluginServerOptions options) {
    servers_.push_back(
        std::make_unique<DraPluginServer>(std::move(options), &preparer_));
    return *servers_.back();
  }

  // A started server that the kubelet registered.
  DraPluginServer& StartRegistered(DraPluginServerOptions options) {
    DraPluginServer& server = NewServer(std::move(options));
    EXPECT_THAT(server.Start(), IsOk());
    EXPECT_THAT(kubelet_->WaitForPlugin(kDriver, kWait), IsOk());
    return server;
  }

  ::deviceshare::testing::TempFolder folder_{"dsdra-"};
  std::string dir_;
  FakePreparer preparer_;
  std::unique_ptr<TestDraKubelet> kubelet_;
  std::vector<std::unique_ptr<DraPluginServer>> servers_;
};

TEST_F(DraPluginServerTest, RegistersAsDraPluginWithEndpointAndBothVersions) {
  DraPluginServer& server = NewServer(FastOptions());
  ASSERT_THAT(server.Start(), IsOk());

  absl::StatusOr<DraPluginInfo> info = kubelet_->WaitForPlugin(kDriver, kWait);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->type, "DRAPlugin");
  EXPECT_EQ(info->name, kDriver);
  EXPECT_EQ(info->endpoint, PluginDir() + "/gpu.deviceshare.io/dra.sock");
  EXPECT_THAT(info->supported_versions,
              ElementsAre("v1.DRAPlugin", "v1beta1.DRAPlugin"));
  // A 1.34 kubelet takes the plugin's first entry it knows.
  EXPECT_EQ(info->chosen_service, "v1.DRAPlugin");

  EXPECT_EQ(server.dra_socket_path(), info->endpoint);
  EXPECT_EQ(server.registration_socket_path(),
            RegistryDir() + "/gpu.deviceshare.io-reg.sock");
  EXPECT_TRUE(std::filesystem::is_socket(server.dra_socket_path()));
  EXPECT_TRUE(std::filesystem::is_socket(server.registration_socket_path()));
  // WaitForPlugin returns after NotifyRegistrationStatus was answered.
  EXPECT_TRUE(server.registered());
  const DraPluginStats stats = server.stats();
  EXPECT_EQ(stats.registrations_notified, 1);
  EXPECT_EQ(stats.last_registration_error, "");
  EXPECT_EQ(stats.dra_serves, 1);
  EXPECT_EQ(stats.registration_serves, 1);
}

TEST_F(DraPluginServerTest,
       PrepareAndUnprepareAnswerTheSameThroughBothVersions) {
  DraPluginServer& server = StartRegistered(FastOptions());

  auto v1 = kubelet_->Prepare("v1", kClaims);
  auto v1beta1 = kubelet_->Prepare("v1beta1", kClaims);
  ASSERT_THAT(v1, IsOk());
  ASSERT_THAT(v1beta1, IsOk());
  EXPECT_EQ(*v1, *v1beta1);
  std::map<std::string, ClaimPrepareResult> expected;
  for (const ClaimRef& claim : kClaims) {
    expected[claim.uid] = FakePreparer::PreparedFor(claim);
  }
  EXPECT_EQ(*v1, expected);
  // The claims reached the preparer as kubelet named them.
  EXPECT_THAT(preparer_.prepared(), ElementsAre(kClaims, kClaims));

  auto un_v1 = kubelet_->Unprepare("v1", kClaims);
  auto un_v1beta1 = kubelet_->Unprepare("v1beta1", kClaims);
  ASSERT_THAT(un_v1, IsOk());
  ASSERT_THAT(un_v1beta1, IsOk());
  EXPECT_EQ(*un_v1, *un_v1beta1);
  EXPECT_EQ(*un_v1, (std::map<std::string, std::string>{
                        {"uid-1", ""}, {"uid-2", ""}, {"uid-3", ""}}));
  EXPECT_THAT(preparer_.unprepared(), ElementsAre(kClaims, kClaims));

  const DraPluginStats stats = server.stats();
  EXPECT_EQ(stats.prepare_calls, 2);
  EXPECT_EQ(stats.unprepare_calls, 2);
  EXPECT_EQ(stats.v1beta1_calls, 2);
  EXPECT_EQ(stats.claims_left_out, 0);
}

TEST_F(DraPluginServerTest, ShareIdTravelsOnlyThroughV1) {
  StartRegistered(FastOptions());
  preparer_.set_with_share(true);

  auto v1 = kubelet_->Prepare("v1", {kClaims[0]});
  auto v1beta1 = kubelet_->Prepare("v1beta1", {kClaims[0]});
  ASSERT_THAT(v1, IsOk());
  ASSERT_THAT(v1beta1, IsOk());
  EXPECT_EQ(v1->at("uid-1"), FakePreparer::PreparedFor(kClaims[0], true));
  // v1beta1 has no share_id; a whole device sends none on v1 either.
  EXPECT_EQ(v1beta1->at("uid-1"), FakePreparer::PreparedFor(kClaims[0]));
  EXPECT_EQ(v1->at("uid-1").devices[1].share_id, "");
}

TEST_F(DraPluginServerTest, OneFailedClaimDoesNotFailTheOthers) {
  StartRegistered(FastOptions());
  preparer_.set_fail({"uid-2"});

  for (const std::string version : {"v1", "v1beta1"}) {
    SCOPED_TRACE(version);
    auto prepared = kubelet_->Prepare(version, kClaims);
    ASSERT_THAT(prepared, IsOk());
    EXPECT_EQ(prepared->at("uid-1"), FakePreparer::PreparedFor(kClaims[0]));
    EXPECT_EQ(prepared->at("uid-2").error, "no such device");
    EXPECT_THAT(prepared->at("uid-2").devices, IsEmpty());
    EXPECT_EQ(prepared->at("uid-3"), FakePreparer::PreparedFor(kClaims[2]));

    auto unprepared = kubelet_->Unprepare(version, kClaims);
    ASSERT_THAT(unprepared, IsOk());
    EXPECT_EQ(*unprepared,
              (std::map<std::string, std::string>{
                  {"uid-1", ""}, {"uid-2", "busy"}, {"uid-3", ""}}));
  }
}

TEST_F(DraPluginServerTest, AClaimThePreparerLeftOutGetsAnErrorEntry) {
  DraPluginServer& server = StartRegistered(FastOptions());
  preparer_.set_leave_out({"uid-2"});
  // An entry kubelet did not ask for would make it reject the whole answer
  // (TestDraKubelet checks that too); the server drops it.
  preparer_.set_unasked("uid-stray");

  for (const std::string version : {"v1", "v1beta1"}) {
    SCOPED_TRACE(version);
    auto prepared = kubelet_->Prepare(version, kClaims);
    ASSERT_THAT(prepared, IsOk());
    ASSERT_EQ(prepared->size(), 3u);
    EXPECT_THAT(prepared->at("uid-2").error,
                HasSubstr("team-a/infer (uid uid-2) got no answer"));
    EXPECT_THAT(prepared->at("uid-2").devices, IsEmpty());
    EXPECT_EQ(prepared->at("uid-1").error, "");

    auto unprepared = kubelet_->Unprepare(version, kClaims);
    ASSERT_THAT(unprepared, IsOk());
    ASSERT_EQ(unprepared->size(), 3u);
    EXPECT_THAT(unprepared->at("uid-2"), HasSubstr("uid-2"));
    EXPECT_EQ(unprepared->at("uid-3"), "");
  }
  EXPECT_EQ(server.stats().claims_left_out, 4);
  EXPECT_EQ(server.stats().claims_unasked, 4);
}

TEST_F(DraPluginServerTest, ServesOnlyTheChosenVersions) {
  DraPluginServerOptions options = FastOptions();
  options.serve_v1beta1 = false;
  DraPluginServer& server = StartRegistered(options);
  EXPECT_THAT(server.supported_versions(), ElementsAre("v1.DRAPlugin"));

  EXPECT_THAT(kubelet_->Prepare("v1", kClaims), IsOk());
  EXPECT_THAT(kubelet_->Prepare("v1beta1", kClaims),
              StatusIs(absl::StatusCode::kUnimplemented));
}

TEST_F(DraPluginServerTest, AnOlderKubeletPicksV1beta1) {
  // Kubelets before 1.34 know v1beta1 (and v1alpha4) only.
  kubelet_ = std::make_unique<TestDraKubelet>(
      RegistryDir(), std::vector<std::string>{"v1beta1.DRAPlugin"});
  DraPluginServer& server = NewServer(FastOptions());
  ASSERT_THAT(server.Start(), IsOk());
  absl::StatusOr<DraPluginInfo> info = kubelet_->WaitForPlugin(kDriver, kWait);
  ASSERT_THAT(info, IsOk());
  EXPECT_EQ(info->chosen_service, "v1beta1.DRAPlugin");
  EXPECT_TRUE(server.registered());
}

TEST_F(DraPluginServerTest, RecordsARejectionByKubelet) {
  kubelet_ = std::make_unique<TestDraKubelet>(
      RegistryDir(), std::vector<std::string>{"v1.DRAPlugin"});
  DraPluginServerOptions options = FastOptions();
  options.serve_v1 = false;
  DraPluginServer& server = NewServer(options);
  ASSERT_THAT(server.Start(), IsOk());

  EXPECT_THAT(kubelet_->WaitForPlugin(kDriver, kWait),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("v1beta1.DRAPlugin")));
  EXPECT_FALSE(server.registered());
  const DraPluginStats stats = server.stats();
  EXPECT_EQ(stats.registrations_notified, 1);
  EXPECT_THAT(stats.last_registration_error,
              HasSubstr("are supported by the kubelet"));
}

TEST_F(DraPluginServerTest, WatchdogServesADeletedDraSocketAgain) {
  DraPluginServer& server = StartRegistered(FastOptions());
  ASSERT_TRUE(std::filesystem::remove(server.dra_socket_path()));

  ASSERT_TRUE(WaitFor(
      [&] {
        return server.stats().dra_serves == 2 &&
               std::filesystem::is_socket(server.dra_socket_path());
      },
      kWait));
  // Kubelet dials the same endpoint again; its registration still holds.
  EXPECT_THAT(kubelet_->Prepare("v1", kClaims), IsOk());
  EXPECT_TRUE(server.registered());
  EXPECT_EQ(server.stats().registration_serves, 1);
}

TEST_F(DraPluginServerTest, WatchdogServesADeletedRegistrationSocketAgain) {
  DraPluginServer& server = StartRegistered(FastOptions());
  ASSERT_TRUE(std::filesystem::remove(server.registration_socket_path()));

  ASSERT_TRUE(WaitFor(
      [&] {
        return server.stats().registration_serves == 2 &&
               std::filesystem::is_socket(server.registration_socket_path());
      },
      kWait));
  // A new registration socket is unknown to kubelet until it registers it.
  EXPECT_FALSE(server.registered());
  ASSERT_THAT(kubelet_->WaitForPlugin(kDriver, kWait), IsOk());
  EXPECT_TRUE(server.registered());
  EXPECT_EQ(server.stats().registrations_notified, 2);
  EXPECT_EQ(server.stats().dra_serves, 1);
}

TEST_F(DraPluginServerTest, WatchdogServesAReplacedSocketAgain) {
  DraPluginServer& server = StartRegistered(FastOptions());
  // Someone put a plain file where the DRA socket was.
  ASSERT_TRUE(std::filesystem::remove(server.dra_socket_path()));
  std::ofstream(server.dra_socket_path()) << "not a socket";

  ASSERT_TRUE(WaitFor(
      [&] {
        return std::filesystem::is_socket(server.dra_socket_path()) &&
               server.stats().dra_serves >= 2;
      },
      kWait));
  EXPECT_THAT(kubelet_->Prepare("v1beta1", kClaims), IsOk());
}

TEST_F(DraPluginServerTest, StopRemovesTheSocketsAndStartServesAgain) {
  DraPluginServer& server = StartRegistered(FastOptions());
  server.Stop();
  EXPECT_FALSE(std::filesystem::exists(server.dra_socket_path()));
  EXPECT_FALSE(std::filesystem::exists(server.registration_socket_path()));
  EXPECT_FALSE(server.registered());
  server.Stop();  // idempotent

  ASSERT_THAT(server.Start(), IsOk());
  ASSERT_THAT(kubelet_->WaitForPlugin(kDriver, kWait), IsOk());
  EXPECT_THAT(kubelet_->Prepare("v1", kClaims), IsOk());
  EXPECT_TRUE(server.registered());
  EXPECT_EQ(server.stats().registrations_notified, 2);
}

TEST_F(DraPluginServerTest, StartReplacesStaleFiles) {
  const DraPluginServerOptions options = FastOptions();
  std::filesystem::create_directories(PluginDir() + "/gpu.deviceshare.io");
  std::filesystem::create_directories(RegistryDir());
  DraPluginServer& server = NewServer(options);
  std::ofstream(server.dra_socket_path()) << "stale";
  std::ofstream(server.registration_socket_path()) << "stale";

  ASSERT_THAT(server.Start(), IsOk());
  EXPECT_TRUE(std::filesystem::is_socket(server.dra_socket_path()));
  EXPECT_TRUE(std::filesystem::is_socket(server.registration_socket_path()));
  EXPECT_THAT(kubelet_->WaitForPlugin(kDriver, kWait), IsOk());
}

TEST_F(DraPluginServerTest, StartTwiceIsAnError) {
  DraPluginServer& server = NewServer(FastOptions());
  ASSERT_THAT(server.Start(), IsOk());
  EXPECT_THAT(server.Start(), StatusIs(absl::StatusCode::kFailedPrecondition));
}

TEST_F(DraPluginServerTest, RejectsBadOptions) {
  auto start_with = [&](auto change) {
    DraPluginServerOptions options = FastOptions();
    change(options);
    return NewServer(options).Start();
  };
  EXPECT_THAT(
      start_with([](auto& o) { o.driver_name = ""; }),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("driver_name")));
  EXPECT_THAT(
      start_with([](auto& o) { o.driver_name = "GPU/x"; }),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"GPU/x\"")));
  EXPECT_THAT(start_with([](auto& o) {
                o.serve_v1 = false;
                o.serve_v1beta1 = false;
              }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("no API version")));
  EXPECT_THAT(
      start_with([](auto& o) { o.plugin_dir += std::string(100, 'x'); }),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("plugin_dir")));
  EXPECT_THAT(
      start_with([](auto& o) { o.watchdog_interval = absl::ZeroDuration(); }),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("watchdog_interval")));
  // Nothing was served.
  EXPECT_FALSE(std::filesystem::exists(RegistryDir()));
}

TEST_F(DraPluginServerTest, ManyCallsAtOnceAreAllAnswered) {
  DraPluginServer& server = StartRegistered(FastOptions());
  constexpr int kThreads = 6;
  constexpr int kCalls = 10;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        const std::string version = (t + i) % 2 == 0 ? "v1" : "v1beta1";
        const ClaimRef claim{"ns", absl::StrCat("uid-", t, "-", i), "c"};
        auto prepared = kubelet_->Prepare(version, {claim});
        if (!prepared.ok() ||
            prepared->at(claim.uid) != FakePreparer::PreparedFor(claim)) {
          ++failures;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(server.stats().prepare_calls, kThreads * kCalls);
}

TEST(DraPluginServerDefaultsTest, MatchTheKubeletLayout) {
  const DraPluginServerOptions options;
  EXPECT_EQ(options.driver_name, "gpu.deviceshare.io");
  EXPECT_EQ(options.plugin_dir, "/var/lib/kubelet/plugins");
  EXPECT_EQ(options.registry_dir, "/var/lib/kubelet/plugins_registry");
  EXPECT_TRUE(options.serve_v1);
  EXPECT_TRUE(options.serve_v1beta1);
  FakePreparer preparer;
  DraPluginServer server(options, &preparer);
  EXPECT_EQ(server.dra_socket_path(),
            "/var/lib/kubelet/plugins/gpu.deviceshare.io/dra.sock");
  EXPECT_EQ(server.registration_socket_path(),
            "/var/lib/kubelet/plugins_registry/gpu.deviceshare.io-reg.sock");
  EXPECT_THAT(server.supported_versions(),
              ElementsAre("v1.DRAPlugin", "v1beta1.DRAPlugin"));
}

}  // namespace
}  // namespace deviceshare::agent
