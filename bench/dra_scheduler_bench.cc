// dra_scheduler_bench: pods with DRA claims through the whole decision
// path (Scheduler::Schedule), on nodes that publish their GPUs as the node
// agent does with `serve --dra` (8 x A100-80GB each: one shared device per
// GPU with capacities memory, cores and shares).
//
//   fill     --pods pods, each with a claim for one share (5..50 % of a GPU:
//            that much of its memory and of its SMs), scheduled in order
//            with no departures: pods/s and how many were placed.
//   churn    arrivals and departures at --load offered load (Poisson
//            arrivals, exponential lifetimes; load = arrival rate x mean
//            lifetime x mean GPUs asked / GPUs) of simulate's synthetic
//            mix: 70 % a share (5..50 %), 20 % one whole GPU, 10 % 2, 4
//            or 8 whole GPUs (distinct devices): how many pods find no
//            room, after --warmup arrivals.
//
// Each runs on the same pods with: binpack (the default policies: the
// fullest node and device that fit); first fit (every score equal, so the
// first node by name and the first device by index that fit); and, for
// churn, kube-scheduler's choice -- its DRA allocator scores no device, so
// the pod goes to one of the nodes that fit (here drawn at random, as
// NodeResourcesFit's spreading and sampling make it for GPU-only pods) and
// takes the first device that fits there. Usage: dra_scheduler_bench
// [--nodes 500] [--pods 5000] [--load 0.9] [--arrivals 30000]
// [--warmup 12000] [--seed 1].
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <queue>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deviceshare/agent/discovered_gpu.h"
#include "deviceshare/agent/resource_slices.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/config/device_registration.h"
#include "deviceshare/policy/placement_policy.h"
#include "deviceshare/policy/policy_registry.h"
#include "deviceshare/scheduler/scheduler.h"

ABSL_FLAG(int, nodes, 500, "nodes of 8 GPUs");
ABSL_FLAG(int, pods, 5000, "fill: pods");
ABSL_FLAG(double, load, 0.9, "churn: offered load");
ABSL_FLAG(int, arrivals, 30000, "churn: arrivals");
ABSL_FLAG(int, warmup, 12000, "churn: arrivals before rejections count");
ABSL_FLAG(uint64_t, seed, 1, "seed of the share sizes and the arrivals");

