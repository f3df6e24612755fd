// The real `deviceshare-scheduler serve` against clients that hold its
// connections without finishing a request: slow header tricklers and idle
// connections must not keep kube-scheduler's calls or the API server's
// AdmissionReviews from being answered; a full listener makes room; with
// --tls-client-ca only a client with a certificate that CA signed is
// served the verbs (the probes need none). Each of these stalled or let anyone
// in before the listeners became event-driven (cpp-httplib gave each connection
// one of 8 threads).
//
// The bounds below (a few seconds for an answer the server gives in
// milliseconds, against the 30 s a stalled server took) tell a served
// request from a stalled one; they measure nothing.
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "testing/admission_answers.h"
#include "testing/fake_api_server.h"
#include "testing/kube_objects.h"
#include "testing/raw_connection.h"
#include "testing/server_process.h"
#include "testing/temp_folder.h"
#include "testing/test_pki.h"
#include "testing/wait_for.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::FakeApiServer;
using ::deviceshare::testing::FreeLoopbackPort;
using ::deviceshare::testing::HamiNodeObject;
using ::deviceshare::testing::HamiPodObject;
using ::deviceshare::testing::MakeTestPki;
using ::deviceshare::testing::NewStoreWith;
using ::deviceshare::testing::PodCreateReview;
using ::deviceshare::testing::RawConnection;
using ::deviceshare::testing::SchedulerProcess;
using ::deviceshare::testing::TempFolder;
using ::deviceshare::testing::TestPki;
using ::deviceshare::testing::WaitFor;
using nlohmann::json;
using ::testing::HasSubstr;

// Long enough for a loaded CI machine, far below the 30 s a stalled
// listener held a request.
constexpr int kAnswerSeconds = 5;

class HostileClientsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_.UpsertNode(HamiNodeObject({.name = "n", .gpus = 1}));
    api_.UpsertPod(HamiPodObject({.name = "p", .memory_mib = 1000}));
    kubeconfig_ = api_.WriteKubeconfig(dir_.path());
    pki_ = MakeTestPki("hostile-clients-ca");
    cert_ = dir_.File("tls.crt");
    key_ = dir_.File("tls.key");
    ca_ = dir_.File("ca.crt");
    client_cert_ = dir_.File("client.crt");
    client_key_ = dir_.File("client.key");
    std::ofstream(cert_) << pki_.server.cert_pem;
    std::ofstream(key_) << pki_.server.key_pem;
    std::ofstream(ca_) << pki_.ca.cert_pem;
    std::ofstream(client_cert_) << pki_.client.cert_pem;
    std::ofstream(client_key_) << pki_.client.key_pem;
  }

  void StartServe(std::vector<std::string> extra) {
    std::vector<std::string> flags = {"--kubeconfig", kubeconfig_, "--address",
                                      "127.0.0.1:0"};
    flags.insert(flags.end(), extra.begin(), extra.end());
    scheduler_ = std::make_unique<SchedulerProcess>(DEVICESHARE_SCHEDULER_BIN,
                                                    std::move(flags));
    ASSERT_TRUE(scheduler_->Start().ok()) << scheduler_->Log();
  }

  // Until /readyz answers 200 (the first lists are in), over `client`.
  template <typename Client>
  void WaitUntilReady(Client& client) {
    const bool ready = WaitFor(
        [&] {
          auto answer = client.Get("/readyz");
          return answer && answer->status == 200;
        },
        absl::Seconds(10));
    ASSERT_TRUE(ready) << scheduler_->Log();
  }

  std::unique_ptr<httplib::Client> Client() {
    auto client =
        std::make_unique<httplib::Client>("127.0.0.1", scheduler_->port());
    client->set_connection_timeout(kAnswerSeconds, 0);
    client->set_read_timeout(kAnswerSeconds, 0);
    client->set_write_timeout(kAnswerSeconds, 0);
    return client;
  }

  std::string FilterArgs() {
    return json{{"Pod", *api_.GetPod("default", "p")}, {"NodeNames", {"n"}}}
        .dump();
  }

  // Connections that each sent the start of a request header and no more.
  std::vector<std::unique_ptr<RawConnection>> Tricklers(int port, int count) {
    std::vector<std::unique_ptr<RawConnection>> held;
    for (int i = 0; i < count; ++i) {
      held.push_back(std::make_unique<RawConnection>(port));
      EXPECT_TRUE(held.back()->connected());
      EXPECT_TRUE(held.back()->Send("P"));
    }
    return held;
  }

  // Connections that connected and sent nothing.
  std::vector<std::unique_ptr<RawConnection>> Idlers(int port, int count) {
    std::vector<std::unique_ptr<RawConnection>> held;
    for (int i = 0; i < count; ++i) {
      held.push_back(std::make_unique<RawConnection>(port));
      EXPECT_TRUE(held.back()->connected());
    }
    return held;
  }

  TempFolder dir_;
  FakeApiServer api_;
  std::string kubeconfig_;
  TestPki pki_;
  std::string cert_, key_, ca_, client_cert_, client_key_;
  std::unique_ptr<SchedulerProcess> scheduler_;
};

