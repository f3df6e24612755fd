// File: testing/test_pki.h
//
// Certificates made in-process with OpenSSL's C API (the openssl command
// may be absent): a CA, a server certificate for 127.0.0.1 / localhost and
// a client certificate, all signed by the CA, EC P-256, valid for a day.
#ifndef DEVICESHARE_TESTS_TESTING_TEST_PKI_H_
#define DEVICESHARE_TESTS_TESTING_TEST_PKI_H_

#include <openssl/evp.h>
#include <openssl/x509.h>

#include <memory>
#include <string>

namespace deviceshare::testing {

struct TestCertificate {
  std::shared_ptr<X509> cert;
  std::shared_ptr<EVP_PKEY> key;
  std::string cert_pem;
  std::string key_pem;
};

struct TestPki {
  TestCertificate ca;
  TestCertificate server;  // SAN IP:127.0.0.1, DNS:localhost
  TestCertificate client;  // CN <client_name>, clientAuth
};

// A fresh PKI; `ca_name` is the CA's common name. Fails the test (and
// returns empty members) if OpenSSL cannot make one.
TestPki MakeTestPki(const std::string& ca_name,
                    const std::string& client_name = "deviceshare-test");

// A store holding `cert`, for httplib::SSLServer's client CA (ownership
// passes to the caller).
X509_STORE* NewStoreWith(const TestCertificate& cert);

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_TEST_PKI_H_
