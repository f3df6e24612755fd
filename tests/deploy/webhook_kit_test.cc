// deploy: the admission webhook's part of the kit -- webhook.yaml, the
// Service port and container port it calls, the serve flags and the
// certificate's mount agree; its matchConditions name exactly the GPU
// resources the webhook's decision reads; and deploy/certs.sh writes
// a CA, a serving certificate and an overlay that carries them (run in a
// temporary folder, no cluster).
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/codec/yaml_json.h"
#include "deviceshare/config/device_config.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/whole_file.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::ReadWholeFile;

using ::nlohmann::json;
using ::testing::Contains;
using ::testing::HasSubstr;

const std::filesystem::path kDeployDir =
    std::filesystem::path(DEVICESHARE_DEPLOY_DIR);

// The one document of `file` whose kind is `kind`.
json Document(const std::string& file, const std::string& kind) {
  auto documents = ParseYamlDocuments(ReadWholeFile(kDeployDir / file));
  EXPECT_TRUE(documents.ok()) << file << ": " << documents.status();
  if (!documents.ok()) return json();
  for (json& document : *documents) {
    if (document["kind"] == kind) return document;
  }
  ADD_FAILURE() << "no " << kind << " in " << file;
  return json();
}

json SchedulerContainer() {
  const json deployment = Document("deployment.yaml", "Deployment");
  for (const json& c : deployment["spec"]["template"]["spec"]["containers"]) {
    if (c["name"] == "deviceshare-scheduler") return c;
  }
  ADD_FAILURE() << "no container deviceshare-scheduler";
  return json();
}

// The value after `flag` in the container's args.
std::string FlagValue(const json& container, const std::string& flag) {
  const std::vector<std::string> args = container["args"];
  for (size_t i = 0; i + 1 < args.size(); ++i) {
    if (args[i] == flag) return args[i + 1];
  }
  ADD_FAILURE() << flag << " not in the serve args";
  return "";
}

TEST(WebhookKitTest, WebhookServiceAndContainerAgree) {
  const json webhook = Document("webhook.yaml", "MutatingWebhookConfiguration");
  ASSERT_EQ(webhook["webhooks"].size(), 1u);
  const json& hook = webhook["webhooks"][0];
  EXPECT_EQ(hook["clientConfig"]["service"],
            json::parse(R"({"name":"deviceshare-scheduler",
                            "namespace":"kube-system","path":"/webhook",
                            "port":443})"));
  EXPECT_EQ(hook["admissionReviewVersions"], json::array({"v1"}));
  EXPECT_EQ(hook["rules"][0]["operations"], json::array({"CREATE"}));
  EXPECT_EQ(hook["rules"][0]["resources"], json::array({"pods"}));

  const json service = Document("service.yaml", "Service");
  EXPECT_EQ(service["metadata"]["name"], "deviceshare-scheduler");
  EXPECT_EQ(service["metadata"]["namespace"], "kube-system");
  json webhook_port;
  for (const json& port : service["spec"]["ports"]) {
    if (port["port"] == 443) webhook_port = port;
  }
  ASSERT_TRUE(webhook_port.is_object()) << "no Service port 443";
  EXPECT_EQ(webhook_port["targetPort"], "webhook");

  const json container = SchedulerContainer();
  EXPECT_THAT(container["ports"],
              Contains(json{{"name", "webhook"}, {"containerPort", 9443}}));
  EXPECT_EQ(FlagValue(container, "--webhook-port"), "9443");
  EXPECT_EQ(FlagValue(container, "--scheduler-name"), "deviceshare-scheduler");

  // The certificate files lie in the mount of the Secret the script makes.
  const json pod =
      Document("deployment.yaml", "Deployment")["spec"]["template"]["spec"];
  std::string volume;
  for (const json& v : pod["volumes"]) {
    if (v.contains("secret") &&
        v["secret"]["secretName"] == "deviceshare-scheduler-tls") {
      volume = v["name"];
    }
  }
  ASSERT_FALSE(volume.empty()) << "no volume of the webhook Secret";
  std::string mount_path;
  for (const json& mount : container["volumeMounts"]) {
    if (mount["name"] == volume) mount_path = mount["mountPath"];
  }
  EXPECT_EQ(FlagValue(container, "--webhook-tls-cert"),
            mount_path + "/tls.crt");
  EXPECT_EQ(FlagValue(container, "--webhook-tls-key"), mount_path + "/tls.key");

  const json kustomization = Document("kustomization.yaml", "Kustomization");
  EXPECT_THAT(kustomization["resources"], Contains("webhook.yaml"));
}

