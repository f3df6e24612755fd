// Extender: construction, /filter, /prioritize, expiry and stats. /bind is
// in extender_bind.cc, the watch feed in extender_feed.cc.
#include "deviceshare/extender/extender.h"

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "claim_binder.h"
#include "deviceshare/dra/allocated_claim.h"
#include "deviceshare/k8s/pod_parser.h"
#include "extender_log.h"
#include "name_order.h"
#include "pod_fields.h"

namespace deviceshare::extender {
namespace {

// "0/3 nodes fit: 2 InsufficientMemory, 1 TypeMismatch".
std::string Summary(size_t nodes, const std::map<std::string, int>& codes) {
  std::vector<std::string> parts;
  for (const auto& [code, count] : codes) {
    parts.push_back(absl::StrCat(count, " ", code));
  }
  return absl::StrCat("0/", nodes, " nodes fit: ", absl::StrJoin(parts, ", "));
}

// Extender priorities by rank in the node choice: the reserved node 10, the
// others 9 down to 0, so kube-scheduler's sum leans to the reservation.
// The ranking of `ranked` (best first) with `reserved` on top.
NodeRanking Ranking(const std::vector<const NodeVerdict*>& ranked,
                    absl::string_view reserved) {
  std::vector<absl::string_view> names;
  names.reserve(ranked.size());
  for (const NodeVerdict* verdict : ranked) names.push_back(verdict->node);
  return NodeRanking(names, reserved);
}
NodeRanking Ranking(const std::vector<std::string>& ranked,
                    absl::string_view reserved) {
  return NodeRanking(
      std::vector<absl::string_view>(ranked.begin(), ranked.end()), reserved);
}

// The first 8 bytes of `name`, big-endian, zero-padded: where two names'
// prefixes differ, they order the names as std::string's operator< does
// (bytes compared unsigned, a shorter name before its extensions).
uint64_t NamePrefix(absl::string_view name) {
  uint64_t prefix = 0;
  for (size_t i = 0; i < 8; ++i) {
    prefix = (prefix << 8) |
             (i < name.size() ? static_cast<uint8_t>(name[i]) : uint64_t{0});
  }
  return prefix;
}

// `verdicts` in BetterVerdict() order. The sort compares keys held beside
// the pointers, the names by their prefixes first: most of a thousand
// nodes tie on stranded capacity and score, and calling BetterVerdict (a
// string comparison per tie) was a tenth of /filter.
template <typename Verdict>
void SortBestFirst(std::vector<Verdict*>& verdicts) {
  struct Key {
    int stranded_percent;
    int score;
    uint64_t prefix;
    Verdict* verdict;
  };
  std::vector<Key> keys;
  keys.reserve(verdicts.size());
  for (Verdict* verdict : verdicts) {
    keys.push_back({verdict->stranded_percent, verdict->score,
                    NamePrefix(verdict->node), verdict});
  }
  std::sort(keys.begin(), keys.end(), [](const Key& a, const Key& b) {
    if (a.stranded_percent != b.stranded_percent) {
      return a.stranded_percent < b.stranded_percent;
    }
    if (a.score != b.score) return a.score > b.score;
    if (a.prefix != b.prefix) return a.prefix < b.prefix;
    return a.verdict->node < b.verdict->node;
  });
  for (size_t i = 0; i < keys.size(); ++i) verdicts[i] = keys[i].verdict;
}

// The candidate nodes of a call. kube-scheduler sends NodeNames
// (nodeCacheCapable); only the NodeList form is copied, into `storage`.
const NameList& CandidateNames(const ExtenderArgs& args, NameList& storage) {
  if (args.node_names) return *args.node_names;
  storage = args.NodeNamesOrFromList();
  return storage;
}

// Every node the scheduler knows, by name: what an empty candidate list
// is filtered over.
NameList EveryNode(const Scheduler& scheduler) {
  NameList names;
  scheduler.Inspect([&names](const ClusterState& state) {
    for (const NodeState* node : state.nodes_by_name()) {
      names.push_back(node->name());
    }
  });
  return names;
}

// One priority per candidate, in the candidates' order; 0 for a node the
// ranking does not hold (it did not fit).
}  // namespace

Extender::Extender(Scheduler* scheduler, PodWriter* writer, const Clock* clock,
                   ExtenderOptions options, ClaimWriter* claims)
    : scheduler_(scheduler),
      writer_(writer),
      clock_(clock),
      options_(options),
      dra_feed_(scheduler),
      quota_feed_(scheduler),
      name_order_(std::make_unique<NameOrder>()) {
  if (claims != nullptr) {
    ClaimBinder::Signer sign;
    if (options_.record_keys != nullptr) {
      sign = [keys = options_.record_keys](
                 const nlohmann::json& claim,
                 const std::string& node) -> absl::StatusOr<std::string> {
        absl::StatusOr<dra::AllocatedClaim> allocated =
            dra::DecodeAllocatedClaim(claim);
        if (!allocated.ok()) return allocated.status();
        return trust::SignClaimAllocation(*keys->Keys(), *allocated, node);
      };
    }
    claim_binder_ = std::make_unique<ClaimBinder>(
        claims,
        [this](const nlohmann::json& claim) { dra_feed_.OnClaimSeen(claim); },
        /*max_attempts=*/5, std::move(sign));
  }
  InitMetrics();
}

Extender::~Extender() = default;

void Extender::InitMetrics() {
  // The names are constants: a failure here is a programming error, caught
  // by the tests, and leaves that one family out.
  auto counter = [&](absl::string_view name, absl::string_view help,
                     std::vector<std::string> labels) -> CounterFamily* {
    auto family = metrics_.AddCounter(name, help, std::move(labels));
    return family.ok() ? *family : nullptr;
  };
  rejections_total_ =
      counter("deviceshare_extender_rejections_total",
              "Nodes rejected for a pod by /filter or /bind, by reason code.",
              {"reason"});
  bind_failures_total_ =
      counter("deviceshare_extender_bind_failures_total",
              "Failed /bind calls, by the stage that failed.", {"stage"});
  binds_total_ =
      counter("deviceshare_extender_binds_total", "Pods bound by /bind.", {});
  expired_total_ =
      counter("deviceshare_extender_reservations_expired_total",
              "Reservations dropped because no bind followed in time.", {});
  unaccounted_total_ =
      counter("deviceshare_extender_unaccounted_pods_total",
              "Allocation records read from pods that could not be charged "
              "(unknown GPU, no room, malformed).",
              {});
  refused_records_total_ =
      counter("deviceshare_extender_refused_records_total",
              "Allocation records read from pods and not charged because their "
              "signature is missing or wrong, by verdict (unsigned, forged).",
              {"verdict"});
  deferred_total_ = counter(
      "deviceshare_extender_binds_deferred_total",
      "Binds refused for now because a pod the node agent could confuse "
      "with the one bound was still in flight on the node.",
      {});
  metrics_.AddCollector([this](GaugeWriter& out) {
    const ExtenderStats now = stats();
    out.Write("deviceshare_extender_reservations_in_flight",
              "Pods reserved by /filter or being bound by /bind.", {},
              static_cast<double>(now.reservations_in_flight));
    out.Write("deviceshare_extender_pods_allocating",
              "Bound pods whose node agent has not handed out their GPUs "
              "yet (bind-phase allocating, within the in-flight timeout).",
              {}, static_cast<double>(now.pods_allocating));
    scheduler_->Inspect([&](const ClusterState& state) {
      for (const NodeState* node : state.nodes_by_name()) {
        for (size_t i = 0; i < node->gpu_count(); ++i) {
          const DeviceLedger& ledger = node->ledger(i);
          const Gpu& gpu = node->inventory().gpus[i];
          const GaugeWriter::Label labels[] = {
              {"node", node->name()}, {"gpu", gpu.uuid}, {"model", gpu.model}};
          out.Write("deviceshare_gpu_memory_allocated_mib",
                    "GPU memory allocated to pods, MiB.", labels,
                    static_cast<double>(ledger.used_memory_mib()));
          out.Write("deviceshare_gpu_memory_capacity_mib",
                    "GPU memory that may be allocated (after scaling), MiB.",
                    labels, static_cast<double>(ledger.memory_capacity_mib()));
          out.Write("deviceshare_gpu_cores_allocated_percent",
                    "Share of the GPU's SMs allocated to pods, percent.",
                    labels, static_cast<double>(ledger.used_cores()));
          out.Write("deviceshare_gpu_tenants", "Containers sharing the GPU.",
                    labels, static_cast<double>(ledger.used_slots()));
        }
      }
    });
  });
}

void Extender::CountRejection(absl::string_view code, int64_t nodes) {
  {
    absl::MutexLock lock(&stats_mu_);
    stats_.rejections[std::string(code)] += nodes;
  }
  if (rejections_total_ != nullptr) {
    const absl::string_view labels[] = {code};
    rejections_total_->Increment(labels, static_cast<uint64_t>(nodes));
  }
}

void Extender::CountBindFailure(absl::string_view stage) {
  {
    absl::MutexLock lock(&stats_mu_);
    ++stats_.bind_failures[std::string(stage)];
  }
  if (bind_failures_total_ != nullptr) {
    const absl::string_view labels[] = {stage};
    bind_failures_total_->Increment(labels);
  }
}

void Extender::CountUnaccounted() {
  {
    absl::MutexLock lock(&stats_mu_);
    ++stats_.unaccounted_pods;
  }
  if (unaccounted_total_ != nullptr) unaccounted_total_->Increment({});
}

void Extender::DropUnboundLocked(const std::string& uid) {
  auto it = reservations_.find(uid);
  if (it != reservations_.end()) {
    if (it->second.state == ReservationState::kBinding) return;
    reservations_.erase(it);
  }
  watched_pods_.erase(uid);
  in_flight_.Remove(uid);
  scheduler_->Release(uid);
}

FilterResult Extender::Filter(const ExtenderArgs& args) {
  FilterResult result;
  NameList from_list;
  const NameList& names = CandidateNames(args, from_list);
  auto echo = [&](std::vector<std::string> passing) {
    if (args.nodes) result.nodes = NodeListWith(*args.nodes, passing);
    result.node_names = std::move(passing);
  };
  absl::StatusOr<PodRequest> request =
      ParsePodRequest(args.pod, scheduler_->config().device);
  if (!request.ok()) {
    result.error = std::string(request.status().message());
    CountRejection("InvalidRequest");
    return result;
  }
  // Pods without annotated GPUs or claims are not ours to judge.
  if (!request->HasGpuRequest() && !request->HasClaims()) {
    echo(names.ToStrings());
    return result;
  }
  if (std::optional<std::string> busy = StartFilterLocked(*request)) {
    result.error = *std::move(busy);
    return result;
  }
  // The filter step, at most once per node: codes with reasons, the best
  // fitting node's allocation kept by the scheduler for the reserve step.
  // No candidates means every node.
  NameList every_node;
  const NameList& candidates =
      names.empty() ? (every_node = EveryNode(*scheduler_)) : names;
  absl::StatusOr<std::vector<Scheduler::BriefVerdict>> verdicts =
      scheduler_->FilterBriefly(*request, candidates.Views());
  if (!verdicts.ok()) {
    result.error = std::string(verdicts.status().message());
    CountRejection("InvalidRequest");
    return result;
  }
  std::map<std::string, int> codes;
  const std::vector<uint32_t> fits =
      RecordRejections(candidates, *verdicts, result, codes);
  if (fits.empty()) {
    const std::string summary = Summary(verdicts->size(), codes);
    LogPod(LogLevel::kInfo, request->Key(), "",
           absl::StrCat("filter: ", summary));
    writer_->Event(
        PodName{request->namespace_name, request->name, request->uid},
        "Warning", "FilteringFailed", summary);
    echo({});
    return result;
  }
  std::vector<std::string> order;
  order.reserve(fits.size());
  for (uint32_t position : fits) order.emplace_back(candidates[position]);
  std::vector<std::string> passing =
      ReserveBest(*std::move(request), std::move(order), result);
  if (result.error.empty()) echo(std::move(passing));
  return result;
}

std::optional<std::string> Extender::StartFilterLocked(
    const PodRequest& request) {
  absl::MutexLock lock(&mu_);
  const std::string& uid = request.uid;
  auto it = reservations_.find(uid);
  if (it != reservations_.end() &&
      (it->second.state == ReservationState::kBinding ||
       it->second.state == ReservationState::kBound)) {
    return absl::StrFormat("pod %s is being bound to node %s", request.Key(),
                           it->second.node);
  }
  auto watched = watched_pods_.find(uid);
  if (watched != watched_pods_.end() && watched->second.bound) {
    return absl::StrFormat("pod %s is already bound to node %s", request.Key(),
                           watched->second.node);
  }
  // A re-filter starts afresh: the pod's own earlier reservation must not
  // count against it.
  DropUnboundLocked(uid);
  return std::nullopt;
}

std::vector<uint32_t> Extender::RecordRejections(
    const NameList& names, std::vector<Scheduler::BriefVerdict>& verdicts,
    FilterResult& result, std::map<std::string, int>& codes) {
  // Collected in name order, so that a stable sort by the verdicts'
  // integer keys is BetterVerdict() order.
  std::vector<uint32_t> fits;
  fits.reserve(verdicts.size());
  const std::shared_ptr<const NameOrder::Positions> order =
      name_order_->Of(names);
  for (uint32_t position : *order) {
    if (verdicts[position].fits()) fits.push_back(position);
  }
  std::stable_sort(fits.begin(), fits.end(), [&](uint32_t a, uint32_t b) {
    const Scheduler::BriefVerdict& x = verdicts[a];
    const Scheduler::BriefVerdict& y = verdicts[b];
    if (x.stranded_percent != y.stranded_percent) {
      return x.stranded_percent < y.stranded_percent;
    }
    return x.score > y.score;
  });
  // Counted per code, then added to the stats and metrics once per code.
  std::map<absl::string_view, int> rejected;
  for (size_t i = 0; i < verdicts.size(); ++i) {
    Scheduler::BriefVerdict& verdict = verdicts[i];
    if (verdict.fits()) continue;
    ++rejected[ReasonCodeName(verdict.code)];
    (verdict.code.unresolvable() ? result.failed_and_unresolvable_nodes
                                 : result.failed_nodes)
        .insert_or_assign(std::string(names[i]), std::move(verdict.reason));
  }
  for (const auto& [code, count] : rejected) {
    codes.emplace(std::string(code), count);
    CountRejection(code, count);
  }
  return fits;
}

std::vector<std::string> Extender::ReserveBest(PodRequest request,
                                               std::vector<std::string> order,
                                               FilterResult& result) {
  const std::string uid = request.uid;
  absl::MutexLock lock(&mu_);
  // Another filter of the same pod may have reserved meanwhile.
  DropUnboundLocked(uid);
  absl::StatusOr<ReserveOutcome> placed =
      scheduler_->Reserve(request, order, /*replace=*/true);
  if (!placed.ok()) {
    result.error = std::string(placed.status().message());
    return {};
  }
  // Candidates tried before the one that took the pod no longer fit: a
  // concurrent reservation got there first.
  absl::flat_hash_set<std::string> lost;
  for (const NodeVerdict& verdict : placed->rejected) {
    lost.insert(verdict.node);
    CountRejection(ReasonCodeName(verdict.fit.code));
    result.failed_nodes[verdict.node] = verdict.fit.Reason();
  }
  std::vector<std::string> passing;
  if (lost.empty()) {
    passing = std::move(order);
  } else {
    for (std::string& name : order) {
      if (!lost.contains(name)) passing.push_back(std::move(name));
    }
  }
  if (!placed->placed) {
    LogPod(LogLevel::kInfo, request.Key(), "",
           "filter: every fitting node was taken by concurrent reservations");
    return passing;
  }
  Reservation& reservation = reservations_[uid];
  reservation.state = ReservationState::kFiltered;
  reservation.node = placed->placed->node;
  reservation.deadline = clock_->Now() + options_.reservation_ttl;
  reservation.request = std::move(request);
  reservation.allocation = std::move(placed->placed->fit.allocation);
  reservation.claims = std::move(placed->claims);
  reservation.priorities = Ranking(passing, reservation.node);
  if (Logs(LogLevel::kDebug)) {
    LogPod(LogLevel::kDebug, reservation.request.Key(), reservation.node,
           absl::StrFormat("filter: reserved; %d of %d candidates fit",
                           passing.size(),
                           passing.size() + result.failed_nodes.size() +
                               result.failed_and_unresolvable_nodes.size()));
  }
  return passing;
}

std::optional<std::vector<int>> Extender::RankedScores(const ExtenderArgs& args,
                                                       const NameList& names) {
  // The filter that came first left its ranking: no need to parse the pod
  // again.
  absl::MutexLock lock(&mu_);
  auto it = reservations_.find(PodUid(args.pod));
  if (it == reservations_.end() || it->second.priorities.empty()) {
    return std::nullopt;
  }
  return it->second.priorities.Scores(names);
}

std::string Extender::PrioritizeJson(const ExtenderArgs& args) {
  NameList from_list;
  const NameList& names = CandidateNames(args, from_list);
  if (std::optional<std::vector<int>> scores = RankedScores(args, names)) {
    return EncodePriorityList(names, *scores);
  }
  return EncodePriorityList(Prioritize(args));
}

std::vector<HostPriority> Extender::Prioritize(const ExtenderArgs& args) {
  NameList from_list;
  const NameList& names = CandidateNames(args, from_list);
  if (std::optional<std::vector<int>> scores = RankedScores(args, names)) {
    std::vector<HostPriority> answer;
    answer.reserve(names.size());
    for (size_t i = 0; i < names.size(); ++i) {
      answer.push_back({std::string(names[i]), (*scores)[i]});
    }
    return answer;
  }
  absl::StatusOr<PodRequest> request =
      ParsePodRequest(args.pod, scheduler_->config().device);
  if (!request.ok() || (!request->HasGpuRequest() && !request->HasClaims())) {
    return NodeRanking().Answer(names);
  }
  // No filter of ours came first (or its reservation expired): rank from
  // the scheduler's remembered verdicts.
  absl::StatusOr<std::vector<NodeVerdict>> verdicts =
      scheduler_->Filter(*request, names.ToStrings());
  if (!verdicts.ok()) return NodeRanking().Answer(names);
  std::vector<const NodeVerdict*> ranked;
  for (const NodeVerdict& verdict : *verdicts) {
    if (verdict.fit.fits()) ranked.push_back(&verdict);
  }
  SortBestFirst(ranked);
  return Ranking(ranked, ranked.empty() ? "" : ranked.front()->node)
      .Answer(names);
}

int Extender::ExpireReservations() {
  const absl::Time now = clock_->Now();
  int expired = 0;
  {
    absl::MutexLock lock(&mu_);
    for (auto it = reservations_.begin(); it != reservations_.end();) {
      const Reservation& reservation = it->second;
      const bool expires = reservation.state == ReservationState::kFiltered ||
                           reservation.state == ReservationState::kRecorded;
      if (!expires || reservation.deadline > now) {
        ++it;
        continue;
      }
      LogPod(LogLevel::kInfo, reservation.request.Key(), reservation.node,
             absl::StrCat("reservation expired (",
                          ReservationStateName(reservation.state),
                          "): no bind followed"));
      scheduler_->Release(it->first);
      watched_pods_.erase(it->first);
      reservations_.erase(it++);
      ++expired;
    }
    // Pods whose node agent never reported back stop blocking their nodes.
    in_flight_.Expire(now);
  }
  if (expired > 0) {
    {
      absl::MutexLock lock(&stats_mu_);
      stats_.reservations_expired += expired;
    }
    if (expired_total_ != nullptr) expired_total_->Increment({}, expired);
  }
  return expired;
}

ExtenderStats Extender::stats() const {
  int64_t in_flight = 0;
  int64_t allocating = 0;
  {
    absl::MutexLock lock(&mu_);
    allocating = static_cast<int64_t>(in_flight_.size());
    for (const auto& [uid, reservation] : reservations_) {
      if (reservation.state == ReservationState::kFiltered ||
          reservation.state == ReservationState::kBinding) {
        ++in_flight;
      }
    }
  }
  absl::MutexLock lock(&stats_mu_);
  ExtenderStats stats = stats_;
  stats.reservations_in_flight = in_flight;
  stats.pods_allocating = allocating;
  return stats;
}

absl::string_view ReservationStateName(ReservationState state) {
  switch (state) {
    case ReservationState::kFiltered:
      return "filtered";
    case ReservationState::kBinding:
      return "binding";
    case ReservationState::kBound:
      return "bound";
    case ReservationState::kRecorded:
      return "recorded";
  }
  return "unknown";
}

}  // namespace deviceshare::extender
