// extender_load: the load benchmark of `deviceshare-scheduler serve`.
//
// Starts the real executable against an in-memory API server
// (tests/testing/fake_api_server.h) holding N nodes x G GPUs, then drives it
// over loopback HTTP as kube-scheduler would, from C client threads:
//   1. filter + prioritize round trips (every node's name in each request,
//      nodeCacheCapable) for a pool of pods, for D seconds;
//   2. full cycles for fresh pods: filter, prioritize, bind to the node of
//      the highest priority, in parallel.
// Prints throughput (whole cycles per second) and latency percentiles (of
// the round trip, and of the /bind call) of each phase. Figures and the
// command line are in bench/README.md.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "httplib.h"
#include "testing/fake_api_server.h"
#include "testing/kube_objects.h"
#include "testing/server_process.h"
#include "testing/wait_for.h"

ABSL_FLAG(int, nodes, 1000, "nodes in the cluster");
ABSL_FLAG(int, gpus, 8, "GPUs per node");
ABSL_FLAG(int, clients, 4, "client threads (kube-scheduler's in-flight calls)");
ABSL_FLAG(int, seconds, 10, "duration of the filter+prioritize phase");
ABSL_FLAG(int, pool, 2000, "pods cycled through by the filter phase");
ABSL_FLAG(int, binds, 2000, "pods bound in the bind phase");
ABSL_FLAG(int, shapes, 1,
          "distinct request shapes among the pool's pods (memory 4000 MiB + "
          "i mod shapes): 1 is a workload's replicas; more than the "
          "Scheduler's remembered shapes (256) defeats reusing their verdicts");

namespace {

using Clock = std::chrono::steady_clock;
using ::deviceshare::testing::FakeApiServer;
using ::deviceshare::testing::HamiNodeObject;
using ::deviceshare::testing::HamiPodObject;
using ::deviceshare::testing::SchedulerProcess;

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t rank = static_cast<size_t>(p / 100.0 * values.size());
  return values[std::min(rank, values.size() - 1)];
}

struct Phase {
  std::vector<double> latencies_ms;
  double seconds = 0;
};

double MillisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

// Runs `work` on `clients` threads, each with its own keep-alive connection,
// and gathers what they measured.
Phase RunClients(
    int port, int clients,
    const std::function<void(httplib::Client&, std::vector<double>&)>& work) {
  std::vector<std::vector<double>> latencies(clients);
  std::vector<std::thread> threads;
  const auto start = Clock::now();
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client client("127.0.0.1", port);
      client.set_read_timeout(30, 0);
      client.set_tcp_nodelay(true);
      work(client, latencies[c]);
    });
  }
  for (std::thread& thread : threads) thread.join();
  Phase phase;
  phase.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  for (const auto& part : latencies) {
    phase.latencies_ms.insert(phase.latencies_ms.end(), part.begin(),
                              part.end());
  }
  return phase;
}

// A request body from JSON text already serialised: kube-scheduler's own
// encoding is not what this benchmark measures, so the client does as
// little JSON work as it can.
std::string ArgsText(const std::string& pod_json, absl::string_view names) {
  return absl::StrCat("{\"Pod\":", pod_json, ",\"NodeNames\":", names, "}");
}

// The raw text of the answer's NodeNames array (node names hold no
// brackets).
absl::string_view NodeNamesText(absl::string_view answer) {
  const size_t key = answer.find("\"NodeNames\":");
  if (key == absl::string_view::npos) return "[]";
  const size_t open = answer.find('[', key);
  const size_t close = answer.find(']', open);
  if (open == absl::string_view::npos || close == absl::string_view::npos) {
    return "[]";
  }
  return answer.substr(open, close - open + 1);
}