// Fail is safe only with the narrowing around it (webhook.yaml's comment).
TEST(WebhookKitTest, FailurePolicyFailIsNarrowedToGpuPodsOutsideKubeSystem) {
  const json hook =
      Document("webhook.yaml", "MutatingWebhookConfiguration")["webhooks"][0];
  EXPECT_EQ(hook["failurePolicy"], "Fail");
  EXPECT_EQ(hook["sideEffects"], "None");
  EXPECT_EQ(hook["namespaceSelector"]["matchExpressions"][0],
            json::parse(R"({"key":"kubernetes.io/metadata.name",
                            "operator":"NotIn","values":["kube-system"]})"));
  ASSERT_EQ(hook["matchConditions"].size(), 1u);
}

// The CEL names each GPU resource the webhook reads, in limits and in
// requests (twice each), and no other resource.
TEST(WebhookKitTest, MatchConditionNamesTheWebhooksResources) {
  const std::string expression =
      Document("webhook.yaml",
               "MutatingWebhookConfiguration")["webhooks"][0]["matchConditions"]
                                              [0]["expression"];
  const DeviceConfig defaults;
  const std::vector<std::string> names = {
      defaults.resource_count_name,
      defaults.resource_memory_name,
      defaults.resource_memory_percentage_name,
      defaults.resource_core_name,
      keys::kVolcanoGpuNumber,
      keys::kVolcanoGpuMemory,
      keys::kVolcanoGpuMemoryPercentage,
      keys::kVolcanoGpuCores};
  size_t quoted = 0;
  for (size_t at = expression.find('\''); at != std::string::npos;
       at = expression.find('\'', at + 1)) {
    ++quoted;
  }
  EXPECT_EQ(quoted, 2 * 2 * names.size()) << expression;
  for (const std::string& name : names) {
    const std::string literal = "'" + name + "'";
    const size_t first = expression.find(literal);
    ASSERT_NE(first, std::string::npos) << name;
    EXPECT_NE(expression.find(literal, first + 1), std::string::npos) << name;
  }
  EXPECT_THAT(expression, HasSubstr("c.resources.limits.exists"));
  EXPECT_THAT(expression, HasSubstr("c.resources.requests.exists"));
  EXPECT_THAT(expression, HasSubstr("object.spec.initContainers"));
}

std::shared_ptr<X509> ReadCertificate(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  return std::shared_ptr<X509>(cert, X509_free);
}

class CertsScriptTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (std::system("command -v openssl >/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "openssl not installed";
    }
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat("deviceshare-certs-", getpid());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  int RunScript() {
    const std::string command =
        absl::StrCat("bash '", (kDeployDir / "certs.sh").string(), "' '",
                     (dir_ / "out").string(), "' >/dev/null 2>&1");
    return std::system(command.c_str());
  }

  std::string Out(const std::string& file) {
    return ReadWholeFile(dir_ / "out" / file);
  }

  std::filesystem::path dir_;
};

