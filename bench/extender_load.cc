// extender_load: the load benchmark of `deviceshare-scheduler serve`.
//
// Starts the real executable against an in-memory API server
// (tests/testing/fake_api_server.h) holding N nodes x G GPUs, then drives it
// over loopback HTTP as kube-scheduler would, from C client threads:
//   1. filter + prioritize round trips (every node's name in each request,
//      nodeCacheCapable) for a pool of pods, for D seconds;
//   2. binds of fresh pods, each filtered first (untimed), in parallel.
// Prints throughput and latency percentiles of each phase. Figures and the
// command line are in bench/README.md.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "httplib.h"
#include "testing/fake_api_server.h"
#include "testing/kube_objects.h"
#include "testing/scheduler_process.h"
#include "testing/wait_for.h"

ABSL_FLAG(int, nodes, 1000, "nodes in the cluster");
ABSL_FLAG(int, gpus, 8, "GPUs per node");
ABSL_FLAG(int, clients, 4, "client threads (kube-scheduler's in-flight calls)");
ABSL_FLAG(int, seconds, 10, "duration of the filter+prioritize phase");
ABSL_FLAG(int, pool, 2000, "pods cycled through by the filter phase");
ABSL_FLAG(int, bind_pods, 2000, "pods bound in the bind phase");

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

std::string ArgsBody(const nlohmann::json& pod, const nlohmann::json& names) {
  return nlohmann::json({{"Pod", pod}, {"NodeNames", names}}).dump();
}

