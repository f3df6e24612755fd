#include "deviceshare/kube/kube_config.h"

#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <map>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/input_text.h"
#include "testing/status_matchers.h"

namespace deviceshare::kube {
namespace {

using ::deviceshare::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kCertPem[] =
    "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
constexpr char kKeyPem[] =
    "-----BEGIN PRIVATE KEY-----\nMIIE\n-----END PRIVATE KEY-----\n";

class KubeConfigTest : public ::testing::Test {
 protected:
  KubeConfigTest() {
    std::string pattern =
        deviceshare::testing::ProcessTempFolder() + "/kubeconfig-XXXXXX";
    dir_ = mkdtemp(pattern.data());
  }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = absl::StrCat(dir_, "/", name);
    std::ofstream(path) << text;
    return path;
  }

  // A kubeconfig with one cluster "c", one context "ctx" (current) and the
  // user "u" given by `user_yaml` (indented for `user:`).
  std::string WriteConfig(const std::string& user_yaml,
                          const std::string& cluster_extra = "") {
    return Write("config", absl::StrCat(R"(apiVersion: v1
kind: Config
current-context: ctx
clusters:
- name: c
  cluster:
    server: https://10.0.0.1:6443
)",
                                        cluster_extra, R"(
contexts:
- name: ctx
  context:
    cluster: c
    user: u
    namespace: team-a
users:
- name: u
  user:
)",
                                        user_yaml));
  }

  std::string dir_;
};

TEST_F(KubeConfigTest, TokenAndNamespaceFromCurrentContext) {
  absl::StatusOr<KubeConfig> config =
      LoadKubeconfig(WriteConfig("    token: abc123\n"));
  ASSERT_OK(config);
  EXPECT_EQ(config->server, "https://10.0.0.1:6443");
  EXPECT_EQ(config->bearer_token, "abc123");
  EXPECT_EQ(config->default_namespace, "team-a");
  EXPECT_TRUE(config->token_file.empty());
  EXPECT_FALSE(config->insecure_skip_tls_verify);
}

TEST_F(KubeConfigTest, ClientCertificateAndCaFromData) {
  const std::string user = absl::StrCat(
      "    client-certificate-data: ", absl::Base64Escape(kCertPem),
      "\n    client-key-data: ", absl::Base64Escape(kKeyPem), "\n");
  const std::string cluster = absl::StrCat(
      "    certificate-authority-data: ", absl::Base64Escape(kCertPem), "\n");
  absl::StatusOr<KubeConfig> config =
      LoadKubeconfig(WriteConfig(user, cluster));
  ASSERT_OK(config);
  EXPECT_EQ(config->client_cert_pem, kCertPem);
  EXPECT_EQ(config->client_key_pem, kKeyPem);
  EXPECT_EQ(config->ca_pem, kCertPem);
}

TEST_F(KubeConfigTest, RelativeFilesResolveAgainstTheKubeconfigDirectory) {
  ASSERT_EQ(mkdir(absl::StrCat(dir_, "/pki").c_str(), 0700), 0);
  Write("pki/client.crt", kCertPem);
  Write("pki/client.key", kKeyPem);
  Write("pki/ca.crt", "ca");
  Write("pki/token", "file-token\n");
  const std::string user =
      "    client-certificate: pki/client.crt\n"
      "    client-key: pki/client.key\n"
      "    tokenFile: pki/token\n";
  absl::StatusOr<KubeConfig> config = LoadKubeconfig(
      WriteConfig(user, "    certificate-authority: pki/ca.crt\n"));
  ASSERT_OK(config);
  EXPECT_EQ(config->client_cert_pem, kCertPem);
  EXPECT_EQ(config->client_key_pem, kKeyPem);
  EXPECT_EQ(config->ca_pem, "ca");
  EXPECT_EQ(config->token_file, absl::StrCat(dir_, "/pki/token"));
}

TEST_F(KubeConfigTest, InsecureSkipTlsVerify) {
  absl::StatusOr<KubeConfig> config = LoadKubeconfig(
      WriteConfig("    token: t\n", "    insecure-skip-tls-verify: true\n"));
  ASSERT_OK(config);
  EXPECT_TRUE(config->insecure_skip_tls_verify);
}

TEST_F(KubeConfigTest, NamedContextWinsOverCurrentContext) {
  const std::string path = Write("config", R"(
current-context: a
clusters:
- {name: ca, cluster: {server: "https://a:6443"}}
- {name: cb, cluster: {server: "http://127.0.0.1:8080"}}
contexts:
- {name: a, context: {cluster: ca, user: ua}}
- {name: b, context: {cluster: cb, user: ub}}
users:
- {name: ua, user: {token: token-a}}
- {name: ub, user: {token: token-b}}
)");
  absl::StatusOr<KubeConfig> config = LoadKubeconfig(path, "b");
  ASSERT_OK(config);
  EXPECT_EQ(config->server, "http://127.0.0.1:8080");
  EXPECT_EQ(config->bearer_token, "token-b");
  EXPECT_EQ(config->default_namespace, "default");
}

TEST_F(KubeConfigTest, MissingCurrentContextIsAnError) {
  const std::string path = Write("config", R"(
clusters:
- {name: c, cluster: {server: "https://a:6443"}}
contexts:
- {name: a, context: {cluster: c}}
)");
  EXPECT_THAT(LoadKubeconfig(path),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr(path), HasSubstr("current-context"))));
  // Naming the context is enough; a context without a user has no auth.
  absl::StatusOr<KubeConfig> config = LoadKubeconfig(path, "a");
  ASSERT_OK(config);
  EXPECT_TRUE(config->bearer_token.empty());
}

