// File: connection_pool.h (internal)
//
// Up to `max` HTTP clients reused across requests. A request leases one for
// its whole exchange; when all are leased, Acquire waits for one to come
// back, which bounds the connections a busy process opens to the API server.
//
// Thread safety: Acquire may be called from any thread; a Lease belongs to
// the thread that holds it.
#ifndef DEVICESHARE_KUBE_SRC_CONNECTION_POOL_H_
#define DEVICESHARE_KUBE_SRC_CONNECTION_POOL_H_

#include <httplib.h>

#include <memory>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "http_connection.h"

namespace deviceshare::kube::internal {

class ConnectionPool {
 public:
  // `factory` must outlive the pool.
  ConnectionPool(const ConnectionFactory* factory, int max,
                 absl::Duration read_timeout);

  // A client on loan; returned to the pool when the lease ends.
  class Lease {
   public:
    Lease(ConnectionPool* pool, std::unique_ptr<httplib::ClientImpl> client)
        : pool_(pool), client_(std::move(client)) {}
    Lease(Lease&& other) noexcept
        : pool_(std::exchange(other.pool_, nullptr)),
          client_(std::move(other.client_)) {}
    Lease& operator=(Lease&&) = delete;
    ~Lease();

    // Null when no client could be made.
    httplib::ClientImpl* get() const { return client_.get(); }

   private:
    ConnectionPool* pool_;
    std::unique_ptr<httplib::ClientImpl> client_;
  };

  Lease Acquire();

 private:
  bool HasCapacity() const ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return !idle_.empty() || created_ < max_;
  }
  void Return(std::unique_ptr<httplib::ClientImpl> client);

  const ConnectionFactory* const factory_;
  const int max_;
  const absl::Duration read_timeout_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<httplib::ClientImpl>> idle_ ABSL_GUARDED_BY(mu_);
  int created_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace deviceshare::kube::internal

#endif  // DEVICESHARE_KUBE_SRC_CONNECTION_POOL_H_
