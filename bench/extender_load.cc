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
#include "serve_rig.h"
#include "testing/fake_api_server.h"
#include "testing/kube_objects.h"
#include "testing/server_process.h"

ABSL_FLAG(int, nodes, 1000, "nodes in the cluster");
ABSL_FLAG(int, gpus, 8, "GPUs per node");
ABSL_FLAG(int, clients, 4, "client threads (kube-scheduler's in-flight calls)");
ABSL_FLAG(int, seconds, 10, "duration of the filter+prioritize phase");
ABSL_FLAG(int, pool, 2000, "pods cycled through by the filter phase");
ABSL_FLAG(int, binds, 2000, "pods bound in the bind phase");
ABSL_FLAG(std::string, scheduler_bin, DEVICESHARE_SCHEDULER_BIN,
          "the deviceshare-scheduler executable to measure (another build's, "
          "to compare two in one session)");
ABSL_FLAG(std::string, answers, "",
          "instead of the timed phases: one client filters and prioritizes "
          "the pool twice, then filters, prioritizes and binds the bind "
          "pods, and writes every answer to this file, so that two builds' "
          "answers can be compared byte for byte (a small cluster, such as "
          "--nodes 20 --gpus 1 --pool 300, also fills up and rejects)");
ABSL_FLAG(int, shapes, 1,
          "distinct request shapes among the pool's pods (memory 4000 MiB + "
          "i mod shapes): 1 is a workload's replicas; more than the "
          "Scheduler's remembered shapes (256) defeats reusing their verdicts");

namespace {

using Clock = std::chrono::steady_clock;
using ::deviceshare::bench::AddHamiNodes;
using ::deviceshare::bench::BenchFolder;
using ::deviceshare::bench::BindPod;
using ::deviceshare::bench::FilterAndPrioritize;
using ::deviceshare::bench::MillisecondsSince;
using ::deviceshare::bench::Percentile;
using ::deviceshare::bench::ServeArgs;
using ::deviceshare::bench::WaitUntilReady;
using ::deviceshare::testing::FakeApiServer;
using ::deviceshare::testing::HamiPodObject;
using ::deviceshare::testing::SchedulerProcess;

struct Phase {
  std::vector<double> latencies_ms;
  double seconds = 0;
};

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

void Report(const char* phase_name, const Phase& phase) {
  const std::vector<double>& ms = phase.latencies_ms;
  std::printf(
      "%-22s %8zu ops %7.2f s %9.1f ops/s  p50 %6.2f ms  p99 %6.2f ms  max "
      "%6.2f ms\n",
      phase_name, ms.size(), phase.seconds, ms.size() / phase.seconds,
      Percentile(ms, 50), Percentile(ms, 99), Percentile(ms, 100));
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
          const auto t0 = Clock::now();
          if (!BindPod(client, pod, *best)) {
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

// --answers: every answer of a fixed sequence of calls, one per line
// after the call's name, into `path`. False when a call fails.
bool RecordAnswers(int port, const std::vector<std::string>& pool_json,
                   const std::vector<nlohmann::json>& bind_pods,
                   const std::string& names_json, const std::string& path) {
  using ::deviceshare::bench::ArgsText;
  using ::deviceshare::bench::NodeNamesText;
  httplib::Client client("127.0.0.1", port);
  std::string out;
  auto call = [&](const char* route, const std::string& body) -> std::string {
    auto answer = client.Post(route, body, "application/json");
    if (!answer) return "";
    absl::StrAppend(&out, route, " ", answer->status, "\n", answer->body, "\n");
    return answer->body;
  };
  auto cycle = [&](const std::string& pod) -> std::string {
    const std::string filtered = call("/filter", ArgsText(pod, names_json));
    return call("/prioritize", ArgsText(pod, NodeNamesText(filtered)));
  };
  for (int pass = 0; pass < 2; ++pass) {
    for (const std::string& pod : pool_json) cycle(pod);
  }
  for (const nlohmann::json& pod : bind_pods) {
    const nlohmann::json priorities = nlohmann::json::parse(
        cycle(pod.dump()), nullptr, /*allow_exceptions=*/false);
    std::string best;
    int64_t best_score = -1;
    if (priorities.is_array()) {
      for (const nlohmann::json& entry : priorities) {
        if (entry["Score"].get<int64_t>() > best_score) {
          best_score = entry["Score"];
          best = entry["Host"];
        }
      }
    }
    if (best.empty()) continue;
    call("/bind", nlohmann::json({{"PodName", pod["metadata"]["name"]},
                                  {"PodNamespace", "default"},
                                  {"PodUID", pod["metadata"]["uid"]},
                                  {"Node", best}})
                      .dump());
  }
  std::FILE* file = std::fopen(path.c_str(), "w");
  if (file == nullptr) return false;
  const bool written =
      std::fwrite(out.data(), 1, out.size(), file) == out.size();
  return std::fclose(file) == 0 && written;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int nodes = absl::GetFlag(FLAGS_nodes);
  const int gpus = absl::GetFlag(FLAGS_gpus);
  const int clients = absl::GetFlag(FLAGS_clients);

  FakeApiServer api;
  const nlohmann::json names = AddHamiNodes(api, nodes, gpus);
  const std::vector<nlohmann::json> pool_pods = AddPods(
      api, "pool-", absl::GetFlag(FLAGS_pool), absl::GetFlag(FLAGS_shapes));
  const std::vector<nlohmann::json> bind_set =
      AddPods(api, "bind-", absl::GetFlag(FLAGS_binds), /*shapes=*/1);
  const BenchFolder folder("extender-load");
  SchedulerProcess scheduler(absl::GetFlag(FLAGS_scheduler_bin),
                             ServeArgs(api, folder));
  if (absl::Status started = scheduler.Start(); !started.ok()) {
    std::fprintf(stderr, "%s\n", std::string(started.message()).c_str());
    return 1;
  }
  if (!WaitUntilReady(scheduler, absl::Seconds(60))) return 1;
  std::printf(
      "cluster: %d nodes x %d GPUs; %d client threads; %u hardware "
      "threads shared by client, extender and API server\n",
      nodes, gpus, clients, std::thread::hardware_concurrency());

  const std::string names_json = names.dump();
  if (const std::string path = absl::GetFlag(FLAGS_answers); !path.empty()) {
    const bool recorded = RecordAnswers(scheduler.port(), Serialized(pool_pods),
                                        bind_set, names_json, path);
    scheduler.Kill(SIGTERM);
    std::printf("answers %s: %s\n", recorded ? "written" : "NOT written",
                path.c_str());
    return recorded ? 0 : 1;
  }
  RunFilterPhase(scheduler.port(), clients, Serialized(pool_pods), names_json);
  RunBindPhase(scheduler.port(), clients, bind_set, names_json, api);
  scheduler.Kill(SIGTERM);
  return 0;
}