TEST_F(HostileClientsTest, SlowHeadersDoNotStallTheExtender) {
  StartServe({});
  // Twice the old listener's threads, each holding a header open.
  auto client = Client();
  WaitUntilReady(*client);
  auto held = Tricklers(scheduler_->port(), 16);
  auto health = client->Get("/healthz");
  ASSERT_TRUE(health) << "no answer: " << httplib::to_string(health.error())
                      << "\n"
                      << scheduler_->Log();
  EXPECT_EQ(health->status, 200);
  auto filtered = client->Post("/filter", FilterArgs(), "application/json");
  ASSERT_TRUE(filtered) << httplib::to_string(filtered.error());
  EXPECT_EQ(filtered->status, 200);
  EXPECT_EQ(json::parse(filtered->body)["NodeNames"], json({"n"}))
      << filtered->body;
  for (auto& connection : held) EXPECT_TRUE(connection->Send("O"));
}

TEST_F(HostileClientsTest, IdleConnectionsDoNotStallTheWebhook) {
  const int webhook_port = FreeLoopbackPort();
  ASSERT_GT(webhook_port, 0);
  StartServe({"--webhook-port", std::to_string(webhook_port),
              "--webhook-tls-cert", cert_, "--webhook-tls-key", key_});
  auto held = Idlers(webhook_port, 60);
  httplib::SSLClient client("127.0.0.1", webhook_port);
  client.set_ca_cert_store(NewStoreWith(pki_.ca));
  client.enable_server_certificate_verification(true);
  client.set_connection_timeout(kAnswerSeconds, 0);
  client.set_read_timeout(kAnswerSeconds, 0);
  const json review =
      PodCreateReview(HamiPodObject({.name = "q", .memory_mib = 1000}));
  auto answer = client.Post("/webhook", review.dump(), "application/json");
  ASSERT_TRUE(answer) << "no answer: " << httplib::to_string(answer.error())
                      << "\n"
                      << scheduler_->Log();
  EXPECT_EQ(answer->status, 200) << answer->body;
  EXPECT_EQ(json::parse(answer->body)["response"]["allowed"], true)
      << answer->body;
}

TEST_F(HostileClientsTest, AFullListenerClosesTheLongestWaitingConnection) {
  StartServe({"--max-connections", "4"});
  auto held = Idlers(scheduler_->port(), 4);
  auto client = Client();
  auto health = client->Get("/healthz");
  ASSERT_TRUE(health) << "no answer: " << httplib::to_string(health.error());
  EXPECT_EQ(health->status, 200);
  // The first idle connection made room.
  EXPECT_TRUE(held.front()->ClosedByPeer(kAnswerSeconds * 1000));
  auto metrics = client->Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_THAT(metrics->body, HasSubstr("deviceshare_extender_connections_"
                                       "closed_total{reason=\"evicted\"} "));
  EXPECT_THAT(
      metrics->body,
      ::testing::Not(HasSubstr(
          "deviceshare_extender_connections_closed_total{reason=\"evicted\"} "
          "0\n")));
}

