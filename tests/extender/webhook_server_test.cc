// The admission webhook's HTTPS listener (extender/webhook_server.h) in
// process: an AdmissionReview POST answered, bad bodies answered 400, and
// the certificate files replaced under a running server -- a new
// connection sees the new certificate, a bad new pair keeps the old one.
#include "deviceshare/extender/webhook_server.h"

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "testing/admission_answers.h"
#include "testing/test_pki.h"

namespace deviceshare::extender {
namespace {

using ::deviceshare::testing::MakeTestPki;
using ::deviceshare::testing::NewStoreWith;
using ::deviceshare::testing::TestPki;
using nlohmann::json;
using ::testing::HasSubstr;

constexpr char kReview[] = R"({
  "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
  "request": {
    "uid": "7f2c", "operation": "CREATE",
    "kind": {"group": "", "version": "v1", "kind": "Pod"},
    "object": {"apiVersion": "v1", "kind": "Pod",
      "metadata": {"name": "a", "namespace": "default"},
      "spec": {"containers": [{"name": "main",
        "resources": {"limits": {"nvidia.com/gpumem": "2000"}}}]}}}})";

class WebhookServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat(
               "deviceshare-webhook-", getpid(), "-",
               ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
    cert_ = (dir_ / "tls.crt").string();
    key_ = (dir_ / "tls.key").string();
  }

  void TearDown() override {
    if (server_ != nullptr) server_->Stop();
    std::filesystem::remove_all(dir_);
  }

  // Writes both files next to their final names and renames them into
  // place, as a Secret volume's update swaps them.
  void WritePair(const std::string& cert_pem, const std::string& key_pem) {
    for (const auto& [path, text] :
         {std::pair{cert_, cert_pem}, std::pair{key_, key_pem}}) {
      const std::string staged = path + ".new";
      std::ofstream(staged) << text;
      std::filesystem::rename(staged, path);
    }
  }

  void StartServer(std::chrono::milliseconds reload_check) {
    WebhookOptions options;
    options.host = "127.0.0.1";
    options.port = 0;
    options.tls_cert_file = cert_;
    options.tls_key_file = key_;
    options.reload_check_interval = reload_check;
    absl::StatusOr<std::unique_ptr<WebhookServer>> server =
        WebhookServer::Create(admission::AdmissionSettings{}, options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    server_->Start();
  }

  // A new connection trusting only `pki`'s CA.
  std::unique_ptr<httplib::SSLClient> ClientTrusting(const TestPki& pki) {
    auto client =
        std::make_unique<httplib::SSLClient>("127.0.0.1", server_->port());
    client->set_ca_cert_store(NewStoreWith(pki.ca));
    client->enable_server_certificate_verification(true);
    client->set_connection_timeout(5, 0);
    client->set_read_timeout(5, 0);
    return client;
  }

  // Whether a fresh connection trusting `pki`'s CA gets /healthz.
  bool Trusts(const TestPki& pki) {
    auto answer = ClientTrusting(pki)->Get("/healthz");
    return answer && answer->status == 200;
  }

  std::filesystem::path dir_;
  std::string cert_;
  std::string key_;
  std::unique_ptr<WebhookServer> server_;
};

TEST_F(WebhookServerTest, AnswersAnAdmissionReview) {
  const TestPki pki = MakeTestPki("webhook-ca");
  WritePair(pki.server.cert_pem, pki.server.key_pem);
  StartServer(std::chrono::seconds(1));
  auto answer =
      ClientTrusting(pki)->Post("/webhook", kReview, "application/json");
  ASSERT_TRUE(answer) << httplib::to_string(answer.error());
  ASSERT_EQ(answer->status, 200) << answer->body;
  const json response = json::parse(answer->body)["response"];
  EXPECT_EQ(response["uid"], "7f2c");
  EXPECT_EQ(response["allowed"], true);
  EXPECT_EQ(response["patchType"], "JSONPatch");
  EXPECT_EQ(::deviceshare::testing::PatchOf(response), json::parse(R"([
    {"op":"add","path":"/spec/containers/0/resources/limits/nvidia.com~1gpu",
     "value":"1"},
    {"op":"add","path":"/spec/schedulerName",
     "value":"deviceshare-scheduler"}])"));
}

