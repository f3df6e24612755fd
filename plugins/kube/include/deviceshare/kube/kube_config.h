// File: kube/kube_config.h
//
// Where the Kubernetes API server is and how to prove who we are: read from
// a kubeconfig file (kubectl's format) or from the pod's service account
// (in-cluster). Only what deviceshare needs is supported: bearer tokens
// (inline or from a file), client certificates, a CA bundle and
// insecure-skip-tls-verify. Other authentication (exec plugins,
// auth-provider, username/password) is an Unimplemented error naming the
// user, rather than a silent unauthenticated client.
//
// Every error names the file and the field, and the value where it helps:
//   kubeconfig /x: users[0].user.client-certificate-data: not valid base64
//
// Thread safety: the functions are safe to call from any thread; they only
// read files and the environment lookup they are given.
#ifndef DEVICESHARE_KUBE_KUBE_CONFIG_H_
#define DEVICESHARE_KUBE_KUBE_CONFIG_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace deviceshare::kube {

// Connection settings for ApiClient. A value type; PEM fields hold the file
// contents, never paths, so the settings are complete once loaded.
struct KubeConfig {
  // "https://10.0.0.1:6443" or "http://127.0.0.1:8080"; an optional path
  // prefix ("https://host/k8s") is kept in front of every API path.
  std::string server;
  std::string bearer_token;
  // When set, the token is read from this file and re-read periodically,
  // because in-cluster service-account tokens rotate; it wins over
  // `bearer_token`, which then only serves while the file is unreadable.
  std::string token_file;
  // PEM bundle of the CAs trusted for the server's certificate. Empty: the
  // system's default trust store.
  std::string ca_pem;
  std::string client_cert_pem;
  std::string client_key_pem;
  bool insecure_skip_tls_verify = false;
  // The context's namespace ("default" when it names none).
  std::string default_namespace = "default";
};

// Loads `path` using `context`, or the file's current-context when empty.
// Relative file paths in the file are resolved against the file's directory,
// as kubectl does. NotFound when the file or the context does not exist;
// InvalidArgument for a malformed file; Unimplemented for unsupported auth.
absl::StatusOr<KubeConfig> LoadKubeconfig(const std::string& path,
                                          absl::string_view context = "");

// Where in-cluster settings come from: the environment Kubernetes gives a
// pod and the mounted service-account directory. Tests point both elsewhere.
struct InClusterSource {
  // Environment lookup; null means ::getenv.
  std::function<std::optional<std::string>(const std::string& name)> getenv;
  std::string service_account_dir =
      "/var/run/secrets/kubernetes.io/serviceaccount";
};

// https://$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT (an IPv6 host is
// bracketed), the token file `<dir>/token` (read once now, so a missing
// token fails here rather than on the first request), the CA `<dir>/ca.crt`
// and the namespace `<dir>/namespace` ("default" when absent).
// FailedPrecondition when the variables are unset (not running in a pod).
absl::StatusOr<KubeConfig> InClusterConfig(const InClusterSource& source = {});

// What a command's --kubeconfig flag means: that file when given, else the
// pod's in-cluster credentials. Errors say which ("--kubeconfig: ..." or
// "in-cluster credentials: ...").
absl::StatusOr<KubeConfig> KubeConfigFromFlag(const std::string& kubeconfig);

}  // namespace deviceshare::kube

#endif  // DEVICESHARE_KUBE_KUBE_CONFIG_H_
