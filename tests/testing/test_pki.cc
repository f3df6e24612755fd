#include "testing/test_pki.h"

#include <openssl/bio.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <atomic>

#include "gtest/gtest.h"

namespace deviceshare::testing {
namespace {

std::shared_ptr<EVP_PKEY> NewKey() {
  return std::shared_ptr<EVP_PKEY>(EVP_EC_gen("P-256"), EVP_PKEY_free);
}

bool AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return false;
  const bool added = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return added;
}

std::string ToPem(X509* cert) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, cert);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  std::string pem(data, size);
  BIO_free(bio);
  return pem;
}

std::string ToPem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  const long size = BIO_get_mem_data(bio, &data);
  std::string pem(data, size);
  BIO_free(bio);
  return pem;
}

// A certificate for `name`, signed by `issuer` (itself when null).
TestCertificate Issue(const std::string& name, const TestCertificate* issuer,
                      const std::vector<std::pair<int, const char*>>& exts) {
  static std::atomic<long> serial{1};
  TestCertificate out;
  out.key = NewKey();
  std::shared_ptr<X509> cert(X509_new(), X509_free);
  if (out.key == nullptr || cert == nullptr) {
    ADD_FAILURE() << "OpenSSL cannot make a key or certificate";
    return {};
  }
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), serial++);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_set_pubkey(cert.get(), out.key.get());
  X509_NAME_add_entry_by_txt(
      X509_get_subject_name(cert.get()), "CN", MBSTRING_ASC,
      reinterpret_cast<const unsigned char*>(name.c_str()), -1, -1, 0);
  X509* issuer_cert = issuer != nullptr ? issuer->cert.get() : cert.get();
  EVP_PKEY* issuer_key = issuer != nullptr ? issuer->key.get() : out.key.get();
  X509_set_issuer_name(cert.get(), X509_get_subject_name(issuer_cert));
  for (const auto& [nid, value] : exts) {
    if (!AddExtension(cert.get(), issuer_cert, nid, value)) {
      ADD_FAILURE() << "OpenSSL rejects extension " << value;
    }
  }
  if (X509_sign(cert.get(), issuer_key, EVP_sha256()) == 0) {
    ADD_FAILURE() << "OpenSSL cannot sign " << name;
  }
  ERR_clear_error();
  out.cert = std::move(cert);
  out.cert_pem = ToPem(out.cert.get());
  out.key_pem = ToPem(out.key.get());
  return out;
}

}  // namespace

TestPki MakeTestPki(const std::string& ca_name,
                    const std::string& client_name) {
  TestPki pki;
  pki.ca = Issue(ca_name, nullptr,
                 {{NID_basic_constraints, "critical,CA:TRUE"},
                  {NID_key_usage, "critical,keyCertSign,cRLSign"},
                  {NID_subject_key_identifier, "hash"}});
  if (pki.ca.cert == nullptr) return pki;
  pki.server = Issue("127.0.0.1", &pki.ca,
                     {{NID_basic_constraints, "critical,CA:FALSE"},
                      {NID_subject_alt_name, "IP:127.0.0.1,DNS:localhost"},
                      {NID_ext_key_usage, "serverAuth"},
                      {NID_authority_key_identifier, "keyid"}});
  pki.client = Issue(client_name, &pki.ca,
                     {{NID_basic_constraints, "critical,CA:FALSE"},
                      {NID_ext_key_usage, "clientAuth"},
                      {NID_authority_key_identifier, "keyid"}});
  return pki;
}

X509_STORE* NewStoreWith(const TestCertificate& cert) {
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, cert.cert.get());
  return store;
}

}  // namespace deviceshare::testing
