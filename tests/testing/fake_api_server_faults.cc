// FakeApiServer's faults of reads and slow pod writes, and the pod
// snapshot a soak audits: what a long churn run (bench/churn_soak.cc)
// needs beyond the write faults of fake_api_server.cc.
#include "testing/fake_api_server.h"

namespace deviceshare::testing {

void FakeApiServer::FailNextListsAndWatches(int count, int http_status) {
  absl::MutexLock lock(&mu_);
  failing_reads_ = count;
  read_failure_status_ = http_status;
}

int FakeApiServer::TakeListOrWatchFault() {
  absl::MutexLock lock(&mu_);
  return TakeFault(failing_reads_, read_failure_status_);
}

void FakeApiServer::SetPodPatchDelay(absl::Duration delay) {
  absl::MutexLock lock(&mu_);
  pod_patch_delay_ = delay;
}

absl::Duration FakeApiServer::PodPatchDelay() const {
  absl::MutexLock lock(&mu_);
  return pod_patch_delay_;
}

std::vector<std::shared_ptr<const nlohmann::json>> FakeApiServer::PodSnapshot()
    const {
  absl::StatusOr<ObjectFilter> everything = ObjectFilter::Parse("", "", "");
  if (!everything.ok()) return {};
  return store_.List(ApiResource::kPods, *everything).second;
}

}  // namespace deviceshare::testing
