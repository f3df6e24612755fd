#include "testing/fake_pod_writer.h"

#include "absl/strings/str_cat.h"

namespace deviceshare::testing {

void FakePodWriter::AddPod(const nlohmann::json& pod) {
  absl::MutexLock lock(&mu_);
  pods_[absl::StrCat(pod["metadata"]["namespace"].get<std::string>(), "/",
                     pod["metadata"]["name"].get<std::string>())] = pod;
}

std::optional<nlohmann::json> FakePodWriter::Pod(const std::string& key) const {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(key);
  if (it == pods_.end()) return std::nullopt;
  return it->second;
}

std::map<std::string, std::string> FakePodWriter::BindingsByPod() const {
  absl::MutexLock lock(&mu_);
  return bindings_;
}

std::vector<FakePodWriter::EventRecord> FakePodWriter::Events() const {
  absl::MutexLock lock(&mu_);
  return events_;
}

void FakePodWriter::FailNextBinds(int count) {
  absl::MutexLock lock(&mu_);
  fail_binds_ = count;
}

void FakePodWriter::FailNextPatches(int count) {
  absl::MutexLock lock(&mu_);
  fail_patches_ = count;
}

absl::StatusOr<nlohmann::json> FakePodWriter::GetPod(
    const extender::PodName& pod) {
  absl::MutexLock lock(&mu_);
  auto it = pods_.find(pod.Key());
  if (it == pods_.end()) {
    return absl::NotFoundError(
        absl::StrCat("pods \"", pod.name, "\" not found"));
  }
  return it->second;
}

absl::Status FakePodWriter::PatchAnnotations(
    const extender::PodName& pod,
    const std::map<std::string, std::optional<std::string>>& annotations) {
  absl::MutexLock lock(&mu_);
  if (fail_patches_ > 0) {
    --fail_patches_;
    return absl::UnavailableError("injected patch failure");
  }
  auto it = pods_.find(pod.Key());
  if (it == pods_.end()) {
    return absl::NotFoundError(
        absl::StrCat("pods \"", pod.name, "\" not found"));
  }
  nlohmann::json& target = it->second["metadata"]["annotations"];
  if (!target.is_object()) target = nlohmann::json::object();
  for (const auto& [key, value] : annotations) {
    if (value) {
      target[key] = *value;
    } else {
      target.erase(key);
    }
  }
  return absl::OkStatus();
}

absl::Status FakePodWriter::Bind(const extender::PodName& pod,
                                 absl::string_view node) {
  absl::MutexLock lock(&mu_);
  if (fail_binds_ > 0) {
    --fail_binds_;
    return absl::UnavailableError("injected binding failure");
  }
  auto it = pods_.find(pod.Key());
  if (it == pods_.end()) {
    return absl::NotFoundError(
        absl::StrCat("pods \"", pod.name, "\" not found"));
  }
  if (bindings_.count(pod.Key())) {
    return absl::AlreadyExistsError(
        absl::StrCat("pod ", pod.name, " is already assigned"));
  }
  it->second["spec"]["nodeName"] = std::string(node);
  bindings_[pod.Key()] = std::string(node);
  return absl::OkStatus();
}

void FakePodWriter::Event(const extender::PodName& pod, absl::string_view type,
                          absl::string_view reason, absl::string_view message) {
  absl::MutexLock lock(&mu_);
  events_.push_back({pod.Key(), std::string(type), std::string(reason),
                     std::string(message)});
}

}  // namespace deviceshare::testing
