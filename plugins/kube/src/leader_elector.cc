#include "deviceshare/kube/leader_elector.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "deviceshare/kube/api_status.h"
#include "deviceshare/kube/object_paths.h"

namespace deviceshare::kube {
namespace {

using json = nlohmann::json;

std::string LeasesPath(const std::string& lease_namespace) {
  return absl::StrCat("/apis/coordination.k8s.io/v1/namespaces/",
                      EscapeUrlComponent(lease_namespace), "/leases");
}

// metav1.MicroTime's wire form.
std::string MicroTime(absl::Time time) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E6SZ", time, absl::UTCTimeZone());
}

int64_t WholeSeconds(absl::Duration duration) {
  return absl::ToInt64Seconds(absl::Ceil(duration, absl::Seconds(1)));
}

std::string StringField(const json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

int64_t IntField(const json& object, const char* key, int64_t fallback) {
  auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int64_t>()
                                                       : fallback;
}

absl::Status CheckOptions(const LeaderElectionOptions& options) {
  if (options.name.empty()) {
    return absl::InvalidArgumentError("--leader-elect-lease-name: empty");
  }
  if (options.identity.empty()) {
    return absl::InvalidArgumentError("--leader-elect-identity: empty");
  }
  if (options.lease_namespace.empty()) {
    return absl::InvalidArgumentError("--leader-elect-namespace: empty");
  }
  if (!(absl::ZeroDuration() < options.retry_period &&
        options.retry_period < options.renew_deadline &&
        options.renew_deadline < options.lease_duration)) {
    return absl::InvalidArgumentError(
        absl::StrCat("leader election: need 0 < --leader-elect-retry-period (",
                     absl::FormatDuration(options.retry_period),
                     ") < --leader-elect-renew-deadline (",
                     absl::FormatDuration(options.renew_deadline),
                     ") < --leader-elect-lease-duration (",
                     absl::FormatDuration(options.lease_duration), ")"));
  }
  return absl::OkStatus();
}

}  // namespace

std::string LeasePath(const std::string& lease_namespace,
                      const std::string& name) {
  return absl::StrCat(LeasesPath(lease_namespace), "/",
                      EscapeUrlComponent(name));
}

absl::StatusOr<std::unique_ptr<LeaderElector>> LeaderElector::Create(
    ApiClient* client, const Clock* clock, LeaderElectionOptions options,
    LeadershipHandler on_change) {
  if (absl::Status valid = CheckOptions(options); !valid.ok()) return valid;
  return std::unique_ptr<LeaderElector>(new LeaderElector(
      client, clock, std::move(options), std::move(on_change)));
}

LeaderElector::LeaderElector(ApiClient* client, const Clock* clock,
                             LeaderElectionOptions options,
                             LeadershipHandler on_change)
    : client_(client),
      clock_(clock),
      options_(std::move(options)),
      on_change_(std::move(on_change)),
      path_(LeasePath(options_.lease_namespace, options_.name)) {}

bool LeaderElector::IsLeader() const {
  absl::MutexLock lock(&mu_);
  return leading_ && clock_->Now() < renewed_at_ + options_.renew_deadline;
}

bool LeaderElector::TryAcquireOrRenew() {
  const absl::Time started = clock_->Now();
  bool lapsed = false;
  {
    absl::MutexLock lock(&mu_);
    lapsed = leading_ && started >= renewed_at_ + options_.renew_deadline;
  }
  // A leader that could not renew in time has stopped acting already
  // (IsLeader); say so before trying again as a candidate.
  if (lapsed) SetLeading(false, absl::InfinitePast());
  return TryRound(started);
}

bool LeaderElector::TryRound(absl::Time started) {
  absl::StatusOr<json> lease = client_->Get(path_);
  if (!lease.ok()) {
    if (HttpStatusOf(lease.status()) != 404) {
      RecordError(lease.status());
      return IsLeader();
    }
    return WriteLease(nullptr, started);
  }
  const json spec = lease->value("spec", json::object());
  const std::string holder = StringField(spec, "holderIdentity");
  const std::string record = spec.dump();
  if (record != observed_record_) {
    observed_record_ = record;
    observed_at_ = started;
  }
  {
    absl::MutexLock lock(&mu_);
    observed_holder_ = holder;
  }
  const absl::Duration their_duration = absl::Seconds(IntField(
      spec, "leaseDurationSeconds", WholeSeconds(options_.lease_duration)));
  if (!holder.empty() && holder != options_.identity &&
      started < observed_at_ + their_duration) {
    SetLeading(false, absl::InfinitePast());
    RecordError(absl::OkStatus());
    return false;
  }
  return WriteLease(&*lease, started);
}

// Creates the lease (`current` null) or updates it conditionally on the
// resourceVersion read.
bool LeaderElector::WriteLease(const json* current, absl::Time now) {
  const std::string stamp = MicroTime(now);
  json spec = {{"holderIdentity", options_.identity},
               {"leaseDurationSeconds", WholeSeconds(options_.lease_duration)},
               {"acquireTime", stamp},
               {"renewTime", stamp},
               {"leaseTransitions", 0}};
  bool taking_over = true;
  absl::StatusOr<json> written;
  if (current == nullptr) {
    json lease = {
        {"apiVersion", "coordination.k8s.io/v1"},
        {"kind", "Lease"},
        {"metadata",
         {{"name", options_.name}, {"namespace", options_.lease_namespace}}},
        {"spec", spec}};
    written = client_->Post(LeasesPath(options_.lease_namespace), lease);
  } else {
    const json old_spec = current->value("spec", json::object());
    taking_over = StringField(old_spec, "holderIdentity") != options_.identity;
    const int64_t transitions = IntField(old_spec, "leaseTransitions", 0);
    if (!taking_over) {
      spec["acquireTime"] = StringField(old_spec, "acquireTime");
      spec["leaseTransitions"] = transitions;
    } else {
      spec["leaseTransitions"] = transitions + 1;
    }
    json lease = *current;
    lease["spec"] = spec;
    written = client_->Put(path_, lease);
  }
  if (!written.ok()) {
    RecordError(written.status());
    // 409: another candidate wrote first; the lease is not ours.
    if (HttpStatusOf(written.status()) == 409) {
      SetLeading(false, absl::InfinitePast());
      return false;
    }
    return IsLeader();
  }
  observed_record_ = written->value("spec", json::object()).dump();
  observed_at_ = now;
  {
    absl::MutexLock lock(&mu_);
    observed_holder_ = options_.identity;
    if (taking_over) ++acquisitions_;
  }
  RecordError(absl::OkStatus());
  SetLeading(true, now);
  return true;
}

void LeaderElector::SetLeading(bool leading, absl::Time renewed) {
  bool changed = false;
  {
    absl::MutexLock lock(&mu_);
    changed = leading_ != leading;
    leading_ = leading;
    if (leading) renewed_at_ = renewed;
  }
  if (changed && on_change_) on_change_(leading);
}

void LeaderElector::RecordError(const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  last_error_ = status;
}

void LeaderElector::Run(const std::atomic<bool>& stop) {
  while (!stop.load()) {
    TryAcquireOrRenew();
    const absl::Time next = absl::Now() + options_.retry_period;
    while (!stop.load() && absl::Now() < next) {
      absl::SleepFor(absl::Milliseconds(50));
    }
  }
  Release();
}

void LeaderElector::Release() {
  {
    absl::MutexLock lock(&mu_);
    if (!leading_) return;
  }
  // Acting stops before the lease is given up, never after.
  SetLeading(false, absl::InfinitePast());
  absl::StatusOr<json> lease = client_->Get(path_);
  if (!lease.ok()) {
    RecordError(lease.status());
    return;
  }
  json spec = lease->value("spec", json::object());
  if (StringField(spec, "holderIdentity") != options_.identity) return;
  const std::string stamp = MicroTime(clock_->Now());
  spec["holderIdentity"] = "";
  spec["leaseDurationSeconds"] = 1;
  spec["renewTime"] = stamp;
  spec["acquireTime"] = stamp;
  json released = *lease;
  released["spec"] = spec;
  absl::StatusOr<json> written = client_->Put(path_, released);
  RecordError(written.status());
}

std::string LeaderElector::observed_holder() const {
  absl::MutexLock lock(&mu_);
  return observed_holder_;
}

int64_t LeaderElector::acquisitions() const {
  absl::MutexLock lock(&mu_);
  return acquisitions_;
}

absl::Status LeaderElector::last_error() const {
  absl::MutexLock lock(&mu_);
  return last_error_;
}

}  // namespace deviceshare::kube
