// The real PodWriter: the API calls of a bind, and events through a queue.
#include <condition_variable>
#include <deque>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/extender/pod_writer.h"
#include "deviceshare/kube/api_client.h"
#include "deviceshare/kube/events.h"
#include "deviceshare/kube/object_paths.h"
#include "extender_log.h"

namespace deviceshare::extender {
namespace {

// Events are a courtesy to the user; a backlog beyond this is dropped
// rather than grow without bound while the API server struggles.
constexpr size_t kMaxQueuedEvents = 1000;

class ApiPodWriter final : public PodWriter {
 public:
  ApiPodWriter(kube::ApiClient* client, const Clock* clock,
               std::string component)
      : client_(client), clock_(clock), component_(std::move(component)) {
    thread_ = std::thread([this] { DrainEvents(); });
  }

  ~ApiPodWriter() override {
    {
      absl::MutexLock lock(&mu_);
      stopping_ = true;
      drain_deadline_ = absl::Now() + absl::Seconds(1);
    }
    thread_.join();
  }

  absl::StatusOr<nlohmann::json> GetPod(const PodName& pod) override {
    return client_->Get(kube::PodPath(pod.namespace_name, pod.name));
  }

  absl::Status PatchAnnotations(
      const PodName& pod,
      const std::map<std::string, std::optional<std::string>>& annotations)
      override {
    nlohmann::json values = nlohmann::json::object();
    for (const auto& [key, value] : annotations) {
      values[key] = value ? nlohmann::json(*value) : nlohmann::json(nullptr);
    }
    nlohmann::json patch = {{"metadata", {{"annotations", std::move(values)}}}};
    // The uid precondition keeps a patch from landing on a pod that was
    // deleted and re-created under the same name.
    if (!pod.uid.empty()) patch["metadata"]["uid"] = pod.uid;
    return client_
        ->MergePatch(kube::PodPath(pod.namespace_name, pod.name), patch)
        .status();
  }

  absl::Status Bind(const PodName& pod, absl::string_view node) override {
    nlohmann::json binding = {
        {"apiVersion", "v1"},
        {"kind", "Binding"},
        {"metadata", {{"name", pod.name}, {"namespace", pod.namespace_name}}},
        {"target",
         {{"apiVersion", "v1"},
          {"kind", "Node"},
          {"name", std::string(node)}}}};
    if (!pod.uid.empty()) binding["metadata"]["uid"] = pod.uid;
    return client_
        ->Post(kube::PodBindingPath(pod.namespace_name, pod.name), binding)
        .status();
  }

  void Event(const PodName& pod, absl::string_view type,
             absl::string_view reason, absl::string_view message) override {
    absl::MutexLock lock(&mu_);
    if (stopping_ || queue_.size() >= kMaxQueuedEvents) return;
    queue_.push_back(QueuedEvent{pod, std::string(type), std::string(reason),
                                 std::string(message), clock_->Now()});
  }

 private:
  struct QueuedEvent {
    PodName pod;
    std::string type;
    std::string reason;
    std::string message;
    absl::Time at;
  };

  void DrainEvents() {
    while (true) {
      QueuedEvent event;
      {
        absl::MutexLock lock(&mu_);
        auto has_work = [this] { return stopping_ || !queue_.empty(); };
        mu_.Await(absl::Condition(&has_work));
        if (queue_.empty() || (stopping_ && absl::Now() > drain_deadline_)) {
          return;
        }
        event = std::move(queue_.front());
        queue_.pop_front();
      }
      absl::Status posted = kube::PostPodEvent(
          *client_,
          kube::PodRef{event.pod.namespace_name, event.pod.name, event.pod.uid},
          event.type, event.reason, event.message, component_, event.at);
      if (!posted.ok()) {
        LogPod(LogLevel::kDebug, event.pod.Key(), "",
               absl::StrCat("event ", event.reason,
                            " not recorded: ", posted.message()));
      }
    }
  }

  kube::ApiClient* const client_;
  const Clock* const clock_;
  const std::string component_;
  absl::Mutex mu_;
  std::deque<QueuedEvent> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Time drain_deadline_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace

std::unique_ptr<PodWriter> MakeApiPodWriter(kube::ApiClient* client,
                                            const Clock* clock,
                                            std::string component) {
  return std::make_unique<ApiPodWriter>(client, clock, std::move(component));
}

}  // namespace deviceshare::extender