void Report(const char* phase, size_t count, double seconds,
            const std::vector<double>& latencies_ms) {
  std::printf(
      "%-22s %8zu ops %7.2f s %9.1f ops/s  p50 %6.2f ms  p99 %6.2f ms  max "
      "%6.2f ms\n",
      phase, count, seconds, count / seconds, Percentile(latencies_ms, 50),
      Percentile(latencies_ms, 99), Percentile(latencies_ms, 100));
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int nodes = absl::GetFlag(FLAGS_nodes);
  const int gpus = absl::GetFlag(FLAGS_gpus);
  const int clients = absl::GetFlag(FLAGS_clients);
  const int pool = absl::GetFlag(FLAGS_pool);
  const int bind_pods = absl::GetFlag(FLAGS_bind_pods);

  FakeApiServer api;
  nlohmann::json names = nlohmann::json::array();
  for (int i = 0; i < nodes; ++i) {
    const std::string name = absl::StrCat("node-", i);
    api.UpsertNode(HamiNodeObject({.name = name, .gpus = gpus}));
    names.push_back(name);
  }
  std::vector<nlohmann::json> pool_pods;
  for (int i = 0; i < pool; ++i) {
    pool_pods.push_back(api.UpsertPod(HamiPodObject(
        {.name = absl::StrCat("pool-", i), .memory_mib = 4000, .cores = 10})));
  }
  std::vector<nlohmann::json> bind_set;
  for (int i = 0; i < bind_pods; ++i) {
    bind_set.push_back(api.UpsertPod(HamiPodObject(
        {.name = absl::StrCat("bind-", i), .memory_mib = 4000, .cores = 10})));
  }
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() /
      absl::StrCat("deviceshare-extender-load-", getpid());
  std::filesystem::create_directories(dir);
  SchedulerProcess scheduler(
      DEVICESHARE_SCHEDULER_BIN,
      {"--kubeconfig", api.WriteKubeconfig(dir.string()), "--address",
       "127.0.0.1:0", "--reservation-ttl", "5m"});
  if (absl::Status started = scheduler.Start(); !started.ok()) {
    std::fprintf(stderr, "%s\n", std::string(started.message()).c_str());
    return 1;
  }
  {
    httplib::Client client("127.0.0.1", scheduler.port());
    if (!deviceshare::testing::WaitFor(
            [&] {
              auto ready = client.Get("/readyz");
              return ready && ready->status == 200;
            },
            absl::Seconds(60))) {
      std::fprintf(stderr, "not ready:\n%s\n", scheduler.Log().c_str());
      return 1;
    }
  }
  std::printf(
      "cluster: %d nodes x %d GPUs; %d client threads; %u hardware "
      "threads shared by client, extender and API server\n",
      nodes, gpus, clients, std::thread::hardware_concurrency());

  // Phase 1: filter + prioritize round trips.
  {
    std::atomic<int> next{0};
    std::atomic<bool> stop{false};
    std::atomic<int> errors{0};
    std::vector<std::vector<double>> latencies(clients);
    std::vector<std::thread> threads;
    const auto start = Clock::now();
    for (int c = 0; c < clients; ++c) {
      threads.emplace_back([&, c] {
        httplib::Client client("127.0.0.1", scheduler.port());
        client.set_read_timeout(30, 0);
        client.set_tcp_nodelay(true);
        while (!stop.load()) {
          const nlohmann::json& pod = pool_pods[next.fetch_add(1) % pool];
          const auto t0 = Clock::now();
          auto filtered =
              client.Post("/filter", ArgsBody(pod, names), "application/json");
          if (!filtered || filtered->status != 200) {
            ++errors;
            continue;
          }
          nlohmann::json passing =
              nlohmann::json::parse(filtered->body)["NodeNames"];
          auto prioritized = client.Post("/prioritize", ArgsBody(pod, passing),
                                         "application/json");
          if (!prioritized || prioritized->status != 200) {
            ++errors;
            continue;
          }
          latencies[c].push_back(
              std::chrono::duration<double, std::milli>(Clock::now() - t0)
                  .count());
        }
      });
    }
    std::this_thread::sleep_for(
        std::chrono::seconds(absl::GetFlag(FLAGS_seconds)));
    stop = true;
    for (std::thread& thread : threads) thread.join();
    const double seconds =
        std::chrono::duration<double>(Clock::now() - start).count();
    std::vector<double> all;
    for (const auto& part : latencies)
      all.insert(all.end(), part.begin(), part.end());
    Report("filter+prioritize", all.size(), seconds, all);
    if (errors > 0) std::printf("  errors: %d\n", errors.load());
  }

  // Phase 2: binds (each pod filtered first, untimed, as kube-scheduler's
  // scheduling cycle precedes its binding cycle).
  {
    std::atomic<int> next{0};
    std::atomic<int> failed{0};
    std::vector<std::vector<double>> latencies(clients);
    std::vector<double> busy_seconds(clients, 0);
    std::vector<std::thread> threads;
    for (int c = 0; c < clients; ++c) {
      threads.emplace_back([&, c] {
        httplib::Client client("127.0.0.1", scheduler.port());
        client.set_read_timeout(30, 0);
        client.set_tcp_nodelay(true);
        for (int i = next.fetch_add(1); i < bind_pods; i = next.fetch_add(1)) {
          const nlohmann::json& pod = bind_set[i];
          auto filtered =
              client.Post("/filter", ArgsBody(pod, names), "application/json");
          if (!filtered || filtered->status != 200) {
            ++failed;
            continue;
          }
          nlohmann::json passing =
              nlohmann::json::parse(filtered->body)["NodeNames"];
          if (passing.empty()) {
            ++failed;
            continue;
          }
          const std::string body =
              nlohmann::json({{"PodName", pod["metadata"]["name"]},
                              {"PodNamespace", "default"},
                              {"PodUID", pod["metadata"]["uid"]},
                              {"Node", passing[0]}})
                  .dump();
          const auto t0 = Clock::now();
          auto bound = client.Post("/bind", body, "application/json");
          const double ms =
              std::chrono::duration<double, std::milli>(Clock::now() - t0)
                  .count();
          busy_seconds[c] += ms / 1000;
          if (!bound || nlohmann::json::parse(bound->body)["Error"] != "") {
            ++failed;
            continue;
          }
          latencies[c].push_back(ms);
        }
      });
    }
    for (std::thread& thread : threads) thread.join();
    std::vector<double> all;
    for (const auto& part : latencies)
      all.insert(all.end(), part.begin(), part.end());
    // Binds per second of bind time: each client's binds over the time it
    // spent in /bind calls, summed over the clients that ran concurrently.
    double rate = 0;
    for (int c = 0; c < clients; ++c) {
      if (busy_seconds[c] > 0) rate += latencies[c].size() / busy_seconds[c];
    }
    Report("bind", all.size(), all.size() / std::max(rate, 1e-9), all);
    std::printf(
        "  bound %zu, failed %d, Binding objects at the API server %zu\n",
        all.size(), failed.load(), api.Bindings().size());
  }
  scheduler.Kill(SIGTERM);
  std::filesystem::remove_all(dir);
  return 0;
}
