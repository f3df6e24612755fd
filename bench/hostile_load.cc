// hostile_load: `deviceshare-scheduler serve` while clients that never
// finish a request hold its connections, and under a burst of large bodies.
//
// Starts the real executable (extender and admission webhook) against the
// tests' in-memory API server with N nodes x G GPUs, all on loopback, then:
//   1. unloaded: /filter + /prioritize round trips for --seconds from
//      --clients threads (every node's name in each request), and
//      --reviews AdmissionReviews, one after another, to the webhook;
//   2. the same while --slow connections trickle a request header a byte
//      a second and --idle connections say nothing, on each listener; a
//      connection the server closes is opened again at once, so the count
//      stays held (as an attacker would keep it);
//   3. --big-bodies concurrent /filter calls of --big-body-mb MB each (full
//      Node objects, nodeCacheCapable off, as a scheduler without a node
//      cache sends them), with serve's peak resident memory (VmHWM) before
//      and after.
// Prints the latency percentiles of each phase, the loaded / unloaded p99
// ratio and the memory peak against the kit's 1 GiB limit. Figures and the
// command line are in bench/README.md.
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "serve_rig.h"
#include "testing/admission_answers.h"
#include "testing/fake_api_server.h"
#include "testing/kube_objects.h"
#include "testing/raw_connection.h"
#include "testing/server_process.h"
#include "testing/test_pki.h"

ABSL_FLAG(int, nodes, 1000, "nodes in the cluster");
ABSL_FLAG(int, gpus, 8, "GPUs per node");
ABSL_FLAG(int, clients, 2, "client threads calling /filter + /prioritize");
ABSL_FLAG(int, seconds, 10, "duration of each filter phase");
ABSL_FLAG(int, reviews, 200, "AdmissionReviews sent in each phase");
ABSL_FLAG(int, slow, 500,
          "connections per listener trickling a header, a byte a second");
ABSL_FLAG(int, idle, 500, "connections per listener that say nothing");
ABSL_FLAG(int, big_bodies, 8, "concurrent large /filter bodies");
ABSL_FLAG(int, big_body_mb, 15, "size of each large body, in MB");
ABSL_FLAG(std::string, scheduler_bin, DEVICESHARE_SCHEDULER_BIN,
          "the deviceshare-scheduler to measure (e.g. a previous build)");

namespace {

using Clock = std::chrono::steady_clock;
using ::deviceshare::bench::AddHamiNodes;
using ::deviceshare::bench::BenchFolder;
using ::deviceshare::bench::FilterAndPrioritize;
using ::deviceshare::bench::MillisecondsSince;
using ::deviceshare::bench::Percentile;
using ::deviceshare::bench::ReadProcessMemory;
using ::deviceshare::bench::ServeArgs;
using ::deviceshare::bench::WaitUntilReady;
using ::deviceshare::testing::FakeApiServer;
using ::deviceshare::testing::FreeLoopbackPort;
using ::deviceshare::testing::HamiPodObject;
using ::deviceshare::testing::RawConnection;
using ::deviceshare::testing::SchedulerProcess;
using ::deviceshare::testing::TestPki;

struct Latencies {
  std::vector<double> ms;
  int failed = 0;
  double p99() const { return Percentile(ms, 99); }
  void Print(const char* what) const {
    std::printf(
        "%-34s %7zu ok %5d failed  p50 %8.2f ms  p99 %8.2f ms  max %8.2f ms\n",
        what, ms.size(), failed, Percentile(ms, 50), p99(),
        Percentile(ms, 100));
    std::fflush(stdout);
  }
};

Latencies FilterPhase(int port, const std::vector<std::string>& pods,
                      const std::string& names) {
  const int clients = absl::GetFlag(FLAGS_clients);
  std::vector<Latencies> parts(clients);
  std::atomic<bool> stop{false};
  std::atomic<size_t> next{0};
  std::vector<std::thread> threads;
  for (int c = 0; c < clients; ++c) {
    threads.emplace_back([&, c] {
      httplib::Client client("127.0.0.1", port);
      client.set_read_timeout(60, 0);
      client.set_tcp_nodelay(true);
      while (!stop.load()) {
        const auto start = Clock::now();
        if (FilterAndPrioritize(client, pods[next++ % pods.size()], names,
                                false)) {
          parts[c].ms.push_back(MillisecondsSince(start));
        } else {
          ++parts[c].failed;
        }
      }
    });
  }
  std::this_thread::sleep_for(
      std::chrono::seconds(absl::GetFlag(FLAGS_seconds)));
  stop = true;
  for (std::thread& thread : threads) thread.join();
  Latencies all;
  for (const Latencies& part : parts) {
    all.ms.insert(all.ms.end(), part.ms.begin(), part.ms.end());
    all.failed += part.failed;
  }
  return all;
}

Latencies ReviewPhase(int port, const TestPki& pki, const std::string& pod) {
  const std::string review = ::deviceshare::testing::PodCreateReview(
                                 nlohmann::json::parse(pod), "bench")
                                 .dump();
  Latencies latencies;
  httplib::SSLClient client("127.0.0.1", port);
  client.set_ca_cert_store(::deviceshare::testing::NewStoreWith(pki.ca));
  client.enable_server_certificate_verification(true);
  client.set_connection_timeout(30, 0);
  client.set_read_timeout(30, 0);
  client.set_tcp_nodelay(true);
  for (int i = 0; i < absl::GetFlag(FLAGS_reviews); ++i) {
    const auto start = Clock::now();
    auto answer = client.Post("/webhook", review, "application/json");
    if (answer && answer->status == 200) {
      latencies.ms.push_back(MillisecondsSince(start));
    } else {
      ++latencies.failed;
    }
  }
  return latencies;
}

// Keeps `slow` trickling and `idle` silent connections open to each port
// until destroyed, opening again any the server closes.
class Holders {
 public:
  Holders(std::vector<int> ports, int slow, int idle) {
    for (int port : ports) {
      for (int i = 0; i < slow; ++i) held_.push_back({port, true, nullptr});
      for (int i = 0; i < idle; ++i) held_.push_back({port, false, nullptr});
    }
    for (Held& held : held_) Open(held);
    thread_ = std::thread([this] { Run(); });
  }
  ~Holders() {
    stop_ = true;
    thread_.join();
  }
  int reopened() const { return reopened_.load(); }
  int open() const { return open_.load(); }

