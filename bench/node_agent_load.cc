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
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "testing/agent_pods.h"
#include "testing/agent_rig.h"
#include "testing/wait_for.h"

ABSL_FLAG(int, gpus, 8, "GPUs on the node");
ABSL_FLAG(int, split, 10, "replicas (tenants) per GPU");
ABSL_FLAG(int, restarts, 5, "agent kill/restart cycles timed");

namespace {

using ::deviceshare::Dialect;
using ::deviceshare::testing::AdmittedContainer;
using ::deviceshare::testing::AgentRig;
using ::deviceshare::testing::BoundPod;
using ::deviceshare::testing::PodSpec;
using ::deviceshare::testing::ShareOf;
using ::deviceshare::testing::WaitFor;

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

// Binds `pods` pods (pod i on GPU i % gpus, a share of its own size), then
// admits them in decision order, one at a time, as kubelet does.
Phase Run(AgentRig& rig, const std::string& prefix, int pods) {
  Phase phase;
  phase.pods = pods;
  const int gpus = rig.options().gpus;
  std::vector<std::pair<std::string, int64_t>> bound;
  for (int i = 0; i < pods; ++i) {
    const std::string name = absl::StrCat(prefix, "-", i);
    const int64_t memory = 100 + i;
    rig.api().UpsertPod(BoundPod(PodSpec{.name = name, .memory_mib = memory},
                                 Dialect::kHami, rig.options().node,
                                 {ShareOf(AgentRig::Uuid(i % gpus), memory, 0)},
                                 1'700'000'000 + i));
    bound.emplace_back("uid-" + name, memory);
  }
  absl::SleepFor(absl::Milliseconds(500));  // the agent's watch
  const auto begin = std::chrono::steady_clock::now();
  for (const auto& [uid, memory] : bound) {
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<AdmittedContainer> admitted =
        rig.kubelet().AdmitContainer(uid, "main", AgentRig::kResource, 1);
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
    (void)rig.kubelet().ReleasePod(uid);
    rig.api().DeletePod("default", uid.substr(4));
  }
  absl::SleepFor(absl::Milliseconds(500));
  return phase;
}

// Kill -9 and start again: ms until kubelet has every device back; -1 when
// it does not come back.
double Restart(AgentRig& rig) {
  const int registrations = rig.kubelet().registrations();
  rig.KillAgent();
  const auto start = std::chrono::steady_clock::now();
  if (!rig.StartAgent().ok() || !rig.AllHealthy(absl::Seconds(20)) ||
      !WaitFor([&] { return rig.kubelet().registrations() > registrations; },
               absl::Seconds(20))) {
    return -1;
  }
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

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
  absl::StatusOr<std::unique_ptr<AgentRig>> rig =
      AgentRig::Create({.node = "bench-node", .gpus = gpus, .split = split});
  if (!rig.ok() || !(*rig)->StartAgent().ok() ||
      !(*rig)->AllHealthy(absl::Seconds(20))) {
    std::fprintf(stderr, "the agent did not start: %s\n%s\n",
                 rig.status().ToString().c_str(),
                 rig.ok() ? (*rig)->Log().c_str() : "");
    return 1;
  }
  std::printf("node: %d GPUs x %d replicas, kubelet admitting serially\n", gpus,
              split);
  const Phase light = Run(**rig, "light", gpus);
  const Phase full = Run(**rig, "full", gpus * split);
  Print("one pod per GPU", light);
  Print("every replica taken", full);
  std::printf("p50 ratio full/light: %.2f\n",
              Percentile(full.latency_ms, 0.5) /
                  std::max(Percentile(light.latency_ms, 0.5), 1e-9));
  std::vector<double> restarts;
  for (int i = 0; i < absl::GetFlag(FLAGS_restarts); ++i) {
    const double ms = Restart(**rig);
    if (ms < 0) {
      std::fprintf(stderr, "restart %d failed:\n%s\n", i,
                   (*rig)->Log().c_str());
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
  const Phase after = Run(**rig, "after-restarts", gpus * split);
  Print("after the restarts", after);
  return (light.wrong + full.wrong + after.wrong + light.failed + full.failed +
          after.failed) == 0
             ? 0
             : 1;
}
