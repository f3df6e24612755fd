#include "deviceshare/agent/allocation_matcher.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "deviceshare/agent/kubelet_checkpoint.h"
#include "deviceshare/backend/backend_registry.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/codec/hami_codec.h"
#include "deviceshare/k8s/pod_annotations.h"
#include "deviceshare/kube/object_fields.h"
#include "deviceshare/mig/mig_backend.h"
#include "deviceshare/model/sharing_mode.h"
#include "deviceshare/mps/mps_backend.h"
#include "deviceshare/status_macros.h"
#include "metrics/agent_metrics.h"
#include "spdlog/spdlog.h"

namespace deviceshare::agent {
namespace {

std::string RefusedWhy(const trust::RecordCheck& check) {
  return absl::StrCat("its allocation record is ",
                      trust::VerdictName(check.verdict), ": ", check.reason);
}

std::string Describe(const std::vector<DeviceGrant>& grants) {
  std::vector<std::string> parts;
  for (const DeviceGrant& grant : grants) {
    std::string part =
        absl::StrCat(grant.uuid, " ", SharingModeName(grant.mode), " ",
                     grant.memory_mib, "MiB ", grant.cores, "%");
    if (!grant.mig.profile.empty()) {
      absl::StrAppend(&part, " ", grant.mig.profile, "@", grant.mig.start);
    }
    parts.push_back(std::move(part));
  }
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

std::vector<std::string> Sorted(std::vector<std::string> ids) {
  std::sort(ids.begin(), ids.end());
  return ids;
}

absl::StatusOr<std::vector<std::string>> IdGpus(
    const std::vector<std::string>& device_ids) {
  std::vector<std::string> gpus;
  for (const std::string& id : device_ids) {
    DS_ASSIGN_OR_RETURN(ReplicaId replica, ParseDeviceId(id));
    gpus.push_back(replica.gpu_uuid);
  }
  std::sort(gpus.begin(), gpus.end());
  return gpus;
}

// The GPU uuids of `grants`, sorted (with repeats), as IdGpus gives them
// for device ids.
std::vector<std::string> GrantGpus(const std::vector<DeviceGrant>& grants) {
  std::vector<std::string> gpus;
  for (const DeviceGrant& grant : grants) gpus.push_back(grant.uuid);
  std::sort(gpus.begin(), gpus.end());
  return gpus;
}

}  // namespace

absl::StatusOr<std::unique_ptr<AllocationMatcher>> AllocationMatcher::Create(
    AllocationMatcherOptions options, const Config& config,
    std::unique_ptr<ServedJournal> journal, PodAnnotator annotate,
    MigPreparer prepare_mig) {
  if (journal == nullptr) {
    return absl::InvalidArgumentError("allocation matcher: no journal");
  }
  std::unique_ptr<AllocationMatcher> matcher(
      new AllocationMatcher(std::move(options), std::move(journal),
                            std::move(annotate), std::move(prepare_mig)));
  BackendRegistry registry;
  DS_RETURN_IF_ERROR(RegisterBuiltinBackends(registry));
  for (const std::string& name : registry.RegisteredNames()) {
    DS_ASSIGN_OR_RETURN(std::unique_ptr<SharingBackend> backend,
                        registry.Create(name, config));
    matcher->backends_[backend->mode()] = std::move(backend);
  }
  matcher->device_config_ = config.device;
  return matcher;
}

AllocationMatcher::AllocationMatcher(AllocationMatcherOptions options,
                                     std::unique_ptr<ServedJournal> journal,
                                     PodAnnotator annotate,
                                     MigPreparer prepare_mig)
    : options_(std::move(options)),
      annotate_(std::move(annotate)),
      prepare_mig_(std::move(prepare_mig)),
      journal_(std::move(journal)) {}

void AllocationMatcher::SetGpus(const std::vector<Gpu>& gpus) {
  absl::MutexLock lock(&mu_);
  gpus_.clear();
  for (const Gpu& gpu : gpus) gpus_[gpu.uuid] = gpu;
}

void AllocationMatcher::ReplacePods(const std::vector<nlohmann::json>& pods) {
  ReplacePodsUnreported(pods);
  ReportRefusals();
}

void AllocationMatcher::ReplacePodsUnreported(
    const std::vector<nlohmann::json>& pods) {
  absl::MutexLock lock(&mu_);
  std::set<std::string> listed;
  for (const nlohmann::json& pod : pods) listed.insert(kube::PodUid(pod));
  std::vector<std::string> gone;
  for (const auto& [uid, state] : pods_) {
    if (!listed.contains(uid)) gone.push_back(uid);
  }
  // Journal entries of pods the agent never saw this run are stale too.
  for (const auto& [key, entry] : journal_->served()) {
    if (!listed.contains(key.first)) gone.push_back(key.first);
  }
  for (const std::string& uid : gone) ForgetLocked(uid);
  for (const nlohmann::json& pod : pods) UpsertLocked(pod);
  ++pod_events_;
}

void AllocationMatcher::ApplyPod(absl::string_view type,
                                 const nlohmann::json& pod) {
  {
    absl::MutexLock lock(&mu_);
    ++pod_events_;
    if (type == "DELETED") {
      ForgetLocked(kube::PodUid(pod));
      return;
    }
    UpsertLocked(pod);
  }
  ReportRefusals();
}

std::optional<trust::RecordCheck> AllocationMatcher::CheckSignatureLocked(
    const nlohmann::json& pod, const PodRecord& record) {
  if (options_.record_keys == nullptr) return std::nullopt;
  trust::RecordCheck check =
      trust::CheckRecord(*options_.record_keys->Keys(), PodAnnotationMap(pod),
                         record.uid, options_.node_name);
  if (options_.record_policy.Accepts(check.verdict)) return std::nullopt;
  const std::string why = RefusedWhy(check);
  auto known = pods_.find(record.uid);
  if (known == pods_.end() || !known->second.refused ||
      RefusedWhy(*known->second.refused) != why) {
    spdlog::warn("pod {}: {}; it will not be served", record.key, why);
    refusal_reports_.push_back(RefusalReport{
        record.key, record.uid,
        absl::StrCat("node agent on ", options_.node_name,
                     " will not hand out this pod's GPUs: ", why)});
  }
  return check;
}

void AllocationMatcher::ReportRefusals() {
  std::vector<RefusalReport> reports;
  {
    absl::MutexLock lock(&mu_);
    reports.swap(refusal_reports_);
  }
  if (!options_.report_refused_record) return;
  for (const RefusalReport& report : reports) {
    options_.report_refused_record(report.pod_key, report.pod_uid,
                                   report.message);
  }
}

std::vector<AllocationMatcher::Candidate> AllocationMatcher::RefusedLocked()
    const {
  std::vector<Candidate> refused;
  for (const auto& [uid, state] : pods_) {
    if (!state.refused) continue;
    for (const ContainerAllocation& container :
         state.record.allocation.containers) {
      if (!container.devices.empty()) {
        refused.push_back(Candidate{&state, container.container_index});
      }
    }
  }
  return refused;
}

std::optional<absl::Status> AllocationMatcher::RefusedRecordFor(
    const std::vector<std::string>& gpus) const {
  for (const auto& [uid, state] : pods_) {
    if (!state.refused) continue;
    for (const ContainerAllocation& container :
         state.record.allocation.containers) {
      if (container.devices.empty() || GrantGpus(container.devices) != gpus) {
        continue;
      }
      absl::Status refusal = absl::PermissionDeniedError(absl::StrCat(
          "pod ", state.record.key, " waits for GPUs ",
          absl::StrJoin(gpus, ","), ", but ", RefusedWhy(*state.refused)));
      refusal.SetPayload(
          metrics::kRefusalReasonPayload,
          absl::Cord(absl::StrCat(trust::VerdictName(state.refused->verdict),
                                  "_record")));
      return refusal;
    }
  }
  return std::nullopt;
}

void AllocationMatcher::UpsertLocked(const nlohmann::json& pod) {
  absl::StatusOr<std::optional<PodRecord>> record =
      ParsePodRecord(pod, options_.node_name, device_config_);
  const std::string uid = kube::PodUid(pod);
  if (!record.ok()) {
    spdlog::warn("pod {}: allocation record not usable: {}", uid,
                 std::string(record.status().message()));
    return;
  }
  if (!record->has_value() || (*record)->finished()) {
    ForgetLocked(uid);
    return;
  }
  PodRecord& fresh = **record;
  std::optional<trust::RecordCheck> refused = CheckSignatureLocked(pod, fresh);
  for (ContainerAllocation& container : fresh.allocation.containers) {
    for (DeviceGrant& grant : container.devices) {
      auto gpu = gpus_.find(grant.uuid);
      if (gpu == gpus_.end()) continue;
      grant.gpu_index = gpu->second.index;
      // The strings carry no MPS marker: an MPS GPU's grants are MPS.
      if (grant.mode != mig::kMode && gpu->second.mode == mps::kMode) {
        grant.mode = mps::kMode;
      }
    }
  }
  auto [it, inserted] = pods_.try_emplace(fresh.uid);
  if (inserted) {
    it->second.sequence = next_sequence_++;
  } else {
    // Keep runtime ids learnt while serving (MIG uuids).
    for (size_t c = 0; c < fresh.allocation.containers.size() &&
                       c < it->second.record.allocation.containers.size();
         ++c) {
      auto& old_devices = it->second.record.allocation.containers[c].devices;
      auto& new_devices = fresh.allocation.containers[c].devices;
      for (size_t d = 0; d < new_devices.size() && d < old_devices.size();
           ++d) {
        if (new_devices[d].mig_uuid.empty() &&
            new_devices[d].uuid == old_devices[d].uuid) {
          new_devices[d].mig_uuid = old_devices[d].mig_uuid;
          new_devices[d].gpu_instance_id = old_devices[d].gpu_instance_id;
          new_devices[d].compute_instance_id =
              old_devices[d].compute_instance_id;
        }
      }
    }
  }
  it->second.record = std::move(fresh);
  it->second.refused = std::move(refused);
  // An agent killed after serving a pod's last container but before its
  // queued success patch reached the API server comes back with the pod
  // still "allocating": its journal says every container is served, so it
  // sends the patch now (MaybeFinishLocked does nothing otherwise).
  const std::string& phase = it->second.record.bind_phase;
  if (phase != keys::kBindPhaseSuccess && phase != keys::kBindPhaseFailed &&
      journal_->HasPod(it->first)) {
    MaybeFinishLocked(it->second);
  }
}

void AllocationMatcher::ForgetLocked(const std::string& uid) {
  if (uid.empty()) return;
  pods_.erase(uid);
  finished_.erase(uid);
  marked_success_.erase(uid);
  if (!journal_->HasPod(uid)) return;
  absl::Status status = journal_->Forget(uid);
  if (!status.ok()) {
    spdlog::warn("pod {}: cannot forget it in the journal: {}", uid,
                 std::string(status.message()));
  }
}

bool AllocationMatcher::ServedLocked(const std::string& uid,
                                     int32_t container) const {
  return journal_->served().contains({uid, container});
}

std::vector<AllocationMatcher::Candidate> AllocationMatcher::WaitingLocked()
    const {
  std::vector<const PodState*> order;
  for (const auto& [uid, state] : pods_) {
    const PodRecord& record = state.record;
    if (record.bind_phase == keys::kBindPhaseFailed) continue;
    if (state.refused) continue;
    if (record.bind_phase == keys::kBindPhaseSuccess &&
        !marked_success_.contains(uid)) {
      // Someone marked it served. Trust that unless our journal knows the
      // pod (then the journal says which containers are left).
      if (!journal_->HasPod(uid)) continue;
    }
    order.push_back(&state);
  }
  std::sort(order.begin(), order.end(),
            [](const PodState* a, const PodState* b) {
              return std::make_pair(a->record.decided_at, a->sequence) <
                     std::make_pair(b->record.decided_at, b->sequence);
            });
  std::vector<Candidate> waiting;
  for (const PodState* state : order) {
    for (const ContainerAllocation& container :
         state->record.allocation.containers) {
      if (container.devices.empty()) continue;
      if (ServedLocked(state->record.uid, container.container_index)) continue;
      waiting.push_back(Candidate{state, container.container_index});
    }
  }
  return waiting;
}

absl::StatusOr<std::vector<std::string>> AllocationMatcher::Preferred(
    const std::vector<std::string>& available,
    const std::vector<std::string>& must_include, int size) {
  std::vector<std::string> included_gpus;
  for (const std::string& id : must_include) {
    DS_ASSIGN_OR_RETURN(ReplicaId replica, ParseDeviceId(id));
    included_gpus.push_back(replica.gpu_uuid);
  }
  for (const std::string& id : available) {
    DS_RETURN_IF_ERROR(ParseDeviceId(id).status());
  }
  absl::MutexLock lock(&mu_);
  // As in Allocate: kubelet may ask before this agent's watch has the pod.
  // Answering "anything" then would steer kubelet to replicas of other
  // GPUs, and the Allocate that follows could only refuse them.
  const absl::Time deadline = absl::Now() + options_.pod_watch_grace;
  std::vector<std::string> answer;
  while (true) {
    if (PreferredLocked(available, must_include, included_gpus, size,
                        &answer)) {
      return answer;
    }
    if (!AwaitPodEventLocked(deadline)) break;
  }
  if (RefreshFromApiLocked()) {
    PreferredLocked(available, must_include, included_gpus, size, &answer);
  }
  return answer;
}

bool AllocationMatcher::RefreshFromApiLocked() {
  if (!options_.list_pods) return false;
  const absl::Time give_up = absl::Now() + options_.api_unreachable_wait;
  for (int attempt = 1;; ++attempt) {
    // The LIST must not hold up the watch, which takes the lock to deliver.
    mu_.Unlock();
    absl::StatusOr<std::vector<nlohmann::json>> pods = options_.list_pods();
    mu_.Lock();
    if (pods.ok()) {
      for (const nlohmann::json& pod : *pods) UpsertLocked(pod);
      ++pod_events_;
      return true;
    }
    const absl::Time now = absl::Now();
    if (now >= give_up) {
      spdlog::warn("pods of node {}: cannot read them afresh ({} tries): {}",
                   options_.node_name, attempt, pods.status().ToString());
      return false;
    }
    if (attempt == 1) {
      spdlog::info("pods of node {}: cannot read them afresh, retrying: {}",
                   options_.node_name, pods.status().ToString());
    }
    // The watch delivering meanwhile does not prove the pod is there: the
    // next LIST does.
    const absl::Time next =
        std::min(give_up, now + options_.list_retry_interval);
    static constexpr bool kNever = false;
    mu_.AwaitWithDeadline(absl::Condition(&kNever), next);
  }
}

bool AllocationMatcher::AwaitPodEventLocked(absl::Time deadline) {
  struct PodEventSince {
    const int64_t* events;
    int64_t seen;
    bool Arrived() const { return *events != seen; }
  } since{&pod_events_, pod_events_};
  return mu_.AwaitWithDeadline(absl::Condition(&since, &PodEventSince::Arrived),
                               deadline);
}

bool AllocationMatcher::PreferredLocked(
    const std::vector<std::string>& available,
    const std::vector<std::string>& must_include,
    const std::vector<std::string>& included_gpus, int size,
    std::vector<std::string>* answer) {
  const absl::Time now = absl::Now();
  for (auto it = offered_.begin(); it != offered_.end();) {
    it = it->second <= now ? offered_.erase(it) : std::next(it);
  }
  // Ids this agent has handed out are held, whatever an older snapshot of
  // kubelet's says.
  std::set<std::string> served_ids;
  for (const auto& [key, entry] : journal_->served()) {
    served_ids.insert(entry.device_ids.begin(), entry.device_ids.end());
  }
  // Free replicas per GPU, lowest first; ones offered to an admission still
  // running go last.
  std::map<std::string, std::vector<std::string>> free_by_gpu;
  std::vector<std::pair<std::string, std::string>> offered_elsewhere;
  for (const std::string& id : Sorted(available)) {
    const ReplicaId replica = *ParseDeviceId(id);  // checked by Preferred
    if (std::find(must_include.begin(), must_include.end(), id) !=
            must_include.end() ||
        served_ids.contains(id)) {
      continue;
    }
    if (offered_.contains(id)) {
      offered_elsewhere.emplace_back(replica.gpu_uuid, id);
    } else {
      free_by_gpu[replica.gpu_uuid].push_back(id);
    }
  }
  for (const auto& [gpu, id] : offered_elsewhere) {
    free_by_gpu[gpu].push_back(id);
  }
  // Containers whose record is refused come after those waiting: offered
  // their own GPUs, kubelet's Allocate then says why they are refused.
  std::vector<Candidate> candidates = WaitingLocked();
  for (const Candidate& refused : RefusedLocked())
    candidates.push_back(refused);
  for (const Candidate& candidate : candidates) {
    const auto& grants =
        candidate.pod->record.allocation.containers[candidate.container_index]
            .devices;
    if (static_cast<int>(grants.size()) != size) continue;
    std::vector<std::string> wanted = GrantGpus(grants);
    // must_include covers some of the wanted GPUs already.
    bool fits = true;
    for (const std::string& gpu : included_gpus) {
      auto at = std::find(wanted.begin(), wanted.end(), gpu);
      if (at == wanted.end()) {
        fits = false;
        break;
      }
      wanted.erase(at);
    }
    std::map<std::string, size_t> taken;
    std::vector<std::string> chosen = must_include;
    for (const std::string& gpu : wanted) {
      if (!fits) break;
      auto free = free_by_gpu.find(gpu);
      size_t& used = taken[gpu];
      if (free == free_by_gpu.end() || used >= free->second.size()) {
        fits = false;
        break;
      }
      chosen.push_back(free->second[used++]);
    }
    if (fits) {
      for (const std::string& id : chosen) {
        offered_[id] = now + absl::Seconds(30);
      }
      *answer = std::move(chosen);
      return true;
    }
  }
  // Nobody waits for this size here: any valid answer lets kubelet go on;
  // Allocate will say what is wrong.
  *answer = must_include;
  for (const auto& [gpu, ids] : free_by_gpu) {
    for (const std::string& id : ids) {
      if (static_cast<int>(answer->size()) >= size) break;
      answer->push_back(id);
    }
  }
  return false;
}

absl::StatusOr<ContainerGrant> AllocationMatcher::EditsLocked(
    const PodState& pod, int32_t container_index) {
  PodState& state = pods_.at(pod.record.uid);
  ContainerAllocation& container =
      state.record.allocation.containers[container_index];
  const bool has_mig =
      std::any_of(container.devices.begin(), container.devices.end(),
                  [](const DeviceGrant& g) { return g.mode == mig::kMode; });
  if (has_mig) {
    if (!prepare_mig_) {
      return absl::FailedPreconditionError(
          absl::StrCat("pod ", state.record.key, " container ", container.name,
                       ": MIG grants but this agent has no MIG control"));
    }
    DS_RETURN_IF_ERROR(prepare_mig_(state.record, container_index,
                                    container.devices, LiveRecordsLocked()));
  }
  const SharingMode mode = container.devices.front().mode;
  for (const DeviceGrant& grant : container.devices) {
    if (grant.mode != mode) {
      return absl::FailedPreconditionError(absl::StrCat(
          "pod ", state.record.key, " container ", container.name,
          ": grants of different modes ", Describe(container.devices)));
    }
  }
  EditOptions edit_options;
  edit_options.hook_path = options_.hook_path;
  edit_options.mps_root = options_.mps_root;
  edit_options.pod_uid = state.record.uid;
  edit_options.container_name = container.name;
  if (static_cast<size_t>(container_index) <
      state.record.task_priorities.size()) {
    edit_options.task_priority = state.record.task_priorities[container_index];
  }
  ContainerGrant grant;
  grant.edits = backends_.at(mode)->Edits(container, edit_options);
  if (!options_.cdi_kind.empty()) {
    for (const std::string& id : grant.edits.device_ids) {
      grant.cdi_devices.push_back(absl::StrCat(options_.cdi_kind, "=", id));
    }
  }
  return grant;
}

absl::StatusOr<ContainerGrant> AllocationMatcher::Allocate(
    const std::vector<std::string>& device_ids) {
  const std::vector<std::string> ids = Sorted(device_ids);
  absl::StatusOr<std::vector<std::string>> gpus = IdGpus(ids);
  absl::MutexLock lock(&mu_);
  for (const std::string& id : ids) offered_.erase(id);
  if (!gpus.ok()) {
    ++stats_.refused;
    return gpus.status();
  }
  std::vector<Candidate> candidates;
  auto match = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    for (const Candidate& candidate : WaitingLocked()) {
      const auto& grants =
          candidate.pod->record.allocation.containers[candidate.container_index]
              .devices;
      if (GrantGpus(grants) == *gpus) candidates.push_back(candidate);
    }
    return !candidates.empty();
  };
  const absl::Time deadline = absl::Now() + options_.pod_watch_grace;
  // The pod may not have reached the agent's watch yet: wait for the next
  // pod event (or the grace to pass) and match again; then read the pods
  // afresh once.
  while (!match()) {
    if (!AwaitPodEventLocked(deadline)) {
      if (RefreshFromApiLocked()) match();
      break;
    }
  }
  if (candidates.empty()) {
    ++stats_.refused;
    if (std::optional<absl::Status> refusal = RefusedRecordFor(*gpus)) {
      return *refusal;
    }
    return absl::FailedPreconditionError(absl::StrCat(
        "devices ", absl::StrJoin(ids, ","),
        ": no container of a pod bound "
        "to node ",
        options_.node_name, " waits for GPUs ", absl::StrJoin(*gpus, ","),
        " (the pod has no allocation record from the GPU scheduler, the "
        "record names other GPUs, or it was served already)"));
  }
  const Candidate chosen = candidates.front();
  const ContainerAllocation& wanted =
      chosen.pod->record.allocation.containers[chosen.container_index];
  for (size_t i = 1; i < candidates.size(); ++i) {
    const Candidate& other = candidates[i];
    const ContainerAllocation& theirs =
        other.pod->record.allocation.containers[other.container_index];
    if (!SameShare(wanted.devices, theirs.devices)) {
      ++stats_.confusable;
      spdlog::warn(
          "devices {}: pods {} ({}) and {} ({}) both wait for these GPUs with "
          "different shares; serving the earlier decided, {}; PreStart will "
          "check kubelet's record",
          absl::StrJoin(ids, ","), chosen.pod->record.key,
          Describe(wanted.devices), other.pod->record.key,
          Describe(theirs.devices), chosen.pod->record.key);
      break;
    }
  }
  const std::string uid = chosen.pod->record.uid;
  const std::string name = wanted.name;
  absl::StatusOr<ContainerGrant> grant =
      EditsLocked(*chosen.pod, chosen.container_index);
  if (!grant.ok()) {
    ++stats_.refused;
    return grant.status();
  }
  absl::Status journaled =
      journal_->Serve(ServedContainer{uid, chosen.container_index, name, ids});
  if (!journaled.ok()) {
    ++stats_.refused;
    return absl::UnavailableError(
        absl::StrCat("cannot record the allocation: ", journaled.message()));
  }
  ++stats_.served;
  metrics::AgentMetrics::Default().CountAllocation(
      metrics::kDevicePluginApi, options_.resource_name,
      wanted.devices.front().mode.name());
  spdlog::info(
      "devices {} -> pod {} container {}: {}", absl::StrJoin(ids, ","),
      pods_.at(uid).record.key, name,
      Describe(pods_.at(uid)
                   .record.allocation.containers[chosen.container_index]
                   .devices));
  MaybeFinishLocked(pods_.at(uid));
  return grant;
}

void AllocationMatcher::MaybeFinishLocked(const PodState& pod) {
  const PodRecord& record = pod.record;
  for (const ContainerAllocation& container : record.allocation.containers) {
    if (!container.devices.empty() &&
        !ServedLocked(record.uid, container.container_index)) {
      return;
    }
  }
  if (finished_.contains(record.uid)) return;
  finished_.insert(record.uid);
  marked_success_.insert(record.uid);
  if (!annotate_) return;
  nlohmann::json annotations = nlohmann::json::object();
  annotations[record.dialect == Dialect::kHami ? keys::kHamiBindPhase
                                               : keys::kVolcanoBindPhase] =
      keys::kBindPhaseSuccess;
  if (record.dialect == Dialect::kHami) {
    const std::string mig = EncodeHamiMigAllocations(record.allocation);
    if (!mig.empty()) annotations[keys::kHamiMigAllocations] = mig;
  }
  annotate_(record.key, record.uid, annotations);
}

void AllocationMatcher::MarkAllocatingLocked(const PodRecord& record) {
  if (!annotate_) return;
  nlohmann::json annotations = nlohmann::json::object();
  annotations[record.dialect == Dialect::kHami ? keys::kHamiBindPhase
                                               : keys::kVolcanoBindPhase] =
      keys::kBindPhaseAllocating;
  annotate_(record.key, record.uid, annotations);
}

absl::Status AllocationMatcher::PreStart(
    const std::vector<std::string>& device_ids) {
  if (options_.kubelet_checkpoint_path.empty()) return absl::OkStatus();
  const std::vector<std::string> ids = Sorted(device_ids);
  absl::StatusOr<std::vector<CheckpointEntry>> entries = ReadKubeletCheckpoint(
      options_.kubelet_checkpoint_path, options_.resource_name);
  if (!entries.ok()) {
    spdlog::warn("devices {}: cannot check who holds them: {}",
                 absl::StrJoin(ids, ","),
                 std::string(entries.status().message()));
    return absl::OkStatus();
  }
  const CheckpointEntry* holder = nullptr;
  for (const CheckpointEntry& entry : *entries) {
    if (entry.device_ids == ids) holder = &entry;
  }
  absl::MutexLock lock(&mu_);
  const ServedContainer* served = nullptr;
  for (const auto& [key, entry] : journal_->served()) {
    if (entry.device_ids == ids) served = &entry;
  }
  if (holder == nullptr || served == nullptr) {
    spdlog::warn("devices {}: {}; cannot check who holds them",
                 absl::StrJoin(ids, ","),
                 holder == nullptr ? "not in kubelet's checkpoint"
                                   : "not in this agent's journal");
    return absl::OkStatus();
  }
  if (holder->pod_uid == served->pod_uid &&
      holder->container_name == served->container_name) {
    return absl::OkStatus();
  }
  const ServedContainer given = *served;
  auto given_pod = pods_.find(given.pod_uid);
  auto holder_pod = pods_.find(holder->pod_uid);
  if (given_pod != pods_.end() && holder_pod != pods_.end()) {
    const auto& given_grants =
        given_pod->second.record.allocation.containers[given.container_index]
            .devices;
    for (const ContainerAllocation& container :
         holder_pod->second.record.allocation.containers) {
      if (container.name != holder->container_name ||
          !SameShare(container.devices, given_grants)) {
        continue;
      }
      // Interchangeable: the container got exactly its own pod's share.
      // The journal swaps the two: the holder's container is served with
      // these ids, and the pod they were written for takes over whatever
      // the holder's container was served with, if anything.
      auto holder_entry =
          journal_->served().find({holder->pod_uid, container.container_index});
      std::optional<ServedContainer> other;
      if (holder_entry != journal_->served().end()) {
        other = holder_entry->second;
      }
      DS_RETURN_IF_ERROR(journal_->Serve(ServedContainer{
          holder->pod_uid, container.container_index, container.name, ids}));
      if (other.has_value()) {
        other->pod_uid = given.pod_uid;
        other->container_index = given.container_index;
        other->container_name = given.container_name;
        DS_RETURN_IF_ERROR(journal_->Serve(*other));
      } else {
        DS_RETURN_IF_ERROR(
            journal_->Unserve(given.pod_uid, given.container_index));
        // That pod has a container to serve again: it is in flight once
        // more, though it may read the success this agent wrote.
        if (finished_.erase(given.pod_uid) > 0) {
          MarkAllocatingLocked(given_pod->second.record);
        }
      }
      ++stats_.swapped;
      MaybeFinishLocked(holder_pod->second);
      return absl::OkStatus();
    }
  }
  ++stats_.prestart_refused;
  return absl::FailedPreconditionError(absl::StrCat(
      "container ", holder->container_name, " of pod ", holder->pod_uid,
      " holds devices ", absl::StrJoin(ids, ","),
      " that were answered with "
      "the share of pod ",
      given.pod_uid, " container ", given.container_name,
      "; refusing to start it with another pod's "
      "limits (two pods with different shares of the same GPUs were in "
      "flight on this node)"));
}

std::vector<PodRecord> AllocationMatcher::LiveRecordsLocked() const {
  std::vector<PodRecord> records;
  for (const auto& [uid, state] : pods_) records.push_back(state.record);
  return records;
}

std::vector<PodRecord> AllocationMatcher::LiveRecords() const {
  absl::MutexLock lock(&mu_);
  return LiveRecordsLocked();
}

void AllocationMatcher::WithLiveRecords(
    const std::function<void(const std::vector<PodRecord>&)>& work) {
  absl::MutexLock lock(&mu_);
  work(LiveRecordsLocked());
}

MatcherStats AllocationMatcher::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

}  // namespace deviceshare::agent
