// File: bench/churn_faults.h
//
// The churn soak's fault injector: each call of Inject() ends the previous
// slow period and applies one fault, picked at random, to the in-memory API
// server (tests/testing/fake_api_server.h):
//
//   bindings-5xx    the next 1-5 Binding POSTs answer 500 or 503
//   patches-5xx     the next 1-5 pod PATCHes (allocation records, their
//                   rollbacks) answer 500 or 503
//   slow-bindings   every Binding waits 200-1500 ms until the next fault
//   slow-patches    every pod PATCH waits 100-800 ms until the next fault
//   dropped-watches every open watch ends (CloseWatches)
//   410-event       the watches are held back 300 ms, the history is
//                   compacted and the watches dropped: a watch resumed from
//                   before gets an ERROR event 410
//   410-http        the same, answered HTTP 410 instead
//   reads-5xx       the watches are dropped and the next 1-4 lists or
//                   watches answer 500 or 503
//
// Not thread-safe: one thread injects; the server is thread-safe.
#ifndef DEVICESHARE_BENCH_CHURN_FAULTS_H_
#define DEVICESHARE_BENCH_CHURN_FAULTS_H_

#include <array>
#include <cstdint>
#include <random>
#include <string>

#include "testing/fake_api_server.h"

namespace deviceshare::bench {

class FaultInjector {
 public:
  static constexpr int kKinds = 8;

  FaultInjector(testing::FakeApiServer* api, uint64_t seed)
      : api_(api), random_(seed) {}

  // Applies one fault; returns its kind's name.
  std::string Inject();
  // Ends every fault still in force (slow periods, failures not yet
  // taken, HTTP 410 answers).
  void Clear();

  static const char* KindName(int kind);
  const std::array<int64_t, kKinds>& counts() const { return counts_; }
  int64_t total() const;

 private:
  int Between(int low, int high);

  testing::FakeApiServer* api_;
  std::mt19937_64 random_;
  std::array<int64_t, kKinds> counts_{};
};

}  // namespace deviceshare::bench

#endif  // DEVICESHARE_BENCH_CHURN_FAULTS_H_
