// File: src/extender/http_session.h (internal to http_service.cc)
//
// One connection of an HttpService, over plain TCP or TLS: handshake, wait
// for a request, read its header, wait for the large-body budget when the
// body is large, read the body, hand the request to a worker, write the
// answer, and again while the client keeps the connection alive. Each step
// has its deadline (http_service.h); a step that fails or times out ends
// the connection. Every step runs on the I/O thread; the session lives as
// long as an operation or a callback holds it.
#ifndef DEVICESHARE_EXTENDER_HTTP_SESSION_H_
#define DEVICESHARE_EXTENDER_HTTP_SESSION_H_

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

#include "boost/asio/ssl/stream_base.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"
#include "boost/beast/ssl.hpp"
#include "http_service_impl.h"

namespace deviceshare::extender {

template <typename Stream>
class HttpSession : public HttpSessionBase,
                    public std::enable_shared_from_this<HttpSession<Stream>> {
 public:
  template <typename... Args>
  explicit HttpSession(HttpService::Impl& service, Args&&... stream_args)
      : service_(service), stream_(std::forward<Args>(stream_args)...) {}

  ~HttpSession() override {
    Unwait();
    if (reserved_ > 0) service_.ReleaseBudget(reserved_);
    service_.SessionEnded();
  }

  void Begin() {
    if constexpr (kTls) {
      Lowest().expires_after(service_.options().handshake_timeout);
      stream_.async_handshake(
          boost::asio::ssl::stream_base::server,
          [self = this->shared_from_this()](boost::beast::error_code error) {
            if (error) {
              if (error == boost::beast::error::timeout) {
                self->service_.CountTimeout();
              } else {
                self->service_.CountHandshakeFailure();
              }
              return;
            }
            // OpenSSL has verified a certificate presented against the
            // client CAs; here only whether one was.
            self->authenticated_ =
                !self->service_.requires_client_certificate() ||
                SSL_get0_peer_certificate(self->stream_.native_handle()) !=
                    nullptr;
            self->WaitForRequest(/*first=*/true);
          });
    } else {
      authenticated_ = true;
      WaitForRequest(/*first=*/true);
    }
  }

  void Close() override {
    Unwait();
    boost::beast::error_code ignored;
    Lowest().socket().close(ignored);
  }

 private:
  static constexpr bool kTls =
      !std::is_same_v<Stream, boost::beast::tcp_stream>;
  static constexpr size_t kHeaderLimit = 64 << 10;
  static constexpr size_t kReadChunk = 16 << 10;
  static constexpr std::chrono::seconds kLingerTime{5};

  boost::beast::tcp_stream& Lowest() {
    return boost::beast::get_lowest_layer(stream_);
  }

  void Wait() {
    if (!waiting_) token_ = service_.StartWaiting(this);
    waiting_ = true;
  }
  void Unwait() {
    if (waiting_) service_.StopWaiting(token_);
    waiting_ = false;
  }

  // Ends the connection unless `error` is none; counts a deadline.
  bool Failed(boost::beast::error_code error) {
    if (!error) return false;
    if (error == boost::beast::error::timeout) service_.CountTimeout();
    return true;
  }

  // A kept-alive connection may idle for idle_timeout; the first request's
  // first byte, and every header once begun, must come within
  // header_timeout.
  void WaitForRequest(bool first) {
    if (service_.stopping()) return;
    Wait();
    if (buffer_.size() > 0) return ReadHeader();
    const auto& options = service_.options();
    Lowest().expires_after(first ? options.header_timeout
                                 : options.idle_timeout);
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            [self = this->shared_from_this()](
                                boost::beast::error_code error, size_t bytes) {
                              self->buffer_.commit(bytes);
                              if (self->Failed(error)) return self->Unwait();
                              self->ReadHeader();
                            });
  }