// /filter then /prioritize over the nodes that pass. With `pick`, the node
// with the highest priority ("" when none passes); without, "". nullopt on
// an HTTP failure.
std::optional<std::string> FilterAndPrioritize(httplib::Client& client,
                                               const std::string& pod_json,
                                               const std::string& names_json,
                                               bool pick) {
  auto filtered = client.Post("/filter", ArgsText(pod_json, names_json),
                              "application/json");
  if (!filtered || filtered->status != 200) return std::nullopt;
  auto prioritized = client.Post(
      "/prioritize", ArgsText(pod_json, NodeNamesText(filtered->body)),
      "application/json");
  if (!prioritized || prioritized->status != 200) return std::nullopt;
  std::string best;
  if (!pick) return best;
  int64_t best_score = -1;
  for (const nlohmann::json& entry : nlohmann::json::parse(prioritized->body)) {
    if (entry["Score"].get<int64_t>() > best_score) {
      best_score = entry["Score"];
      best = entry["Host"];
    }
  }
  return best;
}

void Report(const char* phase_name, const Phase& phase) {
  const std::vector<double>& ms = phase.latencies_ms;
  std::printf(
      "%-22s %8zu ops %7.2f s %9.1f ops/s  p50 %6.2f ms  p99 %6.2f ms  max "
      "%6.2f ms\n",
      phase_name, ms.size(), phase.seconds, ms.size() / phase.seconds,
      Percentile(ms, 50), Percentile(ms, 99), Percentile(ms, 100));
}

// Registers `nodes` nodes of `gpus` GPUs each; returns their names.
nlohmann::json AddNodes(FakeApiServer& api, int nodes, int gpus) {
  nlohmann::json names = nlohmann::json::array();
  for (int i = 0; i < nodes; ++i) {
    const std::string name = absl::StrCat("node-", i);
    api.UpsertNode(HamiNodeObject({.name = name, .gpus = gpus}));
    names.push_back(name);
  }
  return names;
}

// Adds pods <prefix>0.. asking 10% of a GPU's cores and 4000 MiB plus
// i mod `shapes`; returns them as the API server holds them.
std::vector<nlohmann::json> AddPods(FakeApiServer& api, const char* prefix,
                                    int count, int shapes) {
  std::vector<nlohmann::json> pods;
  for (int i = 0; i < count; ++i) {
    pods.push_back(api.UpsertPod(HamiPodObject({.name = absl::StrCat(prefix, i),
                                                .memory_mib = 4000 + i % shapes,
                                                .cores = 10})));
  }
  return pods;
}

std::vector<std::string> Serialized(const std::vector<nlohmann::json>& pods) {
  std::vector<std::string> texts;
  for (const nlohmann::json& pod : pods) texts.push_back(pod.dump());
  return texts;
}

// False (the extender's log printed) when it does not answer /readyz within
// a minute.
bool WaitUntilReady(SchedulerProcess& scheduler) {
  httplib::Client client("127.0.0.1", scheduler.port());
  if (!deviceshare::testing::WaitFor(
          [&] {
            auto ready = client.Get("/readyz");
            return ready && ready->status == 200;
          },
          absl::Seconds(60))) {
    std::fprintf(stderr, "not ready:\n%s\n", scheduler.Log().c_str());
    return false;
  }
  return true;
}

// Phase 1: filter + prioritize round trips over the pool's pods, for
// --seconds.
void RunFilterPhase(int port, int clients,
                    const std::vector<std::string>& pool_json,
                    const std::string& names_json) {
  const int pool = static_cast<int>(pool_json.size());
  std::atomic<int> next{0};
  std::atomic<bool> stop{false};
  std::atomic<int> errors{0};
  std::thread timer([&] {
    std::this_thread::sleep_for(
        std::chrono::seconds(absl::GetFlag(FLAGS_seconds)));
    stop = true;
  });
  Phase phase = RunClients(
      port, clients, [&](httplib::Client& client, std::vector<double>& ms) {
        while (!stop.load()) {
          const std::string& pod = pool_json[next.fetch_add(1) % pool];
          const auto t0 = Clock::now();
          if (!FilterAndPrioritize(client, pod, names_json, false)) {
            ++errors;
            continue;
          }
          ms.push_back(MillisecondsSince(t0));
        }
      });
  timer.join();
  Report("filter+prioritize", phase);
  if (errors > 0) std::printf("  errors: %d\n", errors.load());
}

