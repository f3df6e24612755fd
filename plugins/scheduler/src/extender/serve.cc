#include "deviceshare/extender/serve.h"

#include <algorithm>
#include <csignal>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "deviceshare/backend/backend_registry.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/config/config_parser.h"
#include "deviceshare/extender/claim_writer.h"
#include "deviceshare/extender/extender.h"
#include "deviceshare/extender/webhook_server.h"
#include "deviceshare/input/input_file.h"
#include "deviceshare/kube/api_client.h"
#include "deviceshare/kube/api_status.h"
#include "deviceshare/kube/kube_config.h"
#include "deviceshare/kube/object_paths.h"
#include "deviceshare/kube/reflector.h"
#include "deviceshare/status_macros.h"
#include "extender_log.h"
#include "spdlog/spdlog.h"

namespace deviceshare::extender {
namespace {

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop.store(true); }

}  // namespace

absl::Status SetLogLevel(const std::string& level) {
  spdlog::level::level_enum parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off") {
    return absl::InvalidArgumentError(
        absl::StrCat("--log-level: \"", level,
                     "\" is not one of trace, debug, info, warn, error, off"));
  }
  spdlog::set_level(parsed);
  // One line per record, UTC, level, then the message's key=value fields.
  spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %v",
                      spdlog::pattern_time_type::utc);
  return absl::OkStatus();
}