  void ReadHeader() {
    Lowest().expires_after(service_.options().header_timeout);
    parser_.emplace();
    parser_->header_limit(kHeaderLimit);
    parser_->body_limit(service_.options().max_body_bytes);
    boost::beast::http::async_read_header(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](boost::beast::error_code error,
                                          size_t) {
          self->Unwait();
          if (error == boost::beast::http::error::body_limit) {
            return self->TooLarge();
          }
          if (self->Failed(error)) return;
          self->OnHeader();
        });
  }

  void OnHeader() {
    size_t bytes = 0;
    if (auto length = parser_->content_length()) {
      bytes = static_cast<size_t>(*length);
    } else if (parser_->chunked()) {
      bytes = service_.options().max_body_bytes;
    }
    if (bytes <= service_.options().small_body_bytes) return ContinueBody();
    service_.AcquireBudget(bytes, [self = this->shared_from_this(), bytes] {
      self->reserved_ = bytes;
      self->ContinueBody();
    });
  }

  // Answers "Expect: 100-continue" (curl sends it for large bodies) before
  // the body is read.
  void ContinueBody() {
    namespace http = boost::beast::http;
    const auto& request = parser_->get();
    auto expect = request.find(http::field::expect);
    if (parser_->is_done() || expect == request.end() ||
        !boost::beast::iequals(expect->value(), "100-continue")) {
      return ReadBody();
    }
    auto interim = std::make_shared<http::response<http::empty_body>>(
        http::status::continue_, request.version());
    Lowest().expires_after(service_.options().write_timeout);
    http::async_write(stream_, *interim,
                      [self = this->shared_from_this(), interim](
                          boost::beast::error_code error, size_t) {
                        if (self->Failed(error)) return;
                        self->ReadBody();
                      });
  }

  void ReadBody() {
    if (parser_->is_done()) return Dispatch();
    Lowest().expires_after(service_.options().body_timeout);
    boost::beast::http::async_read(
        stream_, buffer_, *parser_,
        [self = this->shared_from_this()](boost::beast::error_code error,
                                          size_t) {
          if (error == boost::beast::http::error::body_limit) {
            return self->TooLarge();
          }
          if (self->Failed(error)) return;
          self->Dispatch();
        });
  }

  void Dispatch() {
    Lowest().expires_never();
    auto message = parser_->release();
    parser_.reset();
    keep_alive_ = message.keep_alive();
    version_ = message.version();
    HttpRequest request;
    request.method = std::string(message.method_string());
    const boost::beast::string_view target = message.target();
    request.path = std::string(target.substr(0, target.find('?')));
    request.body = std::move(message.body());
    request.authenticated = authenticated_;
    service_.Dispatch(std::move(request),
                      [self = this->shared_from_this()](HttpResponse answer) {
                        self->Write(std::move(answer), self->keep_alive_);
                      });
  }

  // The body is not read: answer and close, reading what the client still
  // sends for a while first (a client that writes its whole body before it
  // reads would otherwise meet a reset, not the 413).
  void TooLarge() {
    service_.CountTooLarge();
    linger_ = true;
    HttpResponse answer;
    answer.status = 413;
    answer.body = "request body too large\n";
    version_ = parser_ ? parser_->get().version() : 11;
    Write(std::move(answer), /*keep_alive=*/false);
  }

  void Write(HttpResponse answer, bool keep_alive) {
    namespace http = boost::beast::http;
    if (reserved_ > 0) service_.ReleaseBudget(reserved_);
    reserved_ = 0;
    auto response = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(answer.status), version_);
    response->set(http::field::content_type, answer.content_type);
    response->body() = std::move(answer.body);
    response->keep_alive(keep_alive && !service_.stopping());
    response->prepare_payload();
    Lowest().expires_after(service_.options().write_timeout);
    http::async_write(stream_, *response,
                      [self = this->shared_from_this(), response](
                          boost::beast::error_code error, size_t) {
                        if (self->Failed(error)) return;
                        if (!response->keep_alive()) return self->Shutdown();
                        self->WaitForRequest(/*first=*/false);
                      });
  }

  void Shutdown() {
    boost::beast::error_code ignored;
    Lowest().socket().shutdown(boost::asio::ip::tcp::socket::shutdown_send,
                               ignored);
    if (!linger_) return;
    Lowest().expires_after(kLingerTime);
    Discard(0);
  }

  // Reads and drops what the client sends until it stops, the linger time
  // ends or twice the largest body has come.
  void Discard(size_t dropped) {
    if (dropped > 2 * service_.options().max_body_bytes) return;
    buffer_.clear();
    stream_.async_read_some(buffer_.prepare(kReadChunk),
                            [self = this->shared_from_this(), dropped](
                                boost::beast::error_code error, size_t bytes) {
                              if (error) return;
                              self->Discard(dropped + bytes);
                            });
  }

  HttpService::Impl& service_;
  Stream stream_;
  boost::beast::flat_buffer buffer_;
  std::optional<
      boost::beast::http::request_parser<boost::beast::http::string_body>>
      parser_;
  bool waiting_ = false;
  HttpService::Impl::WaitToken token_;
  size_t reserved_ = 0;  // of the large-body budget
  bool keep_alive_ = false;
  bool authenticated_ = false;
  bool linger_ = false;  // drain the unread body before closing
  unsigned version_ = 11;
};

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_HTTP_SESSION_H_
