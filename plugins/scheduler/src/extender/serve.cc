#include "deviceshare/extender/serve.h"

#include <csignal>
#include <memory>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "deviceshare/backend/backend_registry.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/config/config_parser.h"
#include "deviceshare/extender/extender.h"
#include "deviceshare/input/input_file.h"
#include "deviceshare/kube/api_client.h"
#include "deviceshare/kube/kube_config.h"
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

// A list+watch of the collection at `path` (`what` in the log) that feeds
// the extender's handlers for it.
std::unique_ptr<kube::Reflector> WatchCollection(
    kube::ApiClient* client, Extender& extender, const char* path,
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

using NamedWatch = std::pair<const char*, const kube::Reflector*>;

// One metric family of the watches: its HELP and TYPE lines, then one
// sample per collection.
void AppendWatchFamily(std::string& text, absl::string_view name,
                       absl::string_view help, absl::string_view type,
                       absl::Span<const NamedWatch> watches,
                       int64_t (*value)(const kube::Reflector&)) {
  absl::StrAppend(&text, "# HELP ", name, " ", help, "\n", "# TYPE ", name, " ",
                  type, "\n");
  for (const auto& [collection, reflector] : watches) {
    absl::StrAppend(&text, name, "{resource=\"", collection, "\"} ",
                    value(*reflector), "\n");
  }
}

// The watches' state for /metrics: synced, relists and errors.
MetricsAppender WatchMetrics(const kube::Reflector& nodes,
                             const kube::Reflector& pods) {
  return [&nodes, &pods](std::string& text) {
    const NamedWatch watches[] = {{"nodes", &nodes}, {"pods", &pods}};
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

// Starts the watches and the server, sweeps expired reservations every
// second until SIGTERM or SIGINT, then stops what it started.
void RunUntilSignal(const ServeOptions& options, Extender& extender,
                    kube::Reflector& nodes, kube::Reflector& pods,
                    ExtenderServer& server) {
  g_stop.store(false);
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  nodes.Start();
  pods.Start();
  server.Start();
  LogNode(
      LogLevel::kInfo, "",
      absl::StrCat("serving address=", options.server.host, ":", server.port(),
                   options.server.tls_cert_file.empty() ? " http" : " https"));
  absl::Time next_sweep = absl::Now();
  while (!g_stop.load()) {
    absl::SleepFor(absl::Milliseconds(50));
    if (absl::Now() >= next_sweep) {
      extender.ExpireReservations();
      next_sweep = absl::Now() + absl::Seconds(1);
    }
  }
  LogNode(LogLevel::kInfo, "", "shutting down");
  server.Stop();
  pods.Stop();
  nodes.Stop();
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
  ExtenderOptions extender_options;
  extender_options.reservation_ttl = options.reservation_ttl;
  extender_options.in_flight_timeout = options.in_flight_timeout;
  Extender extender(scheduler.get(), writer.get(), &RealClock(),
                    extender_options);

  std::unique_ptr<kube::Reflector> nodes_watch =
      WatchCollection(client.get(), extender, "/api/v1/nodes", "nodes",
                      &Extender::OnNodesReplaced, &Extender::OnNodeEvent);
  std::unique_ptr<kube::Reflector> pods_watch =
      WatchCollection(client.get(), extender, "/api/v1/pods", "pods",
                      &Extender::OnPodsReplaced, &Extender::OnPodEvent);
  kube::Reflector& nodes = *nodes_watch;
  kube::Reflector& pods = *pods_watch;
  auto ready = [&] { return nodes.synced() && pods.synced(); };
  DS_ASSIGN_OR_RETURN(std::unique_ptr<ExtenderServer> server,
                      ExtenderServer::Create(&extender, ready, options.server,
                                             WatchMetrics(nodes, pods)));
  RunUntilSignal(options, extender, nodes, pods, *server);
  return absl::OkStatus();
}

}  // namespace deviceshare::extender