namespace {

absl::StatusOr<Config> LoadConfig(const std::string& path) {
  if (path.empty()) return Config{};
  DS_ASSIGN_OR_RETURN(std::string text, input::ReadInputFile("--config", path));
  absl::StatusOr<Config> config =
      ParseConfigYaml(text, BuiltinConfigExtensions());
  if (!config.ok()) return input::InFile(path, config.status());
  return config;
}

// The Scheduler of the config file (defaults when `path` is empty) with
// the built-in backends.
absl::StatusOr<std::unique_ptr<Scheduler>> LoadScheduler(
    const std::string& path) {
  DS_ASSIGN_OR_RETURN(Config config, LoadConfig(path));
  for (const std::string& notice : config.notices) {
    LogNode(LogLevel::kInfo, "", absl::StrCat("config: ", notice));
  }
  BackendRegistry registry;
  DS_RETURN_IF_ERROR(RegisterBuiltinBackends(registry));
  return Scheduler::Create(config, registry);
}

// The record keys of --record-key-file; null without it.
absl::StatusOr<std::unique_ptr<trust::RecordKeySource>> LoadRecordKeys(
    const ServeOptions& options) {
  if (options.accept_unsigned_records) {
    LogNode(LogLevel::kWarn, "",
            "--accept-unsigned-records: allocation records without a "
            "signature are charged (a cluster migrating from HAMi's or "
            "Volcano's scheduler); forged ones still are not");
  }
  if (options.record_key_file.empty()) {
    LogNode(LogLevel::kInfo, "",
            "no --record-key-file: allocation records are neither signed "
            "nor checked");
    return nullptr;
  }
  DS_ASSIGN_OR_RETURN(
      std::unique_ptr<trust::RecordKeySource> keys,
      trust::RecordKeySource::Create(options.record_key_file, &RealClock()));
  LogNode(LogLevel::kInfo, "",
          absl::StrCat("allocation records signed with key ",
                       keys->Keys()->signing().id, " of ",
                       options.record_key_file));
  return keys;
}

// A list+watch of the collection at `path` (`what` in the log) that feeds
// the extender's handlers for it.
std::unique_ptr<kube::Reflector> WatchCollection(
    kube::ApiClient* client, Extender& extender, const std::string& path,
    const char* what,
    void (Extender::*replace)(const std::vector<nlohmann::json>&),
    void (Extender::*event)(absl::string_view, const nlohmann::json&)) {
  return std::make_unique<kube::Reflector>(
      client, path,
      kube::ReflectorHandler{
          [&extender, replace, what](std::vector<nlohmann::json> items) {
            (extender.*replace)(items);
            LogNode(LogLevel::kInfo, "",
                    absl::StrCat(what, " listed: ", items.size()));
          },
          [&extender, event](absl::string_view type,
                             const nlohmann::json& object) {
            (extender.*event)(type, object);
          }},
      kube::ReflectorOptions{});
}

// One watched collection: its name in /metrics and whether the extender
// can serve without it (a cluster whose API server does not serve
// resource.k8s.io/v1 has no DRA to schedule).
struct Watch {
  const char* resource;
  std::unique_ptr<kube::Reflector> reflector;
  bool optional = false;
};

// Synced, or -- for an optional collection -- out of reach for good: not
// served by the API server (404, a cluster without resource.k8s.io/v1) or
// not granted to us (403, RBAC from before DRA). No claim can then be
// allocated here, so none can be overcommitted, and the GPU pods are
// served; deviceshare_watch_errors_total{resource} shows it.
bool Ready(const Watch& watch) {
  if (watch.reflector->synced()) return true;
  if (!watch.optional) return false;
  const std::optional<int> status =
      kube::HttpStatusOf(watch.reflector->stats().last_error);
  return status == 404 || status == 403;
}

// One metric family of the watches: its HELP and TYPE lines, then one
// sample per collection.
void AppendWatchFamily(std::string& text, absl::string_view name,
                       absl::string_view help, absl::string_view type,
                       const std::vector<Watch>& watches,
                       int64_t (*value)(const kube::Reflector&)) {
  absl::StrAppend(&text, "# HELP ", name, " ", help, "\n", "# TYPE ", name, " ",
                  type, "\n");
  for (const Watch& watch : watches) {
    absl::StrAppend(&text, name, "{resource=\"", watch.resource, "\"} ",
                    value(*watch.reflector), "\n");
  }
}

// The watches' state for /metrics: synced, relists and errors; with
// leader election, whether this replica leads.
MetricsAppender WatchMetrics(const std::vector<Watch>& watches,
                             const kube::LeaderElector* elector) {
  return [&watches, elector](std::string& text) {
    if (elector != nullptr) {
      absl::StrAppend(&text,
                      "# HELP deviceshare_leader Whether this replica holds "
                      "the leader election lease.\n",
                      "# TYPE deviceshare_leader gauge\n",
                      "deviceshare_leader ", elector->IsLeader() ? 1 : 0, "\n");
    }
    AppendWatchFamily(
        text, "deviceshare_watch_synced",
        "Whether the first list of the collection is done.", "gauge", watches,
        [](const kube::Reflector& r) -> int64_t { return r.synced() ? 1 : 0; });
    AppendWatchFamily(
        text, "deviceshare_watch_relists_total",
        "Lists after the first (the watch's resourceVersion expired).",
        "counter", watches,
        [](const kube::Reflector& r) { return r.stats().relists; });
    AppendWatchFamily(
        text, "deviceshare_watch_errors_total",
        "Failed lists or watches (each retried with backoff).", "counter",
        watches, [](const kube::Reflector& r) { return r.stats().errors; });
  };
}

// Nodes and Pods for the annotated GPUs, ResourceQuotas for their
// namespaces' GPU quotas; DeviceClasses, ResourceSlices and
// ResourceClaims for the claims the extender allocates.
std::vector<Watch> MakeWatches(kube::ApiClient* client, Extender& extender) {
  std::vector<Watch> watches;
  watches.push_back(
      {"nodes",
       WatchCollection(client, extender, "/api/v1/nodes", "nodes",
                       &Extender::OnNodesReplaced, &Extender::OnNodeEvent)});
  watches.push_back({"pods", WatchCollection(client, extender, "/api/v1/pods",
                                             "pods", &Extender::OnPodsReplaced,
                                             &Extender::OnPodEvent)});
  watches.push_back(
      {"deviceclasses",
       WatchCollection(client, extender, kube::DeviceClassesPath(),
                       "deviceclasses", &Extender::OnDeviceClassesReplaced,
                       &Extender::OnDeviceClassEvent),
       /*optional=*/true});
  watches.push_back(
      {"resourceslices",
       WatchCollection(client, extender, kube::ResourceSlicesPath(),
                       "resourceslices", &Extender::OnResourceSlicesReplaced,
                       &Extender::OnResourceSliceEvent),
       /*optional=*/true});
  watches.push_back(
      {"resourceclaims",
       WatchCollection(client, extender, kube::ResourceClaimsPath(),
                       "resourceclaims", &Extender::OnResourceClaimsReplaced,
                       &Extender::OnResourceClaimEvent),
       /*optional=*/true});
  // HAMi's namespace GPU quotas; a cluster whose RBAC predates them is
  // served without.
  watches.push_back(
      {"resourcequotas",
       WatchCollection(client, extender, "/api/v1/resourcequotas",
                       "resourcequotas", &Extender::OnResourceQuotasReplaced,
                       &Extender::OnResourceQuotaEvent),
       /*optional=*/true});
  return watches;
}

// The elector (null without leader election) and its thread.
struct Election {
  std::unique_ptr<kube::LeaderElector> elector;
  std::thread thread;
};

absl::StatusOr<Election> MakeElection(const ServeOptions& options,
                                      kube::ApiClient* client) {
  Election election;
  if (!options.leader_election.has_value()) return election;
  const std::string identity = options.leader_election->identity;
  DS_ASSIGN_OR_RETURN(
      election.elector,
      kube::LeaderElector::Create(
          client, &RealClock(), *options.leader_election,
          [identity](bool leading) {
            LogNode(LogLevel::kInfo, "",
                    absl::StrCat(leading ? "leading" : "stopped leading",
                                 " identity=", identity));
          }));
  LogNode(LogLevel::kInfo, "",
          absl::StrCat("leader election lease=",
                       options.leader_election->lease_namespace, "/",
                       options.leader_election->name, " identity=", identity));
  return election;
}

// Why the verbs may not be served: the watches' first lists (and why one
// has not come), then the lease.
std::string NotReady(const std::vector<Watch>& watches,
                     const kube::LeaderElector* elector) {
  for (const Watch& watch : watches) {
    if (Ready(watch)) continue;
    const kube::ReflectorStats stats = watch.reflector->stats();
    return absl::StrCat(
        "deviceshare-scheduler is not ready: waiting for the first list of ",
        watch.resource,
        stats.last_error.ok()
            ? std::string()
            : absl::StrCat(" (", stats.errors, " failures, the latest: ",
                           stats.last_error.message(), ")"));
  }
  if (elector != nullptr && !elector->IsLeader()) {
    const std::string holder = elector->observed_holder();
    return absl::StrCat(
        "deviceshare-scheduler is not the leader: lease held by ",
        holder.empty() ? "nobody yet" : holder);
  }
  return "";
}

// Logs each time the readiness answer flips, with the reason it became
// not ready: the verbs stop being served then (and a Service stops sending
// calls), so the log must say when and why. Called on every verb and
// probe; cheap when nothing changed.
class ReadinessLog {
 public:
  std::string Observe(std::string why) {
    absl::MutexLock lock(&mu_);
    const bool ready = why.empty();
    if (!known_ || ready != ready_) {
      if (ready) {
        LogNode(LogLevel::kInfo, "",
                "ready: serving filter, prioritize, preempt and bind");
      } else {
        // Not ready at start is expected (the first lists); later, news.
        LogNode(known_ ? LogLevel::kWarn : LogLevel::kInfo, "",
                absl::StrCat("not ready: ", why));
      }
      known_ = true;
      ready_ = ready;
    }
    return why;
  }

