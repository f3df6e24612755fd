// serve_memory: the resident memory of `deviceshare-scheduler serve` at a
// cluster's scale.
//
// Fills the tests' in-memory API server (tests/testing/fake_api_server.h)
// with N nodes x G GPUs (HAMi's JSON registration) and P pods already bound
// and served (spec.nodeName, HAMi's allocation record: 1 GPU, --pod-memory
// MiB and --pod-cores % each; pod i on node i mod N, GPU (i / N) mod G, so
// every record fits its GPU), starts the real `serve` against it and waits
// for /readyz: ready means the first list of every watched collection has
// been applied, every pod's record charged. Then prints the child's VmRSS
// and VmHWM (/proc/<pid>/status) and the time from start to ready; then
// again after --filters filter + prioritize (+ bind) cycles with every
// node's name (per-request buffers count too); then, with --verify, scrapes
// /metrics once and checks that the GPUs' tenants add up to P and no
// record went uncharged (the scrape itself is large at this scale, so it
// comes last, with the memory after it). Figures and the command line are
// in bench/README.md.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "httplib.h"
#include "serve_rig.h"
#include "testing/fake_api_server.h"
#include "testing/kube_objects.h"
#include "testing/server_process.h"

ABSL_FLAG(int, nodes, 20000, "nodes in the cluster");
ABSL_FLAG(int, gpus, 8, "GPUs per node");
ABSL_FLAG(int, pods, 100000, "pods already bound, spread over the GPUs");
ABSL_FLAG(int, pod_memory, 8000, "MiB of GPU memory each bound pod holds");
ABSL_FLAG(int, pod_cores, 10, "% of a GPU's cores each bound pod holds");
ABSL_FLAG(int, filters, 300,
          "pending pods (one shape) filtered and prioritized with every "
          "node's name after the start (0: none)");
ABSL_FLAG(bool, bind, true,
          "bind each filtered pod to its best node, as kube-scheduler does; "
          "false leaves every filter's reservation (with its ranking of the "
          "nodes) held for the reservation TTL, 5 minutes here");
ABSL_FLAG(bool, verify, true,
          "scrape /metrics at the end and check the charged pods");
ABSL_FLAG(int, ready_timeout_s, 1800, "seconds to wait for /readyz");
ABSL_FLAG(std::string, scheduler_bin, DEVICESHARE_SCHEDULER_BIN,
          "the deviceshare-scheduler to measure (e.g. a previous build)");

namespace {

using Clock = std::chrono::steady_clock;
using ::deviceshare::bench::AddHamiNodes;
using ::deviceshare::bench::BenchFolder;
using ::deviceshare::bench::BindPod;
using ::deviceshare::bench::FilterAndPrioritize;
using ::deviceshare::bench::ProcessMemory;
using ::deviceshare::bench::ReadProcessMemory;
using ::deviceshare::bench::ServeArgs;
using ::deviceshare::bench::WaitUntilReady;
using ::deviceshare::testing::FakeApiServer;
using ::deviceshare::testing::HamiBoundPodObject;
using ::deviceshare::testing::HamiPodObject;
using ::deviceshare::testing::SchedulerProcess;

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void PrintMemory(const char* when, pid_t pid) {
  const ProcessMemory memory = ReadProcessMemory(pid);
  std::printf(
      "%-28s VmRSS %7.1f MiB  VmHWM %7.1f MiB  RssAnon %7.1f MiB  threads "
      "%d\n",
      when, memory.rss_kb / 1024.0, memory.hwm_kb / 1024.0,
      memory.anon_kb / 1024.0, memory.threads);
  std::fflush(stdout);
}

// Pod i: 1 GPU on node i mod nodes, GPU (i / nodes) mod gpus.
void AddBoundPods(FakeApiServer& api, int pods, int nodes, int gpus) {
  for (int i = 0; i < pods; ++i) {
    api.UpsertPod(HamiBoundPodObject(
        {.name = absl::StrCat("bound-", i),
         .memory_mib = absl::GetFlag(FLAGS_pod_memory),
         .cores = absl::GetFlag(FLAGS_pod_cores)},
        absl::StrCat("node-", i % nodes), (i / nodes) % gpus));
  }
}

// The pending pods the filter phase asks about, as the API server holds
// them.
std::vector<nlohmann::json> AddPendingPods(FakeApiServer& api, int count) {
  std::vector<nlohmann::json> pods;
  for (int i = 0; i < count; ++i) {
    pods.push_back(api.UpsertPod(HamiPodObject(
        {.name = absl::StrCat("new-", i), .memory_mib = 4000, .cores = 10})));
  }
  return pods;
}

// Filter + prioritize of each pending pod with every node's name, and with
// `bind` its bind to the node of the highest priority; returns the cycles
// that failed.
int RunFilters(int port, const std::vector<nlohmann::json>& pods,
               const std::string& names_json, bool bind) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(120, 0);
  int failed = 0;
  const auto start = Clock::now();
  for (const nlohmann::json& pod : pods) {
    std::optional<std::string> best =
        FilterAndPrioritize(client, pod.dump(), names_json, bind);
    if (!best || (bind && (best->empty() || !BindPod(client, pod, *best)))) {
      ++failed;
    }
  }
  std::printf(
      "%zu filter+prioritize%s cycles with %zu-byte node lists: %.1f s\n",
      pods.size(), bind ? "+bind" : "", names_json.size(), SecondsSince(start));
  return failed;
}

