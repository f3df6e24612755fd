// dra_driver_load: the node agent's DRA driver as kubelet and the API
// server drive it.
//
//  1. Slice publishing (in process): the SlicePublisher writing a node's
//     pool to the tests' in-memory API server -- 8 hami-core GPUs (one
//     slice) and 8 MIG-mode H100s (3 slices, 200 partitions) -- first as a
//     create, then as updates (one GPU's health flipped each round).
//  2. Prepare (real processes): `deviceshare-node-agent serve --dra` on
//     fake NVML, called by the test kubelet over its unix socket;
//     NodePrepareResources with 1 and with 8 claims per call (each claim a
//     share of one GPU read from the API server, a CDI spec and a journal
//     entry written), then NodeUnprepareResources.
//
// Figures and the command: bench/README.md.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/str_cat.h"
#include "deviceshare/agent/node_registrar.h"
#include "deviceshare/agent/resource_slices.h"
#include "deviceshare/agent/slice_publisher.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/config/config_parser.h"
#include "deviceshare/hamicore/hamicore_backend.h"
#include "testing/agent_rig.h"
#include "testing/test_dra_kubelet.h"

ABSL_FLAG(int, rounds, 200, "prepare calls (and publish updates) timed");

namespace {

namespace agent = ::deviceshare::agent;
using ::deviceshare::testing::AgentRig;
using Clock = std::chrono::steady_clock;

double Percentile(std::vector<double> values, double q) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return values[static_cast<size_t>(q * (values.size() - 1))];
}

double MillisSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start)
      .count();
}

agent::DiscoveredGpu H100(int index, bool mig) {
  agent::DiscoveredGpu gpu;
  gpu.uuid = absl::StrCat("GPU-", index, "0000000-bbbb-4000-8000-000000000000");
  gpu.index = index;
  gpu.model = "NVIDIA H100 80GB HBM3";
  gpu.pci_device_id = 0x2330;
  gpu.memory_mib = 81559;
  gpu.cc_major = 9;
  gpu.mig_capable = true;
  gpu.mig_enabled = mig;
  return gpu;
}

void PublishPhase(bool mig, int rounds) {
  deviceshare::testing::FakeApiServer server;
  auto api = deviceshare::kube::ApiClient::Create(server.kube_config());
  deviceshare::BackendRegistry registry;
  (void)deviceshare::RegisterBuiltinBackends(registry);
  auto config =
      deviceshare::ParseConfigYaml("scheduler: {modes: [hami-core, mig]}\n",
                                   deviceshare::BuiltinConfigExtensions());
  auto backends = deviceshare::BackendSet::Create(registry, *config);
  if (!api.ok() || !config.ok() || !backends.ok()) {
    std::printf("setup failed\n");
    return;
  }
  std::vector<agent::DiscoveredGpu> gpus;
  for (int i = 0; i < 8; ++i) gpus.push_back(H100(i, mig));
  agent::SlicePublisher publisher(api->get(), agent::kDefaultDraDriver,
                                  "node-a");
  std::vector<double> create_ms, update_ms;
  size_t slices = 0, devices = 0;
  for (int round = 0; round <= rounds; ++round) {
    gpus[0].healthy = round % 2 == 0;
    auto registered = agent::RegisteredGpus(gpus, config->device,
                                            deviceshare::hamicore::kMode);
    auto built = agent::BuildResourceSlices(
        gpus, *registered, *backends, {agent::kDefaultDraDriver, "node-a"});
    const Clock::time_point start = Clock::now();
    auto published = publisher.Publish(built->slices);
    const double ms = MillisSince(start);
    if (!published.ok()) {
      std::printf("publish failed: %s\n",
                  published.status().ToString().c_str());
      return;
    }
    (round == 0 ? create_ms : update_ms).push_back(ms);
    if (round == 0) {
      slices = built->slices.size();
      for (const auto& slice : built->slices) devices += slice.devices.size();
    }
  }
  std::printf(
      "publish, 8 %s GPUs (%zu slices, %zu devices): create %.2f ms; "
      "update p50 %.2f ms, p99 %.2f ms (%d rounds)\n",
      mig ? "MIG H100" : "hami-core", slices, devices, create_ms[0],
      Percentile(update_ms, 0.5), Percentile(update_ms, 0.99), rounds);
}

nlohmann::json Claim(int n, int gpu) {
  nlohmann::json result = {
      {"request", "gpu"},
      {"driver", agent::kDefaultDraDriver},
      {"pool", "gpu-node"},
      {"device", absl::StrCat("gpu-", gpu)},
      {"shareID", absl::StrCat("share-", n)},
      {"consumedCapacity", {{"memory", "4Gi"}, {"cores", "10"}}}};
  return {{"apiVersion", "resource.k8s.io/v1"},
          {"kind", "ResourceClaim"},
          {"metadata", {{"name", absl::StrCat("c-", n)}, {"namespace", "ml"}}},
          {"status",
           {{"allocation",
             {{"devices", {{"results", nlohmann::json::array({result})}}}}}}}};
}

void PreparePhase(AgentRig& rig, deviceshare::testing::TestDraKubelet& kubelet,
                  int per_call, int rounds) {
  std::vector<double> prepare_ms, unprepare_ms;
  int errors = 0;
  for (int round = 0; round < rounds; ++round) {
    std::vector<agent::ClaimRef> refs;
    for (int k = 0; k < per_call; ++k) {
      const int n = round * per_call + k;
      nlohmann::json stored =
          rig.api().UpsertResourceClaim(Claim(n + per_call * 100000, n % 8));
      refs.push_back(
          {"ml", stored["metadata"]["uid"], stored["metadata"]["name"]});
    }
    Clock::time_point start = Clock::now();
    auto prepared = kubelet.Prepare("v1", refs);
    prepare_ms.push_back(MillisSince(start));
    if (!prepared.ok()) {
      ++errors;
      continue;
    }
    for (const auto& [uid, result] : *prepared) errors += !result.error.empty();
    start = Clock::now();
    auto unprepared = kubelet.Unprepare("v1", refs);
    unprepare_ms.push_back(MillisSince(start));
    if (!unprepared.ok()) ++errors;
  }
  std::printf(
      "prepare, %d claim(s) per call: p50 %.2f ms, p99 %.2f ms; unprepare "
      "p50 %.2f ms, p99 %.2f ms; %d calls, %d errors\n",
      per_call, Percentile(prepare_ms, 0.5), Percentile(prepare_ms, 0.99),
      Percentile(unprepare_ms, 0.5), Percentile(unprepare_ms, 0.99), rounds,
      errors);
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int rounds = absl::GetFlag(FLAGS_rounds);
  PublishPhase(/*mig=*/false, rounds);
  PublishPhase(/*mig=*/true, rounds);
  auto rig = AgentRig::Create({.gpus = 8, .dra = true});
  if (!rig.ok()) {
    std::printf("rig: %s\n", rig.status().ToString().c_str());
    return 1;
  }
  if (absl::Status started = (*rig)->StartAgent(); !started.ok()) {
    std::printf("agent did not start: %s\n%s\n", started.ToString().c_str(),
                (*rig)->Log().c_str());
    return 1;
  }
  deviceshare::testing::TestDraKubelet kubelet((*rig)->DraDir("dra-registry"));
  if (!kubelet.WaitForPlugin(agent::kDefaultDraDriver).ok()) {
    std::printf("plugin did not register\n%s\n", (*rig)->Log().c_str());
    return 1;
  }
  PreparePhase(**rig, kubelet, 1, rounds);
  PreparePhase(**rig, kubelet, 8, rounds);
  return 0;
}
