// File: src/extender/certificate_reloader.h (internal)
//
// A serving certificate and key read from PEM files and read again when the
// files change, for a TLS listener whose certificate is rotated underneath
// it (a Kubernetes Secret volume, cert-manager). Installed on an SSL_CTX,
// it hands every new TLS handshake the current pair from OpenSSL's
// ClientHello callback; at most once per `check_interval` a handshake first
// looks at the files' identity (device, inode, size, mtime -- a Secret
// volume swaps a symlink, so the inode changes) and, when it changed, loads
// the new pair. A pair that does not load, or whose key does not match its
// certificate (say, a cert written before its key), keeps the old pair in
// use and is logged; it is tried again when the files change once more.
// Connections already open keep their certificate.
//
// Thread safety: handshakes run on the server's threads; the pair is
// guarded by a mutex.
#ifndef DEVICESHARE_EXTENDER_CERTIFICATE_RELOADER_H_
#define DEVICESHARE_EXTENDER_CERTIFICATE_RELOADER_H_

#include <openssl/ssl.h>

#include <chrono>
#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"

namespace deviceshare::extender {

class CertificateReloader {
 public:
  // Loads the pair; InvalidArgument naming the files when it does not load.
  // `flag_names` ("--webhook-tls-cert / --webhook-tls-key") start messages.
  static absl::StatusOr<std::unique_ptr<CertificateReloader>> Create(
      std::string cert_file, std::string key_file, std::string flag_names,
      std::chrono::milliseconds check_interval = std::chrono::seconds(1));
  ~CertificateReloader();

  // Sets the current pair on `ctx` and the ClientHello callback that keeps
  // new handshakes current; the reloader must outlive `ctx`.
  bool Install(SSL_CTX& ctx);

 private:
  struct Pair;
  struct FileStamp {
    unsigned long long device = 0, inode = 0, size = 0;
    long long mtime_ns = 0;
    bool operator==(const FileStamp&) const = default;
  };
  struct Stamps {
    FileStamp cert, key;
    bool operator==(const Stamps&) const = default;
  };

  CertificateReloader(std::string cert_file, std::string key_file,
                      std::string flag_names,
                      std::chrono::milliseconds check_interval);

  static int OnClientHello(SSL* ssl, int* alert, void* self);
  // The pair to serve with, reloaded first when due and changed.
  std::shared_ptr<const Pair> Current();
  Stamps ReadStamps() const;
  absl::StatusOr<std::shared_ptr<const Pair>> Load() const;

  const std::string cert_file_;
  const std::string key_file_;
  const std::string flag_names_;
  const std::chrono::milliseconds check_interval_;
  absl::Mutex mu_;
  std::shared_ptr<const Pair> pair_ ABSL_GUARDED_BY(mu_);
  Stamps stamps_ ABSL_GUARDED_BY(mu_);  // of the files last tried
  std::chrono::steady_clock::time_point next_check_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_CERTIFICATE_RELOADER_H_
