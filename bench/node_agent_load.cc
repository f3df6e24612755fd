// node_agent_load: `deviceshare-node-agent serve` as kubelet drives it.
//
// The real agent binary runs against the tests' fake libnvidia-ml.so.1
// (through its dlopen path), an in-memory API server and a test kubelet
// that admits containers one at a time, as kubelet does:
// GetPreferredAllocation, Allocate, its checkpoint, PreStartContainer.
// Pods are bound with allocation records; each admission is timed and its
// limits checked against the pod's own record. Then the agent is killed
// (SIGKILL) and started again, and the time until kubelet has it back
// (registered, ListAndWatch open, every device healthy) is measured.
//
// Two phases in one run -- a lightly and a fully packed node -- so the cost
// of matching against many waiting pods shows as a ratio. Figures and the
// command: bench/README.md.
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "testing/agent_pods.h"
#include "testing/fake_api_server.h"
#include "testing/server_process.h"
#include "testing/test_kubelet.h"
#include "testing/wait_for.h"

ABSL_FLAG(int, gpus, 8, "GPUs on the node");
ABSL_FLAG(int, split, 10, "replicas (tenants) per GPU");
ABSL_FLAG(int, restarts, 5, "agent kill/restart cycles timed");

namespace {

using ::deviceshare::Dialect;
using ::deviceshare::testing::AdmittedContainer;
using ::deviceshare::testing::BoundPod;
using ::deviceshare::testing::FakeApiServer;
using ::deviceshare::testing::PodSpec;
using ::deviceshare::testing::ServerProcess;
using ::deviceshare::testing::ShareOf;
using ::deviceshare::testing::TestKubelet;
using ::deviceshare::testing::WaitFor;

constexpr char kNode[] = "bench-node";
constexpr char kResource[] = "nvidia.com/gpu";

std::string Uuid(int index) {
  return absl::StrCat("GPU-", 10000000 + index, "-aaaa-bbbb-cccc-dddddddddddd");
}

double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[static_cast<size_t>(q * (values.size() - 1))];
}

struct Phase {
  int pods = 0;
  double seconds = 0;
  std::vector<double> latency_ms;
  int wrong = 0;
  int failed = 0;
};

class Bench {
 public:
  Bench(int gpus, int split) : gpus_(gpus), split_(split) {
    dir_ = std::filesystem::temp_directory_path() /
           absl::StrCat("ds-agent-load-", getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "plugins");
    nlohmann::json list = nlohmann::json::array();
    for (int i = 0; i < gpus; ++i) {
      list.push_back({{"uuid", Uuid(i)},
                      {"index", i},
                      {"model", "NVIDIA H100 80GB HBM3"},
                      {"memory_mib", 81559},
                      {"pci_device_id", "0x2330"},
                      {"health", "healthy"}});
    }
    std::ofstream(dir_ / "gpus.json") << nlohmann::json{{"gpus", list}}.dump();
    server_.UpsertNode({{"apiVersion", "v1"},
                        {"kind", "Node"},
                        {"metadata", {{"name", kNode}}}});
    kubeconfig_ = server_.WriteKubeconfig(dir_.string());
    kubelet_ = std::make_unique<TestKubelet>((dir_ / "plugins").string());
  }
  ~Bench() {
    agent_.reset();
    kubelet_.reset();
    std::filesystem::remove_all(dir_);
  }

  bool Start() {
    if (!kubelet_->Start().ok()) return false;
    return StartAgent();
  }

  bool StartAgent() {
    agent_ = std::make_unique<ServerProcess>(
        DEVICESHARE_NODE_AGENT_BIN,
        std::vector<std::string>{
            "serve", "--node-name", kNode, "--kubeconfig", kubeconfig_,
            "--device-plugin-dir", (dir_ / "plugins").string(), "--state-dir",
            (dir_ / "state").string(), "--nvml-library",
            DEVICESHARE_FAKE_NVML_LIB, "--hook-path", (dir_ / "vgpu").string(),
            "--log-level", "warn", "--config", (dir_ / "config.yaml").string()},
        "",
        std::vector<std::string>{
            absl::StrCat("FAKE_NVML_INVENTORY=", (dir_ / "gpus.json").string()),
            absl::StrCat("FAKE_NVML_STATE=", (dir_ / "nvml.json").string())});
    std::ofstream(dir_ / "config.yaml")
        << "nvidia:\n  deviceSplitCount: " << split_ << "\n";
    if (!agent_->Start(absl::Seconds(20)).ok()) return false;
    return AllHealthy();
  }

  bool AllHealthy() {
    const size_t want = static_cast<size_t>(gpus_ * split_);
    return kubelet_->WaitForDevices(
        kResource,
        [want](const auto& devices) {
          return devices.size() == want &&
                 std::all_of(devices.begin(), devices.end(),
                             [](const auto& d) { return d.healthy; });
        },
        absl::Seconds(20));
  }

