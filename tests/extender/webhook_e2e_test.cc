// End to end: a HAMi-dialect pod without a schedulerName goes through the
// admission webhook of the real `deviceshare-scheduler serve` (HTTPS, POST
// /webhook), the patch is applied as the API server would, and the same
// process then filters and binds the mutated pod against the in-memory API
// server (testing/fake_api_server.h).
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/codec/annotation_keys.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "testing/admission_answers.h"
#include "testing/fake_api_server.h"
#include "testing/kube_objects.h"
#include "testing/raw_connection.h"
#include "testing/server_process.h"
#include "testing/test_pki.h"
#include "testing/wait_for.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::FakeApiServer;
using ::deviceshare::testing::FreeLoopbackPort;
using ::deviceshare::testing::HamiNodeObject;
using ::deviceshare::testing::HamiPodObject;
using ::deviceshare::testing::ReadyClient;
using ::deviceshare::testing::SchedulerProcess;
using ::deviceshare::testing::TestPki;
using ::deviceshare::testing::WaitFor;
using nlohmann::json;
using ::testing::HasSubstr;

class WebhookE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat(
               "deviceshare-webhook-e2e-", getpid(), "-",
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    kubeconfig_ = api_.WriteKubeconfig(dir_.string());
    pki_ = ::deviceshare::testing::MakeTestPki("webhook-e2e-ca");
    cert_ = (dir_ / "tls.crt").string();
    key_ = (dir_ / "tls.key").string();
    std::ofstream(cert_) << pki_.server.cert_pem;
    std::ofstream(key_) << pki_.server.key_pem;
  }

  void TearDown() override {
    scheduler_.reset();
    std::filesystem::remove_all(dir_);
  }

  std::vector<std::string> Flags(int webhook_port) {
    return {"--kubeconfig",       kubeconfig_,
            "--address",          "127.0.0.1:0",
            "--webhook-port",     std::to_string(webhook_port),
            "--webhook-tls-cert", cert_,
            "--webhook-tls-key",  key_};
  }

  // POSTs `pod` in an AdmissionReview to the webhook; the response.
  json Review(int port, const json& pod) {
    httplib::SSLClient client("127.0.0.1", port);
    client.set_ca_cert_store(::deviceshare::testing::NewStoreWith(pki_.ca));
    client.enable_server_certificate_verification(true);
    auto answer = client.Post(
        "/webhook", ::deviceshare::testing::PodCreateReview(pod).dump(),
        "application/json");
    EXPECT_TRUE(answer) << "no answer; log:\n" << scheduler_->Log();
    if (!answer) return json();
    EXPECT_EQ(answer->status, 200) << answer->body;
    return json::parse(answer->body, nullptr, false)["response"];
  }

  FakeApiServer api_;
  std::filesystem::path dir_;
  std::string kubeconfig_;
  TestPki pki_;
  std::string cert_;
  std::string key_;
  std::unique_ptr<SchedulerProcess> scheduler_;
};

TEST_F(WebhookE2eTest, MutatedHamiPodIsFilteredAndBound) {
  api_.UpsertNode(HamiNodeObject({.name = "gpu-node", .gpus = 2}));
  // As a user writes it: gpumem only, no count, no schedulerName.
  json pod = HamiPodObject({.name = "train", .memory_mib = 3000});
  pod["spec"].erase("schedulerName");
  pod["spec"]["containers"][0]["resources"]["limits"].erase("nvidia.com/gpu");

  const int webhook_port = FreeLoopbackPort();
  ASSERT_GT(webhook_port, 0);
  scheduler_ = std::make_unique<SchedulerProcess>(DEVICESHARE_SCHEDULER_BIN,
                                                  Flags(webhook_port));
  ASSERT_TRUE(scheduler_->Start().ok()) << scheduler_->Log();
  EXPECT_THAT(scheduler_->Log(),
              HasSubstr(absl::StrCat("webhook address=127.0.0.1:", webhook_port,
                                     " https")));

  const json response = Review(webhook_port, pod);
  ASSERT_EQ(response["allowed"], true) << response.dump();
  ASSERT_EQ(response["patchType"], "JSONPatch");
  const json mutated = pod.patch(::deviceshare::testing::PatchOf(response));
  EXPECT_EQ(mutated["spec"]["schedulerName"], "deviceshare-scheduler");
  EXPECT_EQ(
      mutated["spec"]["containers"][0]["resources"]["limits"]["nvidia.com/gpu"],
      "1");
  api_.UpsertPod(mutated);

  // kube-scheduler's turn: filter, then bind to the node that passed.
  absl::StatusOr<std::unique_ptr<httplib::Client>> client =
      ReadyClient(*scheduler_);
  ASSERT_TRUE(client.ok()) << client.status();
  ASSERT_TRUE(WaitFor([&] {
    auto filtered =
        (*client)->Post("/filter",
                        json{{"Pod", *api_.GetPod("default", "train")},
                             {"NodeNames", {"gpu-node"}}}
                            .dump(),
                        "application/json");
    if (!filtered || filtered->status != 200) return false;
    const json result = json::parse(filtered->body);
    return result["NodeNames"] == json::array({"gpu-node"});
  })) << scheduler_->Log();
  auto bound = (*client)->Post("/bind",
                               json{{"PodName", "train"},
                                    {"PodNamespace", "default"},
                                    {"PodUID", "uid-train"},
                                    {"Node", "gpu-node"}}
                                   .dump(),
                               "application/json");
  ASSERT_TRUE(bound);
  EXPECT_EQ(json::parse(bound->body)["Error"], "") << bound->body;
  ASSERT_EQ(api_.Bindings().size(), 1u);
  EXPECT_EQ(api_.Bindings()[0]["target"]["name"], "gpu-node");
  const json annotations =
      (*api_.GetPod("default", "train"))["metadata"]["annotations"];
  EXPECT_THAT(annotations[keys::kHamiAllocated].get<std::string>(),
              HasSubstr(",3000,"));
}

TEST_F(WebhookE2eTest, WebhookFlagsAreCheckedNamingTheFlag) {
  SchedulerProcess no_cert(DEVICESHARE_SCHEDULER_BIN,
                           {"--kubeconfig", kubeconfig_, "--address",
                            "127.0.0.1:0", "--webhook-port", "9443"});
  EXPECT_FALSE(no_cert.Start(absl::Seconds(3)).ok());
  EXPECT_THAT(no_cert.Log(),
              HasSubstr("--webhook-tls-cert: required with --webhook-port"));
  SchedulerProcess no_key(
      DEVICESHARE_SCHEDULER_BIN,
      {"--kubeconfig", kubeconfig_, "--address", "127.0.0.1:0",
       "--webhook-port", "9443", "--webhook-tls-cert", cert_});
  EXPECT_FALSE(no_key.Start(absl::Seconds(3)).ok());
  EXPECT_THAT(no_key.Log(),
              HasSubstr("--webhook-tls-key: required with --webhook-port"));
  SchedulerProcess bad_pair(
      DEVICESHARE_SCHEDULER_BIN,
      {"--kubeconfig", kubeconfig_, "--address", "127.0.0.1:0",
       "--webhook-port", "9443", "--webhook-tls-cert", cert_,
       "--webhook-tls-key", cert_});
  EXPECT_FALSE(bad_pair.Start(absl::Seconds(3)).ok());
  EXPECT_THAT(bad_pair.Log(), HasSubstr("--webhook-tls-key"));
}

}  // namespace
}  // namespace deviceshare
