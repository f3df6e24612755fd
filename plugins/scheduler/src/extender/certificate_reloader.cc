#include "certificate_reloader.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/stat.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "extender_log.h"

namespace deviceshare::extender {

// One certificate chain and its key, freed when the last handshake that
// uses it lets go (OpenSSL takes its own references on SSL_use_cert_and_key).
struct CertificateReloader::Pair {
  X509* cert = nullptr;
  STACK_OF(X509) * chain = nullptr;  // the certificates after the first
  EVP_PKEY* key = nullptr;

  ~Pair() {
    X509_free(cert);
    sk_X509_pop_free(chain, X509_free);
    EVP_PKEY_free(key);
  }
};

namespace {

// OpenSSL's last error as text, and the error queue emptied.
std::string OpenSslError() {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return "no detail";
  char text[256];
  ERR_error_string_n(code, text, sizeof(text));
  return text;
}

struct BioCloser {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
using Bio = std::unique_ptr<BIO, BioCloser>;

}  // namespace

CertificateReloader::CertificateReloader(
    std::string cert_file, std::string key_file, std::string flag_names,
    std::chrono::milliseconds check_interval)
    : cert_file_(std::move(cert_file)),
      key_file_(std::move(key_file)),
      flag_names_(std::move(flag_names)),
      check_interval_(check_interval) {}

CertificateReloader::~CertificateReloader() = default;

absl::StatusOr<std::unique_ptr<CertificateReloader>>
CertificateReloader::Create(std::string cert_file, std::string key_file,
                            std::string flag_names,
                            std::chrono::milliseconds check_interval) {
  std::unique_ptr<CertificateReloader> reloader(
      new CertificateReloader(std::move(cert_file), std::move(key_file),
                              std::move(flag_names), check_interval));
  const Stamps stamps = reloader->ReadStamps();
  absl::StatusOr<std::shared_ptr<const Pair>> pair = reloader->Load();
  if (!pair.ok()) return pair.status();
  absl::MutexLock lock(&reloader->mu_);
  reloader->pair_ = *std::move(pair);
  reloader->stamps_ = stamps;
  reloader->next_check_ = std::chrono::steady_clock::now() + check_interval;
  return reloader;
}

CertificateReloader::Stamps CertificateReloader::ReadStamps() const {
  auto stamp = [](const std::string& file) {
    struct stat st {};
    if (::stat(file.c_str(), &st) != 0) return FileStamp{};
    return FileStamp{
        .device = st.st_dev,
        .inode = st.st_ino,
        .size = static_cast<unsigned long long>(st.st_size),
        .mtime_ns = st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec};
  };
  return {stamp(cert_file_), stamp(key_file_)};
}

absl::StatusOr<std::shared_ptr<const CertificateReloader::Pair>>
CertificateReloader::Load() const {
  auto fail = [this](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat(flag_names_, " ", cert_file_,
                                                   " / ", key_file_, ": ", what,
                                                   " (", OpenSslError(), ")"));
  };
  auto pair = std::make_shared<Pair>();
  Bio cert_bio(BIO_new_file(cert_file_.c_str(), "r"));
  if (cert_bio == nullptr) return fail("cannot read the certificate file");
  pair->cert = PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr);
  if (pair->cert == nullptr) return fail("no PEM certificate");
  pair->chain = sk_X509_new_null();
  while (X509* next =
             PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr)) {
    sk_X509_push(pair->chain, next);
  }
  ERR_clear_error();  // the end of the file reads as an error
  Bio key_bio(BIO_new_file(key_file_.c_str(), "r"));
  if (key_bio == nullptr) return fail("cannot read the key file");
  pair->key = PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr);
  if (pair->key == nullptr) return fail("no PEM private key");
  if (X509_check_private_key(pair->cert, pair->key) != 1) {
    return fail("the key does not match the certificate");
  }
  return std::shared_ptr<const Pair>(std::move(pair));
}

std::shared_ptr<const CertificateReloader::Pair>
CertificateReloader::Current() {
  absl::MutexLock lock(&mu_);
  const auto now = std::chrono::steady_clock::now();
  if (now < next_check_) return pair_;
  next_check_ = now + check_interval_;
  const Stamps stamps = ReadStamps();
  if (stamps == stamps_) return pair_;
  stamps_ = stamps;
  absl::StatusOr<std::shared_ptr<const Pair>> fresh = Load();
  if (!fresh.ok()) {
    LogNode(LogLevel::kError, "",
            absl::StrCat("certificate not reloaded, the previous one stays "
                         "in use: ",
                         fresh.status().message()));
    return pair_;
  }
  pair_ = *std::move(fresh);
  LogNode(LogLevel::kInfo, "",
          absl::StrCat("certificate reloaded from ", cert_file_));
  return pair_;
}

int CertificateReloader::OnClientHello(SSL* ssl, int* alert, void* self) {
  std::shared_ptr<const Pair> pair =
      static_cast<CertificateReloader*>(self)->Current();
  if (SSL_use_cert_and_key(ssl, pair->cert, pair->key, pair->chain,
                           /*override=*/1) != 1) {
    ERR_clear_error();
    *alert = SSL_AD_INTERNAL_ERROR;
    return SSL_CLIENT_HELLO_ERROR;
  }
  return SSL_CLIENT_HELLO_SUCCESS;
}

bool CertificateReloader::Install(SSL_CTX& ctx) {
  std::shared_ptr<const Pair> pair;
  {
    absl::MutexLock lock(&mu_);
    pair = pair_;
  }
  if (SSL_CTX_use_cert_and_key(&ctx, pair->cert, pair->key, pair->chain,
                               /*override=*/1) != 1) {
    ERR_clear_error();
    return false;
  }
  SSL_CTX_set_min_proto_version(&ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(&ctx, SSL_OP_NO_COMPRESSION);
  SSL_CTX_set_client_hello_cb(&ctx, &CertificateReloader::OnClientHello, this);
  return true;
}

}  // namespace deviceshare::extender