 private:
  struct Held {
    int port;
    bool slow;
    std::unique_ptr<RawConnection> connection;
    size_t sent = 0;
  };
  static constexpr char kHeader[] =
      "POST /filter HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
      "application/json\r\nX-Padding: ";

  void Open(Held& held) {
    held.connection = std::make_unique<RawConnection>(held.port);
    held.sent = 0;
  }

  void Run() {
    while (!stop_) {
      int open = 0;
      for (Held& held : held_) {
        bool alive = held.connection->connected();
        if (alive && held.slow) {
          const char byte =
              held.sent < sizeof(kHeader) - 1 ? kHeader[held.sent] : 'x';
          alive = held.connection->Send(absl::string_view(&byte, 1));
          ++held.sent;
        } else if (alive) {
          alive = !held.connection->ClosedByPeer(0);
        }
        if (!alive) {
          Open(held);
          ++reopened_;
        }
        open += held.connection->connected() ? 1 : 0;
      }
      open_ = open;
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }

  std::vector<Held> held_;
  std::atomic<bool> stop_{false};
  std::atomic<int> reopened_{0};
  std::atomic<int> open_{0};
  std::thread thread_;
};

// An ExtenderArgs of about `megabytes` MB: the pod and full Node objects
// (each padded with an annotation, as labels and annotations of node
// feature discovery pad real ones).
std::string BigFilterBody(const FakeApiServer& api, const std::string& pod,
                          int nodes, int megabytes) {
  const size_t target = static_cast<size_t>(megabytes) * 1000 * 1000;
  const size_t per_node = target / static_cast<size_t>(nodes);
  nlohmann::json items = nlohmann::json::array();
  for (int i = 0; i < nodes; ++i) {
    nlohmann::json node = *api.GetNode(absl::StrCat("node-", i));
    const size_t size = node.dump().size();
    if (per_node > size + 64) {
      node["metadata"]["annotations"]["bench.deviceshare.io/padding"] =
          std::string(per_node - size - 64, 'p');
    }
    items.push_back(std::move(node));
  }
  return nlohmann::json{{"Pod", nlohmann::json::parse(pod)},
                        {"Nodes", {{"items", std::move(items)}}}}
      .dump();
}

void RaiseOpenFileLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  limit.rlim_cur = limit.rlim_max;
  setrlimit(RLIMIT_NOFILE, &limit);
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  RaiseOpenFileLimit();
  const int nodes = absl::GetFlag(FLAGS_nodes);
  FakeApiServer api;
  const std::string names =
      AddHamiNodes(api, nodes, absl::GetFlag(FLAGS_gpus)).dump();
  std::vector<std::string> pods;
  for (int i = 0; i < 200; ++i) {
    pods.push_back(api.UpsertPod(HamiPodObject({.name = absl::StrCat("pod-", i),
                                                .memory_mib = 4000,
                                                .cores = 10}))
                       .dump());
  }
  const BenchFolder folder("hostile-load");
  const TestPki pki = ::deviceshare::testing::MakeTestPki("hostile-load-ca");
  const std::string cert = (folder.path() / "tls.crt").string();
  const std::string key = (folder.path() / "tls.key").string();
  std::ofstream(cert) << pki.server.cert_pem;
  std::ofstream(key) << pki.server.key_pem;
  const int webhook_port = FreeLoopbackPort();
  SchedulerProcess scheduler(
      absl::GetFlag(FLAGS_scheduler_bin),
      ServeArgs(api, folder,
                {"--webhook-port", std::to_string(webhook_port),
                 "--webhook-tls-cert", cert, "--webhook-tls-key", key}));
  if (absl::Status started = scheduler.Start(); !started.ok()) {
    std::fprintf(stderr, "%s\n", std::string(started.message()).c_str());
    return 1;
  }
  if (!WaitUntilReady(scheduler, absl::Seconds(60))) return 1;
  const int port = scheduler.port();
  std::printf(
      "cluster: %d nodes x %d GPUs; %d filter clients; %u hardware threads "
      "shared by the clients, serve and the API server\n",
      nodes, absl::GetFlag(FLAGS_gpus), absl::GetFlag(FLAGS_clients),
      std::thread::hardware_concurrency());

