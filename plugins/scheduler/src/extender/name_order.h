// NameOrder: the positions of a request's node names in name order
// (std::string's), for the last list asked. kube-scheduler sends the same
// list of every node call after call, so /filter sorts the names once and
// then orders the fitting nodes by their verdicts' integer keys alone: a
// stable sort of nodes already in name order breaks ties by name, as
// BetterVerdict() does.
//
// Thread safety: thread-safe; a returned order is immutable.
#ifndef DEVICESHARE_EXTENDER_NAME_ORDER_H_
#define DEVICESHARE_EXTENDER_NAME_ORDER_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/extender/name_list.h"

namespace deviceshare::extender {

class NameOrder {
 public:
  using Positions = std::vector<uint32_t>;

  // Every position of `names`, the positions of equal names ascending.
  std::shared_ptr<const Positions> Of(const NameList& names)
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::Mutex mu_;
  NameList names_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const Positions> order_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_NAME_ORDER_H_
