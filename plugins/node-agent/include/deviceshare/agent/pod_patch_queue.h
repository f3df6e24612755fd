// File: agent/pod_patch_queue.h
//
// PodPatchQueue: writes annotations to pods in the background, so that
// answering kubelet never waits on the API server. Patches for one pod are
// merged while they wait; each is a JSON merge patch that also names the
// pod's uid (a pod deleted and recreated under the same name is not
// patched: the API server answers 409). Failures are retried with
// exponential backoff (up to max_attempts); NotFound and Conflict drop the
// patch (the pod is gone or is another pod now).
//
// Thread safety: Enqueue may be called from any thread.
#ifndef DEVICESHARE_AGENT_POD_PATCH_QUEUE_H_
#define DEVICESHARE_AGENT_POD_PATCH_QUEUE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "deviceshare/kube/api_client.h"
#include "nlohmann/json.hpp"

namespace deviceshare::agent {

struct PodPatchQueueOptions {
  int max_attempts = 8;
  absl::Duration initial_backoff = absl::Milliseconds(200);
  absl::Duration max_backoff = absl::Seconds(10);
};

class PodPatchQueue {
 public:
  // `client` must outlive the queue.
  PodPatchQueue(kube::ApiClient* client, PodPatchQueueOptions options = {});
  ~PodPatchQueue();  // finishes what is queued (one attempt each), then ends

  // `pod_key` is "namespace/name"; `annotations` a merge patch of
  // metadata.annotations.
  void Enqueue(const std::string& pod_key, const std::string& pod_uid,
               const nlohmann::json& annotations);

  // Waits until nothing is queued or `timeout` passes; true when empty.
  bool Drain(absl::Duration timeout);

  int64_t applied() const;
  int64_t dropped() const;

 private:
  struct Pending {
    std::string uid;
    nlohmann::json annotations;
    int attempts = 0;
    absl::Time not_before;
  };
  void Run();

  kube::ApiClient* const client_;
  const PodPatchQueueOptions options_;
  mutable absl::Mutex mu_;
  std::map<std::string, Pending> pending_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  int64_t applied_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t dropped_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_POD_PATCH_QUEUE_H_