TEST_F(WebhookServerTest, BadBodiesGet400NamingTheField) {
  const TestPki pki = MakeTestPki("webhook-ca");
  WritePair(pki.server.cert_pem, pki.server.key_pem);
  StartServer(std::chrono::seconds(1));
  auto client = ClientTrusting(pki);
  const std::pair<std::string, std::string> cases[] = {
      {"garbage", "body: not JSON"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview"})",
       "request: missing or not an object"},
      {R"({"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview",)"
       R"("request":{}})",
       "request.uid: missing"},
  };
  for (const auto& [body, message] : cases) {
    auto answer = client->Post("/webhook", body, "application/json");
    ASSERT_TRUE(answer) << body;
    EXPECT_EQ(answer->status, 400) << body;
    EXPECT_THAT(answer->body, HasSubstr(message));
  }
  // The server still serves.
  auto answer = client->Post("/webhook", kReview, "application/json");
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->status, 200);
}

TEST_F(WebhookServerTest, NewConnectionsSeeAReplacedCertificate) {
  const TestPki first = MakeTestPki("webhook-ca-1");
  const TestPki second = MakeTestPki("webhook-ca-2");
  WritePair(first.server.cert_pem, first.server.key_pem);
  StartServer(std::chrono::milliseconds(0));
  ASSERT_TRUE(Trusts(first));
  ASSERT_FALSE(Trusts(second));

  WritePair(second.server.cert_pem, second.server.key_pem);
  EXPECT_TRUE(Trusts(second));
  EXPECT_FALSE(Trusts(first));

  // A pair whose key is not the certificate's keeps the one in use.
  WritePair(first.server.cert_pem, second.server.key_pem);
  EXPECT_TRUE(Trusts(second));
  // Not PEM at all: the same.
  WritePair("not a certificate", "not a key");
  EXPECT_TRUE(Trusts(second));
  // Then a good pair again is taken.
  WritePair(first.server.cert_pem, first.server.key_pem);
  EXPECT_TRUE(Trusts(first));
}

// The files are looked at no more than once per interval: a change shows
// on a new connection only once the interval has passed.
TEST_F(WebhookServerTest, FilesAreCheckedAtMostOncePerInterval) {
  const TestPki first = MakeTestPki("webhook-ca-1");
  const TestPki second = MakeTestPki("webhook-ca-2");
  WritePair(first.server.cert_pem, first.server.key_pem);
  StartServer(std::chrono::seconds(2));
  WritePair(second.server.cert_pem, second.server.key_pem);
  // Started under the interval ago: the old pair still serves.
  EXPECT_TRUE(Trusts(first));
  std::this_thread::sleep_for(std::chrono::milliseconds(2100));
  EXPECT_TRUE(Trusts(second));
}

TEST_F(WebhookServerTest, MissingOrUnusableCertificateIsRefusedNamingTheFlag) {
  WebhookOptions options;
  options.host = "127.0.0.1";
  options.port = 0;
  absl::StatusOr<std::unique_ptr<WebhookServer>> server =
      WebhookServer::Create(admission::AdmissionSettings{}, options);
  EXPECT_THAT(server.status().message(), HasSubstr("--webhook-tls-cert"));
  const TestPki pki = MakeTestPki("webhook-ca");
  WritePair(pki.server.cert_pem, "not a key");
  options.tls_cert_file = cert_;
  options.tls_key_file = key_;
  server = WebhookServer::Create(admission::AdmissionSettings{}, options);
  EXPECT_THAT(server.status().message(),
              HasSubstr("--webhook-tls-cert / --webhook-tls-key"));
}

}  // namespace
}  // namespace deviceshare::extender
