#include "connection_pool.h"

#include <algorithm>
#include <utility>

namespace deviceshare::kube::internal {

ConnectionPool::ConnectionPool(const ConnectionFactory* factory, int max,
                               absl::Duration read_timeout)
    : factory_(factory), max_(std::max(max, 1)), read_timeout_(read_timeout) {}

ConnectionPool::Lease::~Lease() {
  if (pool_ != nullptr) pool_->Return(std::move(client_));
}

ConnectionPool::Lease ConnectionPool::Acquire() {
  {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(this, &ConnectionPool::HasCapacity));
    if (!idle_.empty()) {
      std::unique_ptr<httplib::ClientImpl> client = std::move(idle_.back());
      idle_.pop_back();
      return Lease(this, std::move(client));
    }
    ++created_;
  }
  // Connecting happens on first use, so making a client is cheap; it is done
  // outside the lock all the same (TLS context set-up).
  return Lease(this, factory_->New(read_timeout_));
}

void ConnectionPool::Return(std::unique_ptr<httplib::ClientImpl> client) {
  absl::MutexLock lock(&mu_);
  if (client == nullptr) {
    --created_;
  } else {
    idle_.push_back(std::move(client));
  }
}

}  // namespace deviceshare::kube::internal
