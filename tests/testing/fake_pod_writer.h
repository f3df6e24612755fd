// File: testing/fake_pod_writer.h
//
// An in-memory PodWriter: pods by "namespace/name", the patches and
// bindings made, and failures to inject. Thread-safe.
#ifndef DEVICESHARE_TESTS_TESTING_FAKE_POD_WRITER_H_
#define DEVICESHARE_TESTS_TESTING_FAKE_POD_WRITER_H_

#include <map>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "deviceshare/extender/pod_writer.h"

namespace deviceshare::testing {

class FakePodWriter final : public extender::PodWriter {
 public:
  struct EventRecord {
    std::string pod;
    std::string type;
    std::string reason;
    std::string message;
  };

  void AddPod(const nlohmann::json& pod);
  // The pod with every patch applied and spec.nodeName set once bound.
  std::optional<nlohmann::json> Pod(const std::string& key) const;
  std::map<std::string, std::string> BindingsByPod() const;
  std::vector<EventRecord> Events() const;
  void FailNextBinds(int count);
  void FailNextPatches(int count);

  absl::StatusOr<nlohmann::json> GetPod(const extender::PodName& pod) override;
  absl::Status PatchAnnotations(
      const extender::PodName& pod,
      const std::map<std::string, std::optional<std::string>>& annotations)
      override;
  absl::Status Bind(const extender::PodName& pod,
                    absl::string_view node) override;
  void Event(const extender::PodName& pod, absl::string_view type,
             absl::string_view reason, absl::string_view message) override;

 private:
  mutable absl::Mutex mu_;
  std::map<std::string, nlohmann::json> pods_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> bindings_ ABSL_GUARDED_BY(mu_);
  std::vector<EventRecord> events_ ABSL_GUARDED_BY(mu_);
  int fail_binds_ ABSL_GUARDED_BY(mu_) = 0;
  int fail_patches_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_FAKE_POD_WRITER_H_