TEST_F(KubeConfigTest, UnknownContextNamesTheOnesThereAre) {
  EXPECT_THAT(LoadKubeconfig(WriteConfig("    token: t\n"), "prod"),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("\"prod\""), HasSubstr("ctx"))));
}

TEST_F(KubeConfigTest, BadBase64NamesTheField) {
  const std::string path = WriteConfig(
      "    client-certificate-data: '%%%not base64'\n"
      "    client-key-data: aGk=\n");
  EXPECT_THAT(LoadKubeconfig(path),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(absl::StrCat(
                           "kubeconfig ", path,
                           ": users[0].user.client-certificate-data: not valid "
                           "base64"))));
}

TEST_F(KubeConfigTest, ExecPluginIsUnimplementedNamingTheUser) {
  const std::string user =
      "    exec:\n"
      "      apiVersion: client.authentication.k8s.io/v1\n"
      "      command: aws\n";
  EXPECT_THAT(LoadKubeconfig(WriteConfig(user)),
              StatusIs(absl::StatusCode::kUnimplemented,
                       AllOf(HasSubstr("users[0].user.exec"),
                             HasSubstr("user \"u\""))));
}

TEST_F(KubeConfigTest, CertificateWithoutKeyIsAnError) {
  EXPECT_THAT(
      LoadKubeconfig(WriteConfig(absl::StrCat(
          "    client-certificate-data: ", absl::Base64Escape(kCertPem),
          "\n"))),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("client-key")));
}

TEST_F(KubeConfigTest, MissingReferencedFileNamesFieldAndPath) {
  EXPECT_THAT(LoadKubeconfig(WriteConfig("    client-certificate: nope.crt\n"
                                         "    client-key: nope.key\n")),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("users[0].user.client-certificate"),
                             HasSubstr(absl::StrCat(dir_, "/nope.crt")))));
}

TEST_F(KubeConfigTest, ServerMustBeAnHttpUrl) {
  const std::string path = Write("config", R"(
current-context: a
clusters: [{name: c, cluster: {server: "10.0.0.1:6443"}}]
contexts: [{name: a, context: {cluster: c}}]
)");
  EXPECT_THAT(LoadKubeconfig(path),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("clusters[0].cluster.server"),
                             HasSubstr("\"10.0.0.1:6443\""))));
}

TEST_F(KubeConfigTest, MissingFileIsNotFound) {
  EXPECT_THAT(
      LoadKubeconfig(dir_ + "/absent"),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr(dir_ + "/absent")));
}

TEST_F(KubeConfigTest, MalformedYamlIsInvalidArgument) {
  EXPECT_THAT(
      LoadKubeconfig(Write("config", "clusters: [unclosed\n")),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("kubeconfig")));
  EXPECT_THAT(
      LoadKubeconfig(Write("config", "- just\n- a list\n")),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a mapping")));
}

class InClusterConfigTest : public KubeConfigTest {
 protected:
  InClusterSource Source() {
    InClusterSource source;
    source.service_account_dir = dir_;
    source.getenv = [this](const std::string& name) {
      auto it = env_.find(name);
      return it == env_.end() ? std::nullopt
                              : std::optional<std::string>(it->second);
    };
    return source;
  }

  std::map<std::string, std::string> env_ = {
      {"KUBERNETES_SERVICE_HOST", "10.96.0.1"},
      {"KUBERNETES_SERVICE_PORT", "443"}};
};

TEST_F(InClusterConfigTest, ReadsServiceAccountDirectory) {
  Write("token", "sa-token\n");
  Write("ca.crt", kCertPem);
  Write("namespace", "kube-system");
  absl::StatusOr<KubeConfig> config = InClusterConfig(Source());
  ASSERT_OK(config);
  EXPECT_EQ(config->server, "https://10.96.0.1:443");
  EXPECT_EQ(config->bearer_token, "sa-token");
  EXPECT_EQ(config->token_file, dir_ + "/token");
  EXPECT_EQ(config->ca_pem, kCertPem);
  EXPECT_EQ(config->default_namespace, "kube-system");
}

TEST_F(InClusterConfigTest, Ipv6HostIsBracketed) {
  Write("token", "t");
  Write("ca.crt", kCertPem);
  env_["KUBERNETES_SERVICE_HOST"] = "fd00::1";
  env_["KUBERNETES_SERVICE_PORT"] = "6443";
  absl::StatusOr<KubeConfig> config = InClusterConfig(Source());
  ASSERT_OK(config);
  EXPECT_EQ(config->server, "https://[fd00::1]:6443");
  EXPECT_EQ(config->default_namespace, "default");
}

TEST_F(InClusterConfigTest, OutsideAPodIsFailedPrecondition) {
  env_.erase("KUBERNETES_SERVICE_HOST");
  EXPECT_THAT(InClusterConfig(Source()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("KUBERNETES_SERVICE_HOST")));
}

TEST_F(InClusterConfigTest, BadPortAndMissingTokenAreErrors) {
  env_["KUBERNETES_SERVICE_PORT"] = "https";
  EXPECT_THAT(
      InClusterConfig(Source()),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"https\"")));
  env_["KUBERNETES_SERVICE_PORT"] = "443";
  EXPECT_THAT(InClusterConfig(Source()), StatusIs(absl::StatusCode::kNotFound,
                                                  HasSubstr(dir_ + "/token")));
}

}  // namespace
}  // namespace deviceshare::kube