 private:
  absl::Mutex mu_;
  bool known_ ABSL_GUARDED_BY(mu_) = false;
  bool ready_ ABSL_GUARDED_BY(mu_) = false;
};

// The watches failing now, after their first list or for good: the view
// of those collections may be stale, or (a refused optional watch, such as
// ResourceQuotas without RBAC) missing.
std::string WatchNotes(const std::vector<Watch>& watches) {
  std::vector<std::string> notes;
  for (const Watch& watch : watches) {
    const kube::ReflectorStats stats = watch.reflector->stats();
    if (stats.failing == 0 || !Ready(watch)) continue;
    notes.push_back(absl::StrCat(
        "the watch of ", watch.resource, " is failing (", stats.failing,
        " times since its last success): ", stats.last_error.message()));
  }
  return absl::StrJoin(notes, "; ");
}

// Logs each watch that starts failing and each that recovers, once per
// change: losing the API server, or a watch the API server refuses, is
// otherwise silent while the view goes stale.
class WatchHealthLog {
 public:
  explicit WatchHealthLog(size_t watches) : failing_(watches, false) {}

  void Check(const std::vector<Watch>& watches) {
    for (size_t i = 0; i < watches.size(); ++i) {
      const kube::ReflectorStats stats = watches[i].reflector->stats();
      const bool failing = stats.failing > 0;
      if (failing == failing_[i]) continue;
      failing_[i] = failing;
      if (failing) {
        LogNode(LogLevel::kWarn, "",
                absl::StrCat("watch of ", watches[i].resource,
                             " failing: ", stats.last_error.message()));
      } else {
        LogNode(LogLevel::kInfo, "",
                absl::StrCat("watch of ", watches[i].resource, " recovered"));
      }
    }
  }

