#include "churn_faults.h"

#include "absl/time/time.h"

namespace deviceshare::bench {

const char* FaultInjector::KindName(int kind) {
  static constexpr const char* kNames[kKinds] = {
      "bindings-5xx",    "patches-5xx", "slow-bindings", "slow-patches",
      "dropped-watches", "410-event",   "410-http",      "reads-5xx"};
  return kind >= 0 && kind < kKinds ? kNames[kind] : "unknown";
}

int FaultInjector::Between(int low, int high) {
  return std::uniform_int_distribution<int>(low, high)(random_);
}

int64_t FaultInjector::total() const {
  int64_t sum = 0;
  for (int64_t count : counts_) sum += count;
  return sum;
}

void FaultInjector::Clear() {
  api_->SetBindingDelay(absl::ZeroDuration());
  api_->SetPodPatchDelay(absl::ZeroDuration());
  api_->FailNextBindings(0, 0);
  api_->FailNextPodPatches(0, 0);
  api_->FailNextListsAndWatches(0, 0);
  api_->AnswerExpiredWatchesWithHttp410(false);
}

std::string FaultInjector::Inject() {
  api_->SetBindingDelay(absl::ZeroDuration());
  api_->SetPodPatchDelay(absl::ZeroDuration());
  const int kind = Between(0, kKinds - 1);
  const int status = Between(0, 1) == 0 ? 500 : 503;
  switch (kind) {
    case 0:
      api_->FailNextBindings(Between(1, 5), status);
      break;
    case 1:
      api_->FailNextPodPatches(Between(1, 5), status);
      break;
    case 2:
      api_->SetBindingDelay(absl::Milliseconds(Between(200, 1500)));
      break;
    case 3:
      api_->SetPodPatchDelay(absl::Milliseconds(Between(100, 800)));
      break;
    case 4:
      api_->CloseWatches();
      break;
    case 5:
    case 6:
      // Held back, every watch falls behind the compaction, the pods'
      // too (they are otherwise always up to date under churn).
      api_->AnswerExpiredWatchesWithHttp410(kind == 6);
      api_->PauseWatches();
      absl::SleepFor(absl::Milliseconds(300));
      api_->CompactHistory();
      api_->CloseWatches();
      api_->ResumeWatches();
      break;
    case 7:
      api_->FailNextListsAndWatches(Between(1, 4), status);
      api_->CloseWatches();
      break;
  }
  ++counts_[kind];
  return KindName(kind);
}

}  // namespace deviceshare::bench
