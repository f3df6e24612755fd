// File: src/extender/http_service_impl.h (internal to http_service.cc and
// http_session.h)
//
// What every connection of an HttpService shares: the options, the I/O
// context, the list of connections waiting for a request header (the ones
// a new connection may evict), the budget of large bodies and the workers
// that run handlers.
//
// Thread safety: everything but Run, stats() and the atomics runs on the
// single I/O thread.
#ifndef DEVICESHARE_EXTENDER_HTTP_SERVICE_IMPL_H_
#define DEVICESHARE_EXTENDER_HTTP_SERVICE_IMPL_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/status/status.h"
#include "boost/asio/io_context.hpp"
#include "boost/asio/ip/tcp.hpp"
#include "boost/asio/ssl/context.hpp"
#include "boost/asio/steady_timer.hpp"
#include "boost/asio/thread_pool.hpp"
#include "http_service.h"

namespace deviceshare::extender {

// A connection as the service sees it.
class HttpSessionBase {
 public:
  virtual ~HttpSessionBase() = default;
  // Closes the connection; its pending operation ends with an error.
  virtual void Close() = 0;
};

class HttpService::Impl {
 public:
  using WaitToken = std::list<HttpSessionBase*>::iterator;

  explicit Impl(HttpServiceOptions options);
  ~Impl();

  absl::Status Init();
  void Handle(absl::string_view method, absl::string_view path,
              HttpHandler handler, HttpAccess access);
  int port() const { return port_; }
  void Start();
  void Stop();
  HttpServiceStats stats() const;

  // For the sessions.
  const HttpServiceOptions& options() const { return options_; }
  bool requires_client_certificate() const {
    return !options_.client_ca_file.empty();
  }
  bool stopping() const { return stopping_.load(); }
  WaitToken StartWaiting(HttpSessionBase* session);
  void StopWaiting(WaitToken token);
  // Calls `granted` (now or later, on the I/O thread) once `bytes` fit in
  // the large-body budget.
  void AcquireBudget(size_t bytes, std::function<void()> granted);
  void ReleaseBudget(size_t bytes);
  // Runs the request's handler on a worker, then `done` on the I/O thread.
  void Dispatch(HttpRequest request, std::function<void(HttpResponse)> done);
  void SessionEnded();
  void CountTimeout() { ++timed_out_; }
  void CountHandshakeFailure() { ++handshake_failed_; }
  void CountTooLarge() { ++too_large_; }

 private:
  struct Route {
    HttpHandler handler;
    HttpAccess access;
  };
  struct BudgetWaiter {
    size_t bytes;
    std::function<void()> granted;
  };

  void Accept();
  void OnAccept(boost::asio::ip::tcp::socket socket);
  HttpResponse Run(const HttpRequest& request) const;
  bool FitsBudget(size_t bytes) const;
  void LogError(const std::string& message) const;

  const HttpServiceOptions options_;
  std::map<std::string, std::map<std::string, Route>> routes_;
  int port_ = -1;
  int max_connections_ = 0;
  bool started_ = false;
  bool stopped_ = false;
  std::atomic<bool> stopping_{false};

  // I/O thread only.
  std::list<HttpSessionBase*> waiting_;
  size_t budget_used_ = 0;
  std::deque<BudgetWaiter> budget_waiters_;

  std::atomic<int64_t> open_{0}, evicted_{0}, refused_{0}, timed_out_{0},
      handshake_failed_{0}, too_large_{0}, waiting_for_budget_{0};
  std::mutex drain_mu_;
  std::condition_variable drained_;

  // Torn down in this order by ~Impl (sessions die with the I/O context and
  // call back into the members above).
  std::unique_ptr<boost::asio::ssl::context> ssl_;
  std::unique_ptr<boost::asio::io_context> io_;
  std::unique_ptr<boost::asio::ip::tcp::acceptor> acceptor_;
  std::unique_ptr<boost::asio::steady_timer> retry_timer_;
  std::unique_ptr<boost::asio::thread_pool> workers_;
  std::thread io_thread_;
};

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_HTTP_SERVICE_IMPL_H_