 private:
  std::vector<bool> failing_;
};

// Starts the watches, the election and the server, sweeps expired
// reservations every second until SIGTERM or SIGINT, then stops what it
// started (giving the lease up after the server stopped answering).
void RunUntilSignal(const ServeOptions& options, Extender& extender,
                    std::vector<Watch>& watches, ExtenderServer& server,
                    WebhookServer* webhook, Election& election) {
  g_stop.store(false);
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  for (Watch& watch : watches) watch.reflector->Start();
  std::atomic<bool> stop_election{false};
  if (election.elector != nullptr) {
    election.thread = std::thread(
        [&election, &stop_election] { election.elector->Run(stop_election); });
  }
  if (webhook != nullptr) {
    webhook->Start();
    LogNode(LogLevel::kInfo, "",
            absl::StrCat("webhook address=", options.webhook->host, ":",
                         webhook->port(),
                         " https scheduler-name=", options.scheduler_name));
  }
  server.Start();
  LogNode(
      LogLevel::kInfo, "",
      absl::StrCat("serving address=", options.server.host, ":", server.port(),
                   options.server.tls_cert_file.empty() ? " http" : " https"));
  absl::Time next_sweep = absl::Now();
  WatchHealthLog health(watches.size());
  while (!g_stop.load()) {
    absl::SleepFor(absl::Milliseconds(50));
    if (absl::Now() >= next_sweep) {
      extender.ExpireReservations();
      health.Check(watches);
      next_sweep = absl::Now() + absl::Seconds(1);
    }
  }
  LogNode(LogLevel::kInfo, "", "shutting down");
  server.Stop();
  if (election.thread.joinable()) {
    stop_election.store(true);
    election.thread.join();
  }
  if (webhook != nullptr) webhook->Stop();
  for (auto it = watches.rbegin(); it != watches.rend(); ++it) {
    it->reflector->Stop();
  }
}

}  // namespace

absl::Status Serve(const ServeOptions& options) {
  DS_RETURN_IF_ERROR(SetLogLevel(options.log_level));
  DS_ASSIGN_OR_RETURN(std::unique_ptr<Scheduler> scheduler,
                      LoadScheduler(options.config_path));

  DS_ASSIGN_OR_RETURN(kube::KubeConfig kube_config,
                      kube::KubeConfigFromFlag(options.kubeconfig));
  DS_ASSIGN_OR_RETURN(std::unique_ptr<kube::ApiClient> client,
                      kube::ApiClient::Create(kube_config));
  std::unique_ptr<PodWriter> writer =
      MakeApiPodWriter(client.get(), &RealClock(), "deviceshare-scheduler");
  std::unique_ptr<ClaimWriter> claims = MakeApiClaimWriter(client.get());
  ExtenderOptions extender_options;
  extender_options.reservation_ttl = options.reservation_ttl;
  extender_options.in_flight_timeout = options.in_flight_timeout;
  DS_ASSIGN_OR_RETURN(std::unique_ptr<trust::RecordKeySource> record_keys,
                      LoadRecordKeys(options));
  extender_options.record_keys = record_keys.get();
  extender_options.record_policy.accept_unsigned =
      options.accept_unsigned_records;
  Extender extender(scheduler.get(), writer.get(), &RealClock(),
                    extender_options, claims.get());

  DS_ASSIGN_OR_RETURN(Election election, MakeElection(options, client.get()));
  std::vector<Watch> watches = MakeWatches(client.get(), extender);
  const kube::LeaderElector* elector = election.elector.get();
  ReadinessLog readiness_log;
  auto not_ready = [&watches, elector, &readiness_log] {
    return readiness_log.Observe(NotReady(watches, elector));
  };
  DS_ASSIGN_OR_RETURN(
      std::unique_ptr<ExtenderServer> server,
      ExtenderServer::Create(&extender, not_ready, options.server,
                             WatchMetrics(watches, elector),
                             [&watches] { return WatchNotes(watches); }));
  std::unique_ptr<WebhookServer> webhook;
  if (options.webhook.has_value()) {
    admission::AdmissionSettings settings{
        .device = scheduler->config().device,
        .scheduler_name = options.scheduler_name};
    DS_ASSIGN_OR_RETURN(webhook,
                        WebhookServer::Create(settings, *options.webhook));
  }
  RunUntilSignal(options, extender, watches, *server, webhook.get(), election);
  return absl::OkStatus();
}

}  // namespace deviceshare::extender
