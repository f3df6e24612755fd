#include "listener.h"

#include "absl/strings/str_cat.h"

namespace deviceshare::extender {

absl::Status Listener::Bind(httplib::Server* server, const std::string& host,
                            int port, absl::string_view what) {
  server_ = server;
  if (port == 0) {
    port_ = server_->bind_to_any_port(host);
  } else if (server_->bind_to_port(host, port)) {
    port_ = port;
  }
  if (port_ <= 0) {
    return absl::UnavailableError(
        absl::StrCat(what, ": cannot listen (in use, or not a local address)"));
  }
  return absl::OkStatus();
}

void Listener::Start() {
  thread_ = std::thread([this] { server_->listen_after_bind(); });
}

void Listener::Stop() {
  if (server_ == nullptr || stopped_) return;
  stopped_ = true;
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace deviceshare::extender
