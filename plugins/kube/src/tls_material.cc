#include "tls_material.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace deviceshare::kube::internal {
namespace {

struct BioFree {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;

BioPtr MemoryBio(absl::string_view text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// An encrypted key would otherwise make OpenSSL prompt on the terminal.
int NoPassword(char* /*buf*/, int /*size*/, int /*rwflag*/, void* /*u*/) {
  return 0;
}

size_t CountOccurrences(absl::string_view text, absl::string_view needle) {
  size_t count = 0;
  for (size_t pos = text.find(needle); pos != absl::string_view::npos;
       pos = text.find(needle, pos + needle.size())) {
    ++count;
  }
  return count;
}

// OpenSSL keeps errors in a per-thread queue that later TLS calls on this
// thread would misread; parse failures are reported through Status instead.
struct ClearErrorsOnExit {
  ~ClearErrorsOnExit() { ERR_clear_error(); }
};

}  // namespace

absl::StatusOr<std::vector<X509Ptr>> ParseCertificates(absl::string_view pem,
                                                       absl::string_view what) {
  ClearErrorsOnExit clear_errors;
  const size_t expected = CountOccurrences(pem, "-----BEGIN CERTIFICATE-----");
  if (expected == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        what, ": no PEM certificate (-----BEGIN CERTIFICATE-----)"));
  }
  BioPtr bio = MemoryBio(pem);
  std::vector<X509Ptr> certs;
  while (X509* cert =
             PEM_read_bio_X509(bio.get(), nullptr, NoPassword, nullptr)) {
    certs.emplace_back(cert);
  }
  if (certs.size() != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": certificate ", certs.size() + 1, " of ", expected,
                     " does not parse"));
  }
  return certs;
}

absl::StatusOr<EvpPkeyPtr> ParsePrivateKey(absl::string_view pem,
                                           absl::string_view what) {
  ClearErrorsOnExit clear_errors;
  BioPtr bio = MemoryBio(pem);
  EvpPkeyPtr key(
      PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassword, nullptr));
  if (key == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": not an unencrypted PEM private key"));
  }
  return key;
}

absl::StatusOr<TlsMaterial> ParseTlsMaterial(absl::string_view ca_pem,
                                             absl::string_view cert_pem,
                                             absl::string_view key_pem) {
  TlsMaterial material;
  if (!ca_pem.empty()) {
    absl::StatusOr<std::vector<X509Ptr>> ca =
        ParseCertificates(ca_pem, "CA certificate");
    if (!ca.ok()) return ca.status();
    material.ca_certs = *std::move(ca);
  }
  if (cert_pem.empty() != key_pem.empty()) {
    return absl::InvalidArgumentError(
        "a client certificate needs both the certificate and the key");
  }
  if (cert_pem.empty()) return material;
  absl::StatusOr<std::vector<X509Ptr>> certs =
      ParseCertificates(cert_pem, "client certificate");
  if (!certs.ok()) return certs.status();
  // The first certificate is the client's; any others are its chain, which
  // the API server does not need from us.
  material.client_cert = std::move(certs->front());
  absl::StatusOr<EvpPkeyPtr> key = ParsePrivateKey(key_pem, "client key");
  if (!key.ok()) return key.status();
  material.client_key = *std::move(key);
  ClearErrorsOnExit clear_errors;
  if (X509_check_private_key(material.client_cert.get(),
                             material.client_key.get()) != 1) {
    return absl::InvalidArgumentError(
        "client key: does not match the client certificate");
  }
  return material;
}

X509_STORE* NewCertStore(const std::vector<X509Ptr>& certs) {
  X509_STORE* store = X509_STORE_new();
  for (const X509Ptr& cert : certs) X509_STORE_add_cert(store, cert.get());
  return store;
}

}  // namespace deviceshare::kube::internal
