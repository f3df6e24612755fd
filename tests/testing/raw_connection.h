// File: testing/raw_connection.h
//
// Plain TCP connections to a local server, for tests that act as a client
// no library would be: one that connects and says nothing, or trickles a
// request a byte at a time.
//
// Thread safety: one RawConnection per thread.
#ifndef DEVICESHARE_TESTS_TESTING_RAW_CONNECTION_H_
#define DEVICESHARE_TESTS_TESTING_RAW_CONNECTION_H_

#include <string>

#include "absl/strings/string_view.h"

namespace deviceshare::testing {

// A port free on 127.0.0.1 a moment ago (for flags that take no 0).
int FreeLoopbackPort();

class RawConnection {
 public:
  // Connects to 127.0.0.1:`port`; connected() says whether it did.
  explicit RawConnection(int port);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return fd_ >= 0; }
  // False once the peer has closed or reset the connection.
  bool Send(absl::string_view bytes);
  // Whether the peer has closed the connection, waiting up to
  // `timeout_ms` for it (bytes it sends meanwhile are read and dropped).
  bool ClosedByPeer(int timeout_ms);

 private:
  int fd_ = -1;
};

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_RAW_CONNECTION_H_