namespace {

using namespace ::deviceshare;  // NOLINT: a benchmark file

constexpr int kGpusPerNode = 8;
constexpr int64_t kGpuMib = 81920;

// Every candidate scores the same: the decision path's tie-breaks then
// take the first node by name, and the DRA allocator the first device.
class FirstFitPolicy final : public PlacementPolicy {
 public:
  absl::string_view name() const override { return "first-fit"; }
  int GpuScore(const DeviceLedger&, const PodCharge&) const override {
    return 0;
  }
  int NodeScore(const NodeState&, const PodAllocation&) const override {
    return 0;
  }
  int ScoreBound(const UtilisationRange&) const override { return 0; }
};

enum class Strategy { kBinpack, kFirstFit, kRandomNode };

const char* NameOf(Strategy strategy) {
  switch (strategy) {
    case Strategy::kBinpack:
      return "binpack";
    case Strategy::kFirstFit:
      return "first-fit";
    case Strategy::kRandomNode:
      return "kube-like";
  }
  return "";
}

struct Cluster {
  std::vector<NodeInventory> nodes;
  std::vector<dra::ResourceSlice> slices;
};

Cluster MakeCluster(int nodes, const Config& config,
                    const BackendRegistry& registry) {
  Cluster cluster;
  BackendSet backends = *BackendSet::Create(registry, config);
  for (int n = 0; n < nodes; ++n) {
    NodeInventory node;
    node.name = absl::StrFormat("node-%05d", n);
    std::vector<Gpu> gpus;
    std::vector<agent::DiscoveredGpu> discovered;
    for (int g = 0; g < kGpusPerNode; ++g) {
      Gpu physical;
      physical.index = g;
      physical.uuid = absl::StrFormat("GPU-%05d-%d", n, g);
      physical.model = "NVIDIA A100-SXM4-80GB";
      physical.memory_mib = kGpuMib;
      Gpu gpu = *RegisteredGpu(physical, config.device);
      discovered.push_back(agent::FromPhysicalGpu(gpu));
      gpus.push_back(std::move(gpu));
    }
    agent::SliceOptions options;
    options.node_name = node.name;
    agent::NodeSlices slices =
        *agent::BuildResourceSlices(discovered, gpus, backends, options);
    for (dra::ResourceSlice& slice : slices.slices) {
      cluster.slices.push_back(std::move(slice));
    }
    cluster.nodes.push_back(std::move(node));
  }
  return cluster;
}

// What one pod asks: `gpus` devices, each `percent` of a GPU's memory
// (whole MiB) and SMs; 100 % is a whole GPU.
struct Ask {
  int gpus = 1;
  int percent = 100;
};

dra::ResourceClaim ClaimFor(const std::string& name, Ask ask) {
  dra::ExactRequest exactly;
  exactly.device_class = "gpu.deviceshare.io";
  exactly.count = ask.gpus;
  exactly.capacity = {{"memory", kGpuMib * ask.percent / 100 << 20},
                      {"cores", ask.percent}};
  dra::DeviceRequest request;
  request.name = "gpu";
  request.exactly = std::move(exactly);
  dra::ResourceClaim claim;
  claim.ns = "bench";
  claim.name = name;
  claim.uid = "claim-" + name;
  claim.spec.requests.push_back(std::move(request));
  if (ask.gpus > 1) {
    claim.spec.constraints.push_back(
        dra::DeviceConstraint{{}, "", "gpu.deviceshare.io/uuid"});
  }
  return claim;
}

// simulate's synthetic mix (a share, one GPU, several GPUs).
Ask DrawAsk(std::mt19937_64& rng) {
  const int kind = std::uniform_int_distribution<int>(0, 99)(rng);
  if (kind < 70) return Ask{1, std::uniform_int_distribution<int>(5, 50)(rng)};
  if (kind < 90) return Ask{1, 100};
  const int choices[] = {2, 4, 8};
  return Ask{choices[std::uniform_int_distribution<int>(0, 2)(rng)], 100};
}

// Mean GPUs a drawn pod asks: 0.7 x 0.275 + 0.2 + 0.1 x 14 / 3.
constexpr double kMeanGpusAsked = 0.7 * 0.275 + 0.2 + 0.1 * 14.0 / 3;

PodRequest PodWith(const std::string& name) {
  PodRequest pod;
  pod.namespace_name = "bench";
  pod.name = name;
  pod.uid = "uid-" + name;
  ContainerRequest main;
  main.name = "main";
  pod.containers.push_back(main);
  pod.claims.push_back(PodClaim{"gpu", name, ""});
  return pod;
}

std::unique_ptr<Scheduler> MakeScheduler(Strategy strategy,
                                         const Cluster& cluster) {
  BackendRegistry backends;
  RegisterBuiltinBackends(backends).IgnoreError();
  PolicyRegistry policies;
  RegisterBuiltinPolicies(policies).IgnoreError();
  policies
      .Register("first-fit",
                [](const Config&)
                    -> absl::StatusOr<std::unique_ptr<PlacementPolicy>> {
                  return std::make_unique<FirstFitPolicy>();
                })
      .IgnoreError();
  Config config;
  if (strategy != Strategy::kBinpack) {
    config.scheduler.node_policy = "first-fit";
    config.scheduler.gpu_policy = "first-fit";
  }
  auto ids = std::make_shared<std::atomic<uint64_t>>(0);
  std::unique_ptr<Scheduler> scheduler =
      *Scheduler::Create(config, backends, policies, nullptr,
                         [ids] { return absl::StrCat("share-", ++*ids); });
  scheduler->UpsertDeviceClass(
      dra::DeviceClass{"gpu.deviceshare.io",
                       {"device.driver == \"gpu.deviceshare.io\""},
                       {},
                       ""});
  for (const NodeInventory& node : cluster.nodes) {
    scheduler->UpsertNode(node).IgnoreError();
  }
  for (const dra::ResourceSlice& slice : cluster.slices) {
    scheduler->UpsertResourceSlice(slice).IgnoreError();
  }
  return scheduler;
}

// kube-scheduler's choice: a node that fits, at random; its first device.
bool PlaceOnRandomNode(Scheduler& scheduler, const PodRequest& pod,
                       std::mt19937_64& rng) {
  absl::StatusOr<std::vector<NodeVerdict>> verdicts = scheduler.Filter(pod);
  if (!verdicts.ok()) return false;
  std::vector<std::string> fits;
  for (const NodeVerdict& verdict : *verdicts) {
    if (verdict.fit.fits()) fits.push_back(verdict.node);
  }
  if (fits.empty()) return false;
  const std::string& node =
      fits[std::uniform_int_distribution<size_t>(0, fits.size() - 1)(rng)];
  absl::StatusOr<Decision> decision = scheduler.Allocate(pod, node);
  return decision.ok() && decision->allocation.has_value();
}

// Places the pod; false when no node has room. Times the decision alone.
bool Place(Scheduler& scheduler, Strategy strategy, const std::string& name,
           Ask ask, const ScheduleOptions& options, std::mt19937_64& rng,
           double& seconds) {
  scheduler.UpsertResourceClaim(ClaimFor(name, ask)).IgnoreError();
  const PodRequest pod = PodWith(name);
  const auto start = std::chrono::steady_clock::now();
  bool placed = false;
  if (strategy == Strategy::kRandomNode) {
    placed = PlaceOnRandomNode(scheduler, pod, rng);
  } else {
    absl::StatusOr<Decision> decision = scheduler.Schedule(pod, options);
    placed = decision.ok() && decision->allocation.has_value();
  }
  seconds +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  return placed;
}

void Fill(const Cluster& cluster, const std::vector<int>& shares) {
  ScheduleOptions options;
  options.count_reasons = false;
  options.max_explained_nodes = 0;
  std::mt19937_64 unused;
  for (Strategy strategy : {Strategy::kBinpack, Strategy::kFirstFit}) {
    std::unique_ptr<Scheduler> scheduler = MakeScheduler(strategy, cluster);
    double seconds = 0;
    int placed = 0;
    for (size_t i = 0; i < shares.size(); ++i) {
      placed += Place(*scheduler, strategy, absl::StrCat("fill-", i),
                      Ask{1, shares[i]}, options, unused, seconds);
    }
    std::printf("fill  %-9s %d pods, %d placed: %.0f pods/s (%.3f s)\n",
                NameOf(strategy), static_cast<int>(shares.size()), placed,
                shares.size() / seconds, seconds);
  }
}

void Churn(const Cluster& cluster, int arrivals, int warmup, double load,
           uint64_t seed) {
  ScheduleOptions options;
  options.count_reasons = false;
  options.max_explained_nodes = 0;
  // Lifetimes have mean 1 (the time unit).
  const double gpus = static_cast<double>(cluster.nodes.size()) * kGpusPerNode;
  const double rate = load * gpus / kMeanGpusAsked;
  for (Strategy strategy :
       {Strategy::kBinpack, Strategy::kFirstFit, Strategy::kRandomNode}) {
    std::mt19937_64 rng(seed);
    std::mt19937_64 choice(seed + 1);
    std::exponential_distribution<double> gap(rate);
    std::exponential_distribution<double> life(1.0);
    std::unique_ptr<Scheduler> scheduler = MakeScheduler(strategy, cluster);
    using Departure = std::pair<double, std::string>;
    std::priority_queue<Departure, std::vector<Departure>, std::greater<>>
        leaving;
    double now = 0;
    double seconds = 0;
    int rejected = 0;
    int counted = 0;
    double gpus_rejected = 0;
    for (int i = 0; i < arrivals; ++i) {
      now += gap(rng);
      const double lifetime = life(rng);
      const Ask ask = DrawAsk(rng);
      while (!leaving.empty() && leaving.top().first <= now) {
        scheduler->Release("uid-" + leaving.top().second);
        scheduler->RemoveResourceClaim("bench/" + leaving.top().second);
        leaving.pop();
      }
      const std::string name = absl::StrCat("pod-", i);
      const bool placed =
          Place(*scheduler, strategy, name, ask, options, choice, seconds);
      if (placed) {
        leaving.emplace(now + lifetime, name);
      } else {
        scheduler->RemoveResourceClaim("bench/" + name);
      }
      if (i >= warmup) {
        ++counted;
        if (!placed) {
          ++rejected;
          gpus_rejected += ask.gpus * ask.percent / 100.0;
        }
      }
    }
    std::printf(
        "churn %-9s load %.2f: %d of %d arrivals rejected (%.2f %%, "
        "%.1f GPUs asked); %.0f decisions/s\n",
        NameOf(strategy), load, rejected, counted, 100.0 * rejected / counted,
        gpus_rejected, arrivals / seconds);
  }
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  BackendRegistry registry;
  RegisterBuiltinBackends(registry).IgnoreError();
  const Cluster cluster =
      MakeCluster(absl::GetFlag(FLAGS_nodes), Config{}, registry);
  std::mt19937_64 rng(absl::GetFlag(FLAGS_seed));
  std::uniform_int_distribution<int> share(5, 50);
  std::vector<int> shares(static_cast<size_t>(absl::GetFlag(FLAGS_pods)));
  for (int& percent : shares) percent = share(rng);
  std::printf("%d nodes x %d GPUs (DRA devices), shares 5..50 %% of a GPU\n",
              absl::GetFlag(FLAGS_nodes), kGpusPerNode);
  Fill(cluster, shares);
  Churn(cluster, absl::GetFlag(FLAGS_arrivals), absl::GetFlag(FLAGS_warmup),
        absl::GetFlag(FLAGS_load), absl::GetFlag(FLAGS_seed));
  return 0;
}
