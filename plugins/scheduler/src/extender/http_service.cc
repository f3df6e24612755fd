#include "http_service.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"
#include "boost/asio/post.hpp"
#include "http_service_impl.h"
#include "http_session.h"

namespace deviceshare::extender {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
using tcp = asio::ip::tcp;

using PlainSession = HttpSession<beast::tcp_stream>;
using TlsSession = HttpSession<beast::ssl_stream<beast::tcp_stream>>;

// How long Stop() lets requests in flight finish.
constexpr auto kDrainTime = std::chrono::seconds(5);

// Connections the process may hold: raises the soft limit on open files to
// the hard one, as Go's runtime does, and keeps room for the API clients'
// and the watches' descriptors.
int ConnectionCeiling(int wanted) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return wanted;
  if (limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  if (limit.rlim_cur == RLIM_INFINITY) return wanted;
  const auto room = static_cast<int64_t>(limit.rlim_cur) - 256;
  return static_cast<int>(std::clamp<int64_t>(room, 16, wanted));
}

}  // namespace

HttpService::Impl::Impl(HttpServiceOptions options)
    : options_(std::move(options)) {}

HttpService::Impl::~Impl() {
  Stop();
  // The waiters' sessions call ReleaseBudget as they die: not while the
  // queue itself is being cleared.
  std::deque<BudgetWaiter> waiters = std::move(budget_waiters_);
  budget_waiters_.clear();
  waiters.clear();
  retry_timer_.reset();
  acceptor_.reset();
  io_.reset();
  ssl_.reset();
}

absl::Status HttpService::Impl::Init() {
  if (!options_.client_ca_file.empty() && !options_.install_certificate) {
    return absl::InvalidArgumentError(
        absl::StrCat(options_.client_ca_flag,
                     ": needs TLS (a serving certificate and key)"));
  }
  if (options_.install_certificate) {
    ssl_ = std::make_unique<asio::ssl::context>(asio::ssl::context::tls_server);
    SSL_CTX* ctx = ssl_->native_handle();
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    // A client could make the server renegotiate without end.
    SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION);
    if (!options_.install_certificate(*ctx)) {
      return absl::InvalidArgumentError(absl::StrCat(
          options_.what, ": the TLS certificate could not be installed"));
    }
    if (!options_.client_ca_file.empty()) {
      const char* file = options_.client_ca_file.c_str();
      STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(file);
      if (names == nullptr ||
          SSL_CTX_load_verify_locations(ctx, file, nullptr) != 1) {
        if (names != nullptr) sk_X509_NAME_pop_free(names, X509_NAME_free);
        return absl::InvalidArgumentError(
            absl::StrCat(options_.client_ca_flag, " ", options_.client_ca_file,
                         ": not a readable PEM bundle of CA certificates"));
      }
      SSL_CTX_set_client_CA_list(ctx, names);
      // A certificate is asked for and checked, not required: the routes
      // say who must have one.
      SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, nullptr);
    }
  }
  max_connections_ = ConnectionCeiling(std::max(1, options_.max_connections));
  io_ = std::make_unique<asio::io_context>(1);
  acceptor_ = std::make_unique<tcp::acceptor>(*io_);
  retry_timer_ = std::make_unique<asio::steady_timer>(*io_);
  const auto cannot_listen = [this] {
    return absl::UnavailableError(absl::StrCat(
        options_.what, ": cannot listen (in use, or not a local address)"));
  };
  beast::error_code error;
  tcp::resolver resolver(*io_);
  auto endpoints =
      resolver.resolve(options_.host, std::to_string(options_.port),
                       tcp::resolver::passive, error);
  if (error || endpoints.empty()) return cannot_listen();
  const tcp::endpoint endpoint = endpoints.begin()->endpoint();
  acceptor_->open(endpoint.protocol(), error);
  if (!error) acceptor_->set_option(tcp::acceptor::reuse_address(true), error);
  if (!error) acceptor_->bind(endpoint, error);
  if (!error)
    acceptor_->listen(asio::socket_base::max_listen_connections, error);
  if (error) return cannot_listen();
  port_ = acceptor_->local_endpoint().port();
  return absl::OkStatus();
}

void HttpService::Impl::Handle(absl::string_view method, absl::string_view path,
                               HttpHandler handler, HttpAccess access) {
  routes_[std::string(path)][std::string(method)] = {std::move(handler),
                                                     access};
}

void HttpService::Impl::Start() {
  if (started_ || stopped_) return;
  started_ = true;
  workers_ = std::make_unique<asio::thread_pool>(std::max(1, options_.threads));
  Accept();
  io_thread_ = std::thread([this] {
    // A handler that throws (say, out of memory) must not end the server.
    for (;;) {
      try {
        io_->run();
        return;
      } catch (const std::exception& error) {
        LogError(absl::StrCat("http: internal error: ", error.what()));
      }
    }
  });
}

void HttpService::Impl::Stop() {
  if (stopped_) return;
  stopped_ = true;
  if (!started_) return;
  asio::post(*io_, [this] {
    stopping_ = true;
    beast::error_code ignored;
    acceptor_->close(ignored);
    retry_timer_->cancel();
    const std::list<HttpSessionBase*> waiting = waiting_;
    for (HttpSessionBase* session : waiting) session->Close();
    // With no connection open, no session's end will say so.
    std::lock_guard lock(drain_mu_);
    drained_.notify_all();
  });
  {
    std::unique_lock lock(drain_mu_);
    drained_.wait_for(lock, kDrainTime,
                      [this] { return stopping_.load() && open_.load() == 0; });
  }
  io_->stop();
  io_thread_.join();
  workers_->join();
}