TEST_F(CertsScriptTest, WritesCertificatesSecretAndOverlay) {
  ASSERT_EQ(RunScript(), 0);
  const std::string ca_pem = Out("ca.crt");
  const std::string tls_pem = Out("tls.crt");
  std::shared_ptr<X509> ca = ReadCertificate(ca_pem);
  std::shared_ptr<X509> tls = ReadCertificate(tls_pem);
  ASSERT_TRUE(ca && tls);
  EVP_PKEY* ca_key = X509_get0_pubkey(ca.get());
  EXPECT_EQ(X509_verify(tls.get(), ca_key), 1) << "not signed by the CA";
  const std::string host = "deviceshare-scheduler.kube-system.svc";
  EXPECT_EQ(X509_check_host(tls.get(), host.data(), host.size(), 0, nullptr),
            1);

  // kube-scheduler's client certificate: the same CA, for clientAuth only.
  const std::string client_pem = Out("client.crt");
  std::shared_ptr<X509> client = ReadCertificate(client_pem);
  ASSERT_TRUE(client);
  EXPECT_EQ(X509_verify(client.get(), ca_key), 1) << "not signed by the CA";
  EXPECT_EQ(X509_check_purpose(client.get(), X509_PURPOSE_SSL_CLIENT, 0), 1);
  EXPECT_NE(X509_check_purpose(client.get(), X509_PURPOSE_SSL_SERVER, 0), 1);
  // The serving certificate cannot pass for kube-scheduler.
  EXPECT_NE(X509_check_purpose(tls.get(), X509_PURPOSE_SSL_CLIENT, 0), 1);

  absl::StatusOr<std::vector<json>> secrets =
      ParseYamlDocuments(Out("tls-secrets.yaml"));
  ASSERT_TRUE(secrets.ok()) << secrets.status();
  ASSERT_EQ(secrets->size(), 2u);
  const json& serving = (*secrets)[0];
  EXPECT_EQ(serving["metadata"]["name"], "deviceshare-scheduler-tls");
  EXPECT_EQ(serving["metadata"]["namespace"], "kube-system");
  EXPECT_EQ(serving["type"], "kubernetes.io/tls");
  EXPECT_EQ(serving["data"]["tls.crt"], absl::Base64Escape(tls_pem));
  EXPECT_EQ(serving["data"]["tls.key"], absl::Base64Escape(Out("tls.key")));
  EXPECT_EQ(serving["data"]["ca.crt"], absl::Base64Escape(ca_pem));
  const json& client_secret = (*secrets)[1];
  EXPECT_EQ(client_secret["metadata"]["name"],
            "deviceshare-kube-scheduler-client-tls");
  EXPECT_EQ(client_secret["type"], "kubernetes.io/tls");
  EXPECT_EQ(client_secret["data"]["tls.crt"], absl::Base64Escape(client_pem));
  EXPECT_EQ(client_secret["data"]["tls.key"],
            absl::Base64Escape(Out("client.key")));
  EXPECT_EQ(client_secret["data"]["ca.crt"], absl::Base64Escape(ca_pem));

  auto overlay = ParseJsonOrYaml(Out("kustomization.yaml"));
  ASSERT_TRUE(overlay.ok()) << overlay.status();
  EXPECT_THAT((*overlay)["resources"], Contains("tls-secrets.yaml"));
  const std::string base = (*overlay)["resources"][0];
  EXPECT_TRUE(std::filesystem::equivalent(dir_ / "out" / base, kDeployDir))
      << base;
  const std::string patch = (*overlay)["patches"][0]["patch"];
  auto ops = ParseJsonOrYaml(patch);
  ASSERT_TRUE(ops.ok()) << patch;
  EXPECT_EQ((*ops)[0]["path"], "/webhooks/0/clientConfig/caBundle");
  EXPECT_EQ((*ops)[0]["value"], absl::Base64Escape(ca_pem));

  // Again: the CA stays (so does caBundle), the serving certificate is new.
  ASSERT_EQ(RunScript(), 0);
  EXPECT_EQ(Out("ca.crt"), ca_pem);
  EXPECT_NE(Out("tls.crt"), tls_pem);
}

}  // namespace
}  // namespace deviceshare
