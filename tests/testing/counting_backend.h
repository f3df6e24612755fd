// File: testing/counting_backend.h
//
// CountingBackend: a SharingBackend that forwards every call to a real one
// and counts the filter step per node, so a test can show how often a
// decision evaluates each node. RegisterCountingBuiltins() registers every
// built-in backend wrapped this way, sharing one FilterCounts.
//
// Thread safety: the counts are guarded; the rest is the wrapped backend's.
#ifndef DEVICESHARE_TESTS_TESTING_COUNTING_BACKEND_H_
#define DEVICESHARE_TESTS_TESTING_COUNTING_BACKEND_H_

#include <map>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "deviceshare/backend/backend_registry.h"

namespace deviceshare::testing {

class FilterCounts {
 public:
  void Add(const std::string& node) ABSL_LOCKS_EXCLUDED(mu_);
  // Node name -> filter calls since the last Take().
  std::map<std::string, int> Take() ABSL_LOCKS_EXCLUDED(mu_);

 private:
  absl::Mutex mu_;
  std::map<std::string, int> counts_ ABSL_GUARDED_BY(mu_);
};

// Every backend RegisterBuiltinBackends() knows, each counting into
// `counts` (which must outlive the backends).
absl::Status RegisterCountingBuiltins(BackendRegistry& registry,
                                      FilterCounts* counts);

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_COUNTING_BACKEND_H_