  // Binds `pods` pods (pod i on GPU i % gpus, a share of its own size),
  // then admits them in decision order, one at a time.
  Phase Run(const std::string& prefix, int pods) {
    Phase phase;
    phase.pods = pods;
    std::vector<std::pair<std::string, int64_t>> bound;
    for (int i = 0; i < pods; ++i) {
      const std::string name = absl::StrCat(prefix, "-", i);
      const int64_t memory = 100 + i;
      server_.UpsertPod(BoundPod(
          PodSpec{.name = name, .memory_mib = memory}, Dialect::kHami, kNode,
          {ShareOf(Uuid(i % gpus_), memory, 0)}, 1'700'000'000 + i));
      bound.emplace_back("uid-" + name, memory);
    }
    absl::SleepFor(absl::Milliseconds(500));  // the agent's watch
    const auto begin = std::chrono::steady_clock::now();
    for (const auto& [uid, memory] : bound) {
      const auto start = std::chrono::steady_clock::now();
      absl::StatusOr<AdmittedContainer> admitted =
          kubelet_->AdmitContainer(uid, "main", kResource, 1);
      phase.latency_ms.push_back(std::chrono::duration<double, std::milli>(
                                     std::chrono::steady_clock::now() - start)
                                     .count());
      if (!admitted.ok()) {
        ++phase.failed;
        continue;
      }
      if (admitted->envs["CUDA_DEVICE_MEMORY_LIMIT_0"] !=
          absl::StrCat(memory, "m")) {
        ++phase.wrong;
      }
    }
    phase.seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
            .count();
    for (const auto& [uid, memory] : bound) {
      (void)kubelet_->ReleasePod(uid);
      server_.DeletePod("default", uid.substr(4));
    }
    absl::SleepFor(absl::Milliseconds(500));
    return phase;
  }

  // Kill -9 and start again: ms until kubelet has every device back.
  double Restart() {
    const int registrations = kubelet_->registrations();
    agent_->Kill(SIGKILL);
    const auto start = std::chrono::steady_clock::now();
    if (!StartAgent()) return -1;
    if (!WaitFor([&] { return kubelet_->registrations() > registrations; },
                 absl::Seconds(20))) {
      return -1;
    }
    return std::chrono::duration<double, std::milli>(
               std::chrono::steady_clock::now() - start)
        .count();
  }

  std::string Log() const { return agent_ ? agent_->Log() : ""; }

 private:
  const int gpus_;
  const int split_;
  std::filesystem::path dir_;
  FakeApiServer server_;
  std::string kubeconfig_;
  std::unique_ptr<TestKubelet> kubelet_;
  std::unique_ptr<ServerProcess> agent_;
};

void Print(const char* label, const Phase& phase) {
  std::printf(
      "%-26s pods %4d  admissions/s %7.1f  p50 %6.2f ms  p99 %6.2f ms  "
      "wrong limits %d  failed %d\n",
      label, phase.pods, phase.pods / std::max(phase.seconds, 1e-9),
      Percentile(phase.latency_ms, 0.5), Percentile(phase.latency_ms, 0.99),
      phase.wrong, phase.failed);
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int gpus = absl::GetFlag(FLAGS_gpus);
  const int split = absl::GetFlag(FLAGS_split);
  if (gpus < 1 || split < 1) {
    std::fprintf(stderr, "--gpus and --split must be >= 1\n");
    return 2;
  }
  Bench bench(gpus, split);
  if (!bench.Start()) {
    std::fprintf(stderr, "the agent did not start:\n%s\n", bench.Log().c_str());
    return 1;
  }
  std::printf("node: %d GPUs x %d replicas, kubelet admitting serially\n", gpus,
              split);
  const Phase light = bench.Run("light", gpus);
  const Phase full = bench.Run("full", gpus * split);
  Print("one pod per GPU", light);
  Print("every replica taken", full);
  std::printf("p50 ratio full/light: %.2f\n",
              Percentile(full.latency_ms, 0.5) /
                  std::max(Percentile(light.latency_ms, 0.5), 1e-9));
  std::vector<double> restarts;
  for (int i = 0; i < absl::GetFlag(FLAGS_restarts); ++i) {
    const double ms = bench.Restart();
    if (ms < 0) {
      std::fprintf(stderr, "restart %d failed:\n%s\n", i, bench.Log().c_str());
      return 1;
    }
    restarts.push_back(ms);
  }
  if (!restarts.empty()) {
    std::printf(
        "kill -9 -> agent back (registered, every device healthy): "
        "p50 %.0f ms, max %.0f ms over %zu restarts\n",
        Percentile(restarts, 0.5), Percentile(restarts, 1.0), restarts.size());
  }
  const Phase after = bench.Run("after-restarts", gpus * split);
  Print("after the restarts", after);
  return (light.wrong + full.wrong + after.wrong + light.failed + full.failed +
          after.failed) == 0
             ? 0
             : 1;
}
