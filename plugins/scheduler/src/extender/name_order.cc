#include "name_order.h"

#include <algorithm>
#include <numeric>

namespace deviceshare::extender {

std::shared_ptr<const NameOrder::Positions> NameOrder::Of(
    const NameList& names) {
  {
    absl::MutexLock lock(&mu_);
    if (order_ != nullptr && names_ == names) return order_;
  }
  auto order = std::make_shared<Positions>(names.size());
  std::iota(order->begin(), order->end(), 0);
  std::stable_sort(order->begin(), order->end(),
                   [&](uint32_t a, uint32_t b) { return names[a] < names[b]; });
  absl::MutexLock lock(&mu_);
  names_ = names;
  order_ = order;
  return order;
}

}  // namespace deviceshare::extender