// The sum of a family's samples in a Prometheus text exposition.
double SumOf(absl::string_view text, absl::string_view family) {
  double sum = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::ConsumePrefix(&line, family)) continue;
    if (line.empty() || (line[0] != '{' && line[0] != ' ')) continue;
    const size_t space = line.rfind(' ');
    double value = 0;
    if (space != absl::string_view::npos &&
        absl::SimpleAtod(line.substr(space + 1), &value)) {
      sum += value;
    }
  }
  return sum;
}

// Whether serve charged every pod, as its /metrics says: the GPUs'
// tenants (one GPU each) are the `bound` pods of the start and the
// `filtered` pods of the filter phase, reserved or bound since.
bool Verify(int port, int bound, int filtered) {
  httplib::Client client("127.0.0.1", port);
  client.set_read_timeout(300, 0);
  const auto start = Clock::now();
  auto metrics = client.Get("/metrics");
  if (!metrics || metrics->status != 200) {
    std::printf("verify: /metrics failed\n");
    return false;
  }
  const double tenants = SumOf(metrics->body, "deviceshare_gpu_tenants");
  const double unaccounted =
      SumOf(metrics->body, "deviceshare_extender_unaccounted_pods_total");
  std::printf(
      "verify: /metrics (%.1f MiB, %.1f s): GPU tenants %.0f (expected %d "
      "bound + %d filtered); %.0f records unaccounted\n",
      metrics->body.size() / 1048576.0, SecondsSince(start), tenants, bound,
      filtered, unaccounted);
  return tenants == bound + filtered && unaccounted == 0;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int nodes = absl::GetFlag(FLAGS_nodes);
  const int gpus = absl::GetFlag(FLAGS_gpus);
  const int pods = absl::GetFlag(FLAGS_pods);
  // HamiNodeObject's GPUs: 10 tenants, 81920 MiB, 100 % each.
  const int per_gpu = (pods + nodes * gpus - 1) / (nodes * gpus);
  if (nodes <= 0 || gpus <= 0 || per_gpu > 10 ||
      per_gpu * absl::GetFlag(FLAGS_pod_memory) > 81920 ||
      per_gpu * absl::GetFlag(FLAGS_pod_cores) > 100) {
    std::fprintf(stderr, "%d pods do not fit %d nodes x %d GPUs\n", pods, nodes,
                 gpus);
    return 2;
  }

  const auto filling = Clock::now();
  FakeApiServer api;
  const std::string names_json = AddHamiNodes(api, nodes, gpus).dump();
  AddBoundPods(api, pods, nodes, gpus);
  const std::vector<nlohmann::json> pending =
      AddPendingPods(api, absl::GetFlag(FLAGS_filters));
  std::printf(
      "cluster: %d nodes x %d GPUs, %d bound pods (%d MiB, %d %% each), %zu "
      "pending; API server filled in %.1f s; %u hardware threads shared by "
      "the benchmark, its API server and serve\n",
      nodes, gpus, pods, absl::GetFlag(FLAGS_pod_memory),
      absl::GetFlag(FLAGS_pod_cores), pending.size(), SecondsSince(filling),
      std::thread::hardware_concurrency());

  const BenchFolder folder("serve-memory");
  SchedulerProcess scheduler(absl::GetFlag(FLAGS_scheduler_bin),
                             ServeArgs(api, folder));
  const auto start = Clock::now();
  if (absl::Status started = scheduler.Start(absl::Seconds(60));
      !started.ok()) {
    std::fprintf(stderr, "%s\n", std::string(started.message()).c_str());
    return 1;
  }
  const double serving_s = SecondsSince(start);
  if (!WaitUntilReady(scheduler,
                      absl::Seconds(absl::GetFlag(FLAGS_ready_timeout_s)),
                      absl::Milliseconds(50))) {
    return 1;
  }
  std::printf(
      "serve: listening after %.2f s, ready (every pod taken in) "
      "after %.2f s\n",
      serving_s, SecondsSince(start));
  PrintMemory("ready:", scheduler.pid());
  // What the allocator keeps once the start's transient buffers are gone.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  PrintMemory("ready + 2 s:", scheduler.pid());

  int failed = 0;
  if (!pending.empty()) {
    failed = RunFilters(scheduler.port(), pending, names_json,
                        absl::GetFlag(FLAGS_bind));
    PrintMemory("after the filters:", scheduler.pid());
    if (failed > 0) std::printf("  failed round trips: %d\n", failed);
  }
  bool verified = true;
  if (absl::GetFlag(FLAGS_verify)) {
    verified = Verify(scheduler.port(), pods,
                      static_cast<int>(pending.size()) - failed);
    PrintMemory("after a /metrics scrape:", scheduler.pid());
  }
  scheduler.Kill(SIGTERM);
  return failed == 0 && verified ? 0 : 1;
}