  const Latencies unloaded = FilterPhase(port, pods, names);
  unloaded.Print("filter+prioritize, unloaded");
  ReviewPhase(webhook_port, pki, pods[0]).Print("webhook review, unloaded");
  Latencies loaded;
  {
    const int slow = absl::GetFlag(FLAGS_slow);
    const int idle = absl::GetFlag(FLAGS_idle);
    Holders holders({port, webhook_port}, slow, idle);
    std::this_thread::sleep_for(std::chrono::seconds(2));
    std::printf(
        "holding %d slow + %d idle connections on each listener (%d open)\n",
        slow, idle, holders.open());
    loaded = FilterPhase(port, pods, names);
    loaded.Print("filter+prioritize, held");
    ReviewPhase(webhook_port, pki, pods[0]).Print("webhook review, held");
    std::printf("connections the server closed (and the bench reopened): %d\n",
                holders.reopened());
  }
  std::printf("p99 held / unloaded: %.2f\n",
              unloaded.p99() > 0 ? loaded.p99() / unloaded.p99() : 0.0);

  const int big = absl::GetFlag(FLAGS_big_bodies);
  const std::string body =
      BigFilterBody(api, pods[0], nodes, absl::GetFlag(FLAGS_big_body_mb));
  const auto before = ReadProcessMemory(scheduler.pid());
  std::vector<std::thread> senders;
  std::vector<int> statuses(big, 0);
  std::vector<double> seconds(big, 0);
  for (int i = 0; i < big; ++i) {
    senders.emplace_back([&, i] {
      httplib::Client client("127.0.0.1", port);
      client.set_read_timeout(300, 0);
      client.set_write_timeout(300, 0);
      const auto start = Clock::now();
      auto answer = client.Post("/filter", body, "application/json");
      statuses[i] = answer ? answer->status : -1;
      seconds[i] = MillisecondsSince(start) / 1000;
    });
  }
  for (std::thread& sender : senders) sender.join();
  const auto after = ReadProcessMemory(scheduler.pid());
  int ok = 0;
  for (int status : statuses) ok += status == 200 ? 1 : 0;
  std::printf(
      "%d x %.1f MB /filter bodies at once: %d answered 200, slowest %.2f s; "
      "serve's peak RSS %.0f MiB before, %.0f MiB after (kit limit 1024 "
      "MiB), RSS after %.0f MiB\n",
      big, body.size() / 1e6, ok,
      *std::max_element(seconds.begin(), seconds.end()), before.hwm_kb / 1024.0,
      after.hwm_kb / 1024.0, after.rss_kb / 1024.0);
  scheduler.Kill(SIGTERM);
  return 0;
}