TEST_F(HostileClientsTest, OnlyAClientWithTheCertificateIsServedTheVerbs) {
  StartServe({"--tls-cert", cert_, "--tls-key", key_, "--tls-client-ca", ca_});
  {
    // As the kubelet's probes call: no client certificate.
    httplib::SSLClient anonymous("127.0.0.1", scheduler_->port());
    anonymous.set_ca_cert_store(NewStoreWith(pki_.ca));
    anonymous.enable_server_certificate_verification(true);
    anonymous.set_connection_timeout(kAnswerSeconds, 0);
    anonymous.set_read_timeout(kAnswerSeconds, 0);
    WaitUntilReady(anonymous);
    for (const char* verb : {"/filter", "/prioritize", "/bind", "/preempt"}) {
      auto refused = anonymous.Post(verb, FilterArgs(), "application/json");
      ASSERT_TRUE(refused) << verb;
      EXPECT_EQ(refused->status, 403) << verb << ": " << refused->body;
    }
  }
  {
    // A certificate of another CA does not get through the handshake.
    const TestPki stranger = MakeTestPki("stranger-ca");
    const std::string cert = dir_.File("stranger.crt");
    const std::string key = dir_.File("stranger.key");
    std::ofstream(cert) << stranger.client.cert_pem;
    std::ofstream(key) << stranger.client.key_pem;
    httplib::SSLClient impostor("127.0.0.1", scheduler_->port(), cert, key);
    impostor.set_ca_cert_store(NewStoreWith(pki_.ca));
    impostor.enable_server_certificate_verification(true);
    impostor.set_connection_timeout(kAnswerSeconds, 0);
    impostor.set_read_timeout(kAnswerSeconds, 0);
    auto refused = impostor.Post("/filter", FilterArgs(), "application/json");
    EXPECT_FALSE(refused) << "a stranger's certificate got " << refused->status;
  }
  httplib::SSLClient scheduler("127.0.0.1", scheduler_->port(), client_cert_,
                               client_key_);
  scheduler.set_ca_cert_store(NewStoreWith(pki_.ca));
  scheduler.enable_server_certificate_verification(true);
  scheduler.set_connection_timeout(kAnswerSeconds, 0);
  scheduler.set_read_timeout(kAnswerSeconds, 0);
  auto filtered = scheduler.Post("/filter", FilterArgs(), "application/json");
  ASSERT_TRUE(filtered) << httplib::to_string(filtered.error()) << "\n"
                        << scheduler_->Log();
  EXPECT_EQ(filtered->status, 200);
  EXPECT_EQ(json::parse(filtered->body)["NodeNames"], json({"n"}))
      << filtered->body;
}

TEST_F(HostileClientsTest, AClientCaWithoutTlsIsAFlagError) {
  SchedulerProcess serve(DEVICESHARE_SCHEDULER_BIN,
                         {"--kubeconfig", kubeconfig_, "--address",
                          "127.0.0.1:0", "--tls-client-ca", ca_});
  EXPECT_FALSE(serve.Start().ok());
  EXPECT_THAT(serve.Log(),
              HasSubstr("--tls-client-ca: needs --tls-cert and --tls-key"));
}

TEST_F(HostileClientsTest, AnUnreadableClientCaIsNamed) {
  SchedulerProcess serve(
      DEVICESHARE_SCHEDULER_BIN,
      {"--kubeconfig", kubeconfig_, "--address", "127.0.0.1:0", "--tls-cert",
       cert_, "--tls-key", key_, "--tls-client-ca", dir_.File("missing.crt")});
  EXPECT_FALSE(serve.Start().ok());
  EXPECT_THAT(serve.Log(), HasSubstr("--tls-client-ca "));
  EXPECT_THAT(serve.Log(),
              HasSubstr("not a readable PEM bundle of CA certificates"));
}

}  // namespace
}  // namespace deviceshare