HttpServiceStats HttpService::Impl::stats() const {
  HttpServiceStats stats;
  stats.open = open_.load();
  stats.evicted = evicted_.load();
  stats.refused = refused_.load();
  stats.timed_out = timed_out_.load();
  stats.handshake_failed = handshake_failed_.load();
  stats.too_large = too_large_.load();
  stats.waiting_for_budget = waiting_for_budget_.load();
  return stats;
}

void HttpService::Impl::Accept() {
  acceptor_->async_accept(
      *io_, [this](beast::error_code error, tcp::socket socket) {
        if (stopping_ || error == asio::error::operation_aborted) return;
        if (error) {
          // Out of descriptors, most likely: try again shortly rather than
          // spin.
          LogError(absl::StrCat("http: accept failed: ", error.message()));
          retry_timer_->expires_after(std::chrono::milliseconds(100));
          retry_timer_->async_wait([this](beast::error_code waited) {
            if (!waited && !stopping_) Accept();
          });
          return;
        }
        OnAccept(std::move(socket));
        Accept();
      });
}

void HttpService::Impl::OnAccept(tcp::socket socket) {
  if (open_.load() >= max_connections_) {
    if (waiting_.empty()) {
      ++refused_;
      return;  // the socket closes here
    }
    ++evicted_;
    waiting_.front()->Close();
  }
  beast::error_code ignored;
  socket.set_option(tcp::no_delay(true), ignored);
  ++open_;
  if (ssl_) {
    auto session =
        std::make_shared<TlsSession>(*this, std::move(socket), *ssl_);
    session->Begin();
  } else {
    auto session = std::make_shared<PlainSession>(*this, std::move(socket));
    session->Begin();
  }
}

HttpService::Impl::WaitToken HttpService::Impl::StartWaiting(
    HttpSessionBase* session) {
  return waiting_.insert(waiting_.end(), session);
}

void HttpService::Impl::StopWaiting(WaitToken token) { waiting_.erase(token); }

bool HttpService::Impl::FitsBudget(size_t bytes) const {
  // One body alone is always admitted, however large (it is within
  // max_body_bytes): the budget orders large bodies, it never starves one.
  return budget_used_ == 0 ||
         budget_used_ + bytes <= options_.large_body_budget;
}

void HttpService::Impl::AcquireBudget(size_t bytes,
                                      std::function<void()> granted) {
  if (budget_waiters_.empty() && FitsBudget(bytes)) {
    budget_used_ += bytes;
    granted();
    return;
  }
  ++waiting_for_budget_;
  budget_waiters_.push_back({bytes, std::move(granted)});
}

void HttpService::Impl::ReleaseBudget(size_t bytes) {
  budget_used_ -= std::min(bytes, budget_used_);
  while (!budget_waiters_.empty() &&
         FitsBudget(budget_waiters_.front().bytes)) {
    BudgetWaiter next = std::move(budget_waiters_.front());
    budget_waiters_.pop_front();
    --waiting_for_budget_;
    budget_used_ += next.bytes;
    asio::post(*io_, std::move(next.granted));
  }
}

void HttpService::Impl::Dispatch(HttpRequest request,
                                 std::function<void(HttpResponse)> done) {
  asio::post(*workers_, [this, request = std::move(request),
                         done = std::move(done)]() mutable {
    HttpResponse answer = Run(request);
    request = HttpRequest();  // the body's memory goes before the answer's
    asio::post(*io_,
               [done = std::move(done), answer = std::move(answer)]() mutable {
                 done(std::move(answer));
               });
  });
}

HttpResponse HttpService::Impl::Run(const HttpRequest& request) const {
  HttpResponse response;
  auto path = routes_.find(request.path);
  if (path == routes_.end()) {
    response.status = 404;
    response.body = "not found\n";
    return response;
  }
  auto route = path->second.find(request.method);
  if (route == path->second.end()) {
    response.status = 405;
    response.body = "method not allowed\n";
    return response;
  }
  if (route->second.access == HttpAccess::kAuthenticated &&
      !request.authenticated) {
    response.status = 403;
    response.body = "a client certificate is required\n";
    return response;
  }
  std::string failure;
  try {
    route->second.handler(request, response);
    return response;
  } catch (const std::exception& error) {
    failure = absl::StrCat(": ", error.what());
  } catch (...) {
  }
  LogError(absl::StrCat("internal error serving ", request.path, failure));
  response = HttpResponse();
  response.status = 500;
  response.body = "internal error\n";
  return response;
}

void HttpService::Impl::SessionEnded() {
  if (--open_ == 0 && stopping_) {
    std::lock_guard lock(drain_mu_);
    drained_.notify_all();
  }
}

void HttpService::Impl::LogError(const std::string& message) const {
  if (options_.log_error) options_.log_error(message);
}

HttpService::HttpService(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpService::~HttpService() = default;

absl::StatusOr<std::unique_ptr<HttpService>> HttpService::Create(
    HttpServiceOptions options) {
  auto impl = std::make_unique<Impl>(std::move(options));
  absl::Status status = impl->Init();
  if (!status.ok()) return status;
  return std::unique_ptr<HttpService>(new HttpService(std::move(impl)));
}

void HttpService::Handle(absl::string_view method, absl::string_view path,
                         HttpHandler handler, HttpAccess access) {
  impl_->Handle(method, path, std::move(handler), access);
}

int HttpService::port() const { return impl_->port(); }
void HttpService::Start() { impl_->Start(); }
void HttpService::Stop() { impl_->Stop(); }
HttpServiceStats HttpService::stats() const { return impl_->stats(); }

}  // namespace deviceshare::extender
