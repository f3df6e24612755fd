// A cpp-httplib server bound to its port and served on a thread of its own:
// what the extender's and the webhook's listeners share.
//
// Thread safety: Bind, Start and Stop from one thread.
#ifndef DEVICESHARE_EXTENDER_LISTENER_H_
#define DEVICESHARE_EXTENDER_LISTENER_H_

#include <string>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "httplib.h"

namespace deviceshare::extender {

class Listener {
 public:
  ~Listener() { Stop(); }

  // Binds `server` (which must outlive this) to `host`:`port`, or to any
  // free port when `port` is 0. Unavailable, naming `what` (the flag and
  // its value), when it cannot listen.
  absl::Status Bind(httplib::Server* server, const std::string& host, int port,
                    absl::string_view what);
  int port() const { return port_; }

  // Serves on a background thread.
  void Start();
  // Stops accepting, lets requests in flight finish. Idempotent.
  void Stop();

 private:
  httplib::Server* server_ = nullptr;
  int port_ = -1;
  std::thread thread_;
  bool stopped_ = false;
};

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_LISTENER_H_