// Phase 2: binds. Each pod is filtered and prioritized first, and bound
// to the node with the highest priority, as kube-scheduler does; the
// phase's rate counts the whole cycle, the latencies only the /bind call.
void RunBindPhase(int port, int clients,
                  const std::vector<nlohmann::json>& pods,
                  const std::string& names_json, const FakeApiServer& api) {
  const int bind_pods = static_cast<int>(pods.size());
  const std::vector<std::string> pods_json = Serialized(pods);
  std::atomic<int> next{0};
  std::atomic<int> failed{0};
  Phase phase = RunClients(
      port, clients, [&](httplib::Client& client, std::vector<double>& ms) {
        for (int i = next.fetch_add(1); i < bind_pods; i = next.fetch_add(1)) {
          const nlohmann::json& pod = pods[i];
          std::optional<std::string> best =
              FilterAndPrioritize(client, pods_json[i], names_json, true);
          if (!best || best->empty()) {
            ++failed;
            continue;
          }
          const std::string body =
              nlohmann::json({{"PodName", pod["metadata"]["name"]},
                              {"PodNamespace", "default"},
                              {"PodUID", pod["metadata"]["uid"]},
                              {"Node", *best}})
                  .dump();
          const auto t0 = Clock::now();
          auto bound = client.Post("/bind", body, "application/json");
          if (!bound || nlohmann::json::parse(bound->body)["Error"] != "") {
            ++failed;
            continue;
          }
          ms.push_back(MillisecondsSince(t0));
        }
      });
  Report("filter+prio+bind", phase);
  std::printf("  bound %zu, failed %d, Binding objects at the API server %zu\n",
              phase.latencies_ms.size(), failed.load(), api.Bindings().size());
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int nodes = absl::GetFlag(FLAGS_nodes);
  const int gpus = absl::GetFlag(FLAGS_gpus);
  const int clients = absl::GetFlag(FLAGS_clients);

  FakeApiServer api;
  const nlohmann::json names = AddNodes(api, nodes, gpus);
  const std::vector<nlohmann::json> pool_pods = AddPods(
      api, "pool-", absl::GetFlag(FLAGS_pool), absl::GetFlag(FLAGS_shapes));
  const std::vector<nlohmann::json> bind_set =
      AddPods(api, "bind-", absl::GetFlag(FLAGS_binds), /*shapes=*/1);
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      absl::StrCat("deviceshare-extender-load-", getpid());
  std::filesystem::create_directories(dir);
  // No node agent runs here to end pods' being in flight (bind-phase
  // success), so the bind rule that waits for it is off: the figures are
  // the extender's own.
  SchedulerProcess scheduler(
      DEVICESHARE_SCHEDULER_BIN,
      {"--kubeconfig", api.WriteKubeconfig(dir.string()), "--address",
       "127.0.0.1:0", "--reservation-ttl", "5m", "--in-flight-timeout", "0s"});
  if (absl::Status started = scheduler.Start(); !started.ok()) {
    std::fprintf(stderr, "%s\n", std::string(started.message()).c_str());
    return 1;
  }
  if (!WaitUntilReady(scheduler)) return 1;
  std::printf(
      "cluster: %d nodes x %d GPUs; %d client threads; %u hardware "
      "threads shared by client, extender and API server\n",
      nodes, gpus, clients, std::thread::hardware_concurrency());

  const std::string names_json = names.dump();
  RunFilterPhase(scheduler.port(), clients, Serialized(pool_pods), names_json);
  RunBindPhase(scheduler.port(), clients, bind_set, names_json, api);
  scheduler.Kill(SIGTERM);
  std::filesystem::remove_all(dir);
  return 0;
}
