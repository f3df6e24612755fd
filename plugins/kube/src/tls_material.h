// File: tls_material.h (internal)
//
// PEM text from a KubeConfig turned into the OpenSSL objects cpp-httplib
// takes. Parsing happens once, in ApiClient::Create, so a bad certificate is
// an error at start-up rather than a failed handshake later.
#ifndef DEVICESHARE_KUBE_SRC_TLS_MATERIAL_H_
#define DEVICESHARE_KUBE_SRC_TLS_MATERIAL_H_

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace deviceshare::kube::internal {

struct X509Free {
  void operator()(X509* cert) const { X509_free(cert); }
};
struct EvpPkeyFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
};
using X509Ptr = std::unique_ptr<X509, X509Free>;
using EvpPkeyPtr = std::unique_ptr<EVP_PKEY, EvpPkeyFree>;

// Every certificate of a PEM bundle. InvalidArgument naming `what` when the
// text holds none or one of them does not parse.
absl::StatusOr<std::vector<X509Ptr>> ParseCertificates(absl::string_view pem,
                                                       absl::string_view what);

// One unencrypted private key (PKCS#8, RSA or EC PEM).
absl::StatusOr<EvpPkeyPtr> ParsePrivateKey(absl::string_view pem,
                                           absl::string_view what);

// What a client presents and trusts, parsed once and shared (read-only) by
// every connection.
struct TlsMaterial {
  std::vector<X509Ptr> ca_certs;  // empty: the system store
  X509Ptr client_cert;            // null together with client_key
  EvpPkeyPtr client_key;
};

// Parses the PEM fields; checks that the key belongs to the certificate.
absl::StatusOr<TlsMaterial> ParseTlsMaterial(absl::string_view ca_pem,
                                             absl::string_view cert_pem,
                                             absl::string_view key_pem);

// A new store holding `certs`; ownership passes to the caller.
X509_STORE* NewCertStore(const std::vector<X509Ptr>& certs);

}  // namespace deviceshare::kube::internal

#endif  // DEVICESHARE_KUBE_SRC_TLS_MATERIAL_H_
