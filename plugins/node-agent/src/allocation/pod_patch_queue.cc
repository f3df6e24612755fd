#include "deviceshare/agent/pod_patch_queue.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_split.h"
#include "deviceshare/kube/api_status.h"
#include "deviceshare/kube/object_paths.h"
#include "spdlog/spdlog.h"

namespace deviceshare::agent {

PodPatchQueue::PodPatchQueue(kube::ApiClient* client,
                             PodPatchQueueOptions options)
    : client_(client), options_(options), thread_([this] { Run(); }) {}

PodPatchQueue::~PodPatchQueue() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  thread_.join();
}

void PodPatchQueue::Enqueue(const std::string& pod_key,
                            const std::string& pod_uid,
                            const nlohmann::json& annotations) {
  absl::MutexLock lock(&mu_);
  Pending& pending = pending_[pod_key];
  if (pending.uid != pod_uid) {
    pending = Pending{pod_uid, nlohmann::json::object(), 0, absl::Now()};
  }
  pending.annotations.merge_patch(annotations);
  // merge_patch drops nulls; a deletion must reach the API server.
  for (const auto& [key, value] : annotations.items()) {
    if (value.is_null()) pending.annotations[key] = nullptr;
  }
  pending.not_before = std::min(pending.not_before, absl::Now());
}

bool PodPatchQueue::Drain(absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto empty = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
    return pending_.empty() && !busy_;
  };
  return mu_.AwaitWithTimeout(absl::Condition(&empty), timeout);
}

int64_t PodPatchQueue::applied() const {
  absl::MutexLock lock(&mu_);
  return applied_;
}

int64_t PodPatchQueue::dropped() const {
  absl::MutexLock lock(&mu_);
  return dropped_;
}

void PodPatchQueue::Run() {
  while (true) {
    std::string key;
    Pending work;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) {
        if (stopping_) return true;
        const absl::Time now = absl::Now();
        for (const auto& [k, p] : pending_) {
          if (p.not_before <= now) return true;
        }
        return false;
      };
      mu_.AwaitWithTimeout(absl::Condition(&ready), absl::Milliseconds(50));
      if (stopping_ && pending_.empty()) return;
      const absl::Time now = absl::Now();
      auto next =
          std::find_if(pending_.begin(), pending_.end(), [&](const auto& item) {
            return stopping_ || item.second.not_before <= now;
          });
      if (next == pending_.end()) continue;
      key = next->first;
      work = std::move(next->second);
      pending_.erase(next);
      busy_ = true;
    }
    std::vector<std::string> parts = absl::StrSplit(key, '/');
    nlohmann::json patch;
    patch["metadata"]["uid"] = work.uid;
    patch["metadata"]["annotations"] = work.annotations;
    absl::Status status =
        parts.size() == 2
            ? client_->MergePatch(kube::PodPath(parts[0], parts[1]), patch)
                  .status()
            : absl::InvalidArgumentError("pod key is not namespace/name");
    absl::MutexLock lock(&mu_);
    busy_ = false;
    if (status.ok()) {
      ++applied_;
      continue;
    }
    const int http = kube::HttpStatusOf(status).value_or(0);
    ++work.attempts;
    if (http == 404 || http == 409 || work.attempts >= options_.max_attempts ||
        stopping_ || parts.size() != 2) {
      ++dropped_;
      spdlog::warn("pod {}: annotations not written: {}", key,
                   status.ToString());
      continue;
    }
    absl::Duration backoff = options_.initial_backoff;
    for (int i = 1; i < work.attempts; ++i) {
      backoff = std::min(backoff * 2, options_.max_backoff);
    }
    work.not_before = absl::Now() + backoff;
    auto [slot, inserted] = pending_.try_emplace(key, std::move(work));
    if (!inserted && slot->second.uid == work.uid) {
      // Newer annotations arrived meanwhile: put the old ones underneath.
      nlohmann::json merged = work.annotations;
      merged.merge_patch(slot->second.annotations);
      slot->second.annotations = std::move(merged);
    }
  }
}

}  // namespace deviceshare::agent
