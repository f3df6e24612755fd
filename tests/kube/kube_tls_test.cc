// ApiClient over HTTPS against an in-process httplib::SSLServer with
// certificates made by testing/test_pki.h.
#include <httplib.h>

#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "deviceshare/kube/api_client.h"
#include "deviceshare/kube/object_paths.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"
#include "testing/test_pki.h"
#include "testing/wait_for.h"

namespace deviceshare::kube {
namespace {

using ::deviceshare::testing::MakeTestPki;
using ::deviceshare::testing::NewStoreWith;
using ::deviceshare::testing::StatusIs;
using ::deviceshare::testing::TestPki;
using ::deviceshare::testing::WaitFor;
using nlohmann::json;
using ::testing::HasSubstr;

// Answers GET /api/v1/nodes over TLS with the PKI's server certificate;
// with `require_client_cert`, only to clients with a certificate of the CA.
class TlsServer {
 public:
  TlsServer(const TestPki& pki, bool require_client_cert)
      : server_(pki.server.cert.get(), pki.server.key.get(),
                require_client_cert ? NewStoreWith(pki.ca) : nullptr) {
    EXPECT_TRUE(server_.is_valid());
    server_.Get("/api/v1/nodes", [](const httplib::Request& req,
                                    httplib::Response& res) {
      res.set_content(json({{"kind", "NodeList"},
                            {"auth", req.get_header_value("Authorization")}})
                          .dump(),
                      "application/json");
    });
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    EXPECT_TRUE(WaitFor([this] { return server_.is_running(); }));
  }
  ~TlsServer() {
    server_.stop();
    thread_.join();
  }
  std::string url() const { return absl::StrCat("https://127.0.0.1:", port_); }

 private:
  httplib::SSLServer server_;
  std::thread thread_;
  int port_ = 0;
};

class ApiClientTlsTest : public ::testing::Test {
 protected:
  absl::StatusOr<json> GetNodes(const KubeConfig& config) {
    absl::StatusOr<std::unique_ptr<ApiClient>> client =
        ApiClient::Create(config);
    if (!client.ok()) return client.status();
    return (*client)->Get(NodesPath());
  }

  TestPki pki_ = MakeTestPki("deviceshare test CA");
};

TEST_F(ApiClientTlsTest, TrustsTheConfiguredCa) {
  TlsServer server(pki_, /*require_client_cert=*/false);
  absl::StatusOr<json> nodes = GetNodes({.server = server.url(),
                                         .bearer_token = "t",
                                         .ca_pem = pki_.ca.cert_pem});
  ASSERT_OK(nodes);
  EXPECT_EQ((*nodes)["kind"], "NodeList");
  EXPECT_EQ((*nodes)["auth"], "Bearer t");
}

TEST_F(ApiClientTlsTest, RejectsAServerSignedByAnotherCa) {
  TlsServer server(pki_, /*require_client_cert=*/false);
  const TestPki other = MakeTestPki("some other CA");
  EXPECT_THAT(
      GetNodes({.server = server.url(), .ca_pem = other.ca.cert_pem}),
      StatusIs(absl::StatusCode::kUnavailable, HasSubstr("not trusted")));
}

TEST_F(ApiClientTlsTest, RejectsAnUnknownCaWithoutConfiguredCa) {
  TlsServer server(pki_, /*require_client_cert=*/false);
  EXPECT_THAT(GetNodes({.server = server.url()}),
              StatusIs(absl::StatusCode::kUnavailable));
}

TEST_F(ApiClientTlsTest, InsecureSkipsVerification) {
  TlsServer server(pki_, /*require_client_cert=*/false);
  const TestPki other = MakeTestPki("some other CA");
  EXPECT_OK(GetNodes({.server = server.url(),
                      .ca_pem = other.ca.cert_pem,
                      .insecure_skip_tls_verify = true}));
}

TEST_F(ApiClientTlsTest, PresentsTheClientCertificate) {
  TlsServer server(pki_, /*require_client_cert=*/true);
  EXPECT_THAT(GetNodes({.server = server.url(), .ca_pem = pki_.ca.cert_pem}),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_OK(GetNodes({.server = server.url(),
                      .ca_pem = pki_.ca.cert_pem,
                      .client_cert_pem = pki_.client.cert_pem,
                      .client_key_pem = pki_.client.key_pem}));
}

TEST_F(ApiClientTlsTest, KeyOfAnotherCertificateIsRejectedAtCreate) {
  EXPECT_THAT(ApiClient::Create({.server = "https://127.0.0.1:1",
                                 .client_cert_pem = pki_.client.cert_pem,
                                 .client_key_pem = pki_.server.key_pem}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("does not match")));
  EXPECT_THAT(
      ApiClient::Create({.server = "https://127.0.0.1:1",
                         .client_cert_pem = pki_.client.cert_pem,
                         .client_key_pem = "-----BEGIN PRIVATE KEY"}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("client key")));
}

}  // namespace
}  // namespace deviceshare::kube
