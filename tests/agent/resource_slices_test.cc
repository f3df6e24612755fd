// The node's DRA ResourceSlices (agent/resource_slices.h) against the API's
// limits and the MIG catalog.
#include "deviceshare/agent/resource_slices.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/agent/node_registrar.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/config/config_parser.h"
#include "deviceshare/dra/slice_json.h"
#include "deviceshare/dra/slice_limits.h"
#include "deviceshare/hamicore/hamicore_backend.h"
#include "deviceshare/mig/mig_catalog.h"
#include "deviceshare/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/fake_nvml_env.h"
#include "testing/resource_slice_rules.h"
#include "testing/status_matchers.h"
#include "testing/whole_file.h"

namespace deviceshare::agent {
namespace {

using ::deviceshare::testing::ReadWholeFile;

using ::deviceshare::testing::IsOk;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

DiscoveredGpu H100(int index, bool mig) {
  DiscoveredGpu gpu;
  gpu.uuid = absl::StrCat("GPU-0000000", index, "-aaaa-4000-8000-000000000000");
  gpu.index = index;
  gpu.model = "NVIDIA H100 80GB HBM3";
  gpu.pci_bus_id = absl::StrCat("00000000:1", index, ":00.0");
  gpu.pci_device_id = 0x2330;
  gpu.memory_mib = 81559;
  gpu.cc_major = 9;
  gpu.sm_count = 132;
  gpu.numa_node = index / 4;
  gpu.pcie_root = "pci0000:10";
  gpu.driver_version = "535.104.05";
  gpu.mig_capable = true;
  gpu.mig_enabled = mig;
  return gpu;
}

absl::StatusOr<NodeSlices> Build(const std::vector<DiscoveredGpu>& gpus,
                                 const std::string& driver,
                                 int64_t generation = 1) {
  BackendRegistry registry;
  DS_RETURN_IF_ERROR(RegisterBuiltinBackends(registry));
  DS_ASSIGN_OR_RETURN(
      Config config,
      ParseConfigYaml("scheduler: {modes: [hami-core, mig, mps]}\n",
                      BuiltinConfigExtensions()));
  DS_ASSIGN_OR_RETURN(BackendSet backends,
                      BackendSet::Create(registry, config));
  DS_ASSIGN_OR_RETURN(std::vector<Gpu> registered,
                      RegisteredGpus(gpus, config.device, hamicore::kMode));
  return BuildResourceSlices(gpus, registered, backends,
                             {driver, "node-a", generation});
}

std::vector<DiscoveredGpu> EightH100(bool mig) {
  std::vector<DiscoveredGpu> gpus;
  for (int i = 0; i < 8; ++i) gpus.push_back(H100(i, mig));
  return gpus;
}

// The pool's counter sets by name, from whichever slice holds them.
std::map<std::string, const dra::CounterSet*> PoolSets(
    const NodeSlices& built) {
  std::map<std::string, const dra::CounterSet*> sets;
  for (const dra::ResourceSlice& slice : built.slices) {
    for (const dra::CounterSet& set : slice.shared_counters) {
      EXPECT_TRUE(sets.emplace(set.name, &set).second) << set.name;
    }
  }
  return sets;
}

// Every slice passes our limits and the tests' independent API server
// rules, is of one pool of `count` slices, and the pool's references
// resolve.
void ExpectOnePool(const NodeSlices& built, size_t count) {
  ASSERT_EQ(built.slices.size(), count);
  for (size_t k = 0; k < built.slices.size(); ++k) {
    const dra::ResourceSlice& slice = built.slices[k];
    EXPECT_EQ(slice.name, absl::StrCat("node-a-", slice.driver, "-", k));
    EXPECT_THAT(dra::CheckSliceLimits(slice), IsOk()) << slice.name;
    EXPECT_THAT(testing::ValidateResourceSlice(dra::ResourceSliceToJson(slice)),
                IsEmpty())
        << slice.name;
    EXPECT_EQ(slice.pool.name, "node-a");
    EXPECT_EQ(slice.pool.resource_slice_count, static_cast<int64_t>(count));
  }
  EXPECT_THAT(dra::CheckPoolCounters(built.slices), IsOk());
}

// Which slice holds each GPU's devices ("gpu-3" -> {2}).
std::map<std::string, std::set<size_t>> SlicesOfGpus(const NodeSlices& built) {
  std::map<std::string, std::set<size_t>> where;
  for (size_t k = 0; k < built.slices.size(); ++k) {
    for (const dra::Device& device : built.slices[k].devices) {
      where[device.name.substr(0, device.name.find("-mig-"))].insert(k);
    }
  }
  return where;
}

TEST(ResourceSlicesTest, EightMigH100sFollowTheCatalogAndTheLimits) {
  absl::StatusOr<NodeSlices> built = Build(EightH100(true), kDefaultDraDriver);
  ASSERT_THAT(built.status(), IsOk());
  EXPECT_THAT(built->withdrawn, IsEmpty());
  const mig::MigModel* model =
      mig::MigCatalog::Builtin().FindModel("H100-80GB");
  ASSERT_NE(model, nullptr);
  // Expected devices of one GPU: every legal placement of every profile.
  std::map<std::string, std::pair<const mig::MigProfile*, int>> expected;
  for (const mig::MigProfile& profile : model->profiles) {
    for (int start = 0; start < model->memory_slices; ++start) {
      if (profile.IsLegalStart(start)) {
        std::string label;
        for (char c : profile.name) {
          if (std::isalnum(static_cast<unsigned char>(c))) label += c;
          if (c == '+' || c == '-') label += '-';
        }
        expected[absl::StrCat("-mig-", label, "-", start)] = {&profile, start};
      }
    }
  }
  ASSERT_EQ(expected.size(), 25u);  // H100 80GB: 7+7+4+3+2+1+1
  // The 8 counter sets in one slice of their own (at most 8 to a slice),
  // then 200 devices that consume counters, at most 64 to a slice: two
  // GPUs' 50 in each of 4 slices.
  ExpectOnePool(*built, 5);
  EXPECT_EQ(built->slices[0].shared_counters.size(), 8u);
  EXPECT_THAT(built->slices[0].devices, IsEmpty());
  for (size_t k = 1; k < 5; ++k) {
    EXPECT_THAT(built->slices[k].shared_counters, IsEmpty());
    EXPECT_EQ(built->slices[k].devices.size(), 50u);
  }
  const std::map<std::string, const dra::CounterSet*> sets = PoolSets(*built);
  ASSERT_EQ(sets.size(), 8u);
  for (const auto& [name, set] : sets) {
    EXPECT_EQ(set->counters.at("compute-slices").value, 7);
    EXPECT_EQ(set->counters.size(), 9u);
    for (int s = 0; s < 8; ++s) {
      EXPECT_EQ(set->counters.at(absl::StrCat("memory-slice-", s)).value, 1);
    }
  }
  std::set<std::string> seen;
  for (const dra::ResourceSlice& slice : built->slices) {
    for (const dra::Device& device : slice.devices) {
      seen.insert(device.name);
      const size_t dash = device.name.find("-mig-");
      ASSERT_NE(dash, std::string::npos) << device.name;
      auto it = expected.find(device.name.substr(dash));
      ASSERT_NE(it, expected.end()) << device.name;
      const mig::MigProfile& profile = *it->second.first;
      const int start = it->second.second;
      EXPECT_EQ(device.capacity.at("memory").value,
                profile.memory_mib * (int64_t{1} << 20));
      ASSERT_EQ(device.consumes_counters.size(), 1u);
      const dra::CounterConsumption& use = device.consumes_counters[0];
      // The GPU's own set, published in another slice of the pool.
      EXPECT_EQ(use.counter_set,
                absl::StrCat(device.name.substr(0, dash), "-counters"));
      ASSERT_TRUE(sets.contains(use.counter_set)) << device.name;
      EXPECT_EQ(use.counters.at("compute-slices").value,
                profile.compute_slices);
      for (int s = 0; s < 8; ++s) {
        const bool covered = s >= start && s < start + profile.memory_slices;
        EXPECT_EQ(use.counters.contains(absl::StrCat("memory-slice-", s)),
                  covered)
            << device.name << " slice " << s;
      }
      EXPECT_EQ(device.attributes.at("profile").text, profile.name);
      EXPECT_EQ(device.attributes.at("mode").text, "mig");
    }
  }
  EXPECT_EQ(seen.size(), 8 * expected.size());
  // Each GPU's devices stay together.
  const auto where = SlicesOfGpus(*built);
  ASSERT_EQ(where.size(), 8u);
  for (const auto& [gpu, slices] : where) {
    EXPECT_EQ(slices.size(), 1u) << gpu;
  }
}

// The node kube-apiserver 1.37 refused the 1.34 layout of (HTTP 422: both
// sharedCounters and devices, 79 devices over 64): 4 MIG GPUs and 4
// hami-core ones.
TEST(ResourceSlicesTest, FourMigAndFourSharedH100sMakeThreeSlices) {
  std::vector<DiscoveredGpu> gpus;
  for (int i = 0; i < 8; ++i) gpus.push_back(H100(i, i < 4));
  absl::StatusOr<NodeSlices> built = Build(gpus, kDefaultDraDriver);
  ASSERT_THAT(built.status(), IsOk());
  EXPECT_THAT(built->withdrawn, IsEmpty());
  ExpectOnePool(*built, 3);
  EXPECT_EQ(built->slices[0].shared_counters.size(), 4u);
  EXPECT_THAT(built->slices[0].devices, IsEmpty());
  EXPECT_EQ(built->slices[1].devices.size(), 50u);  // GPUs 0 and 1
  EXPECT_EQ(built->slices[2].devices.size(), 54u);  // GPUs 2 and 3, 4..7
  const auto where = SlicesOfGpus(*built);
  const std::map<std::string, std::set<size_t>> expected = {
      {"gpu-0", {1}}, {"gpu-1", {1}}, {"gpu-2", {2}}, {"gpu-3", {2}},
      {"gpu-4", {2}}, {"gpu-5", {2}}, {"gpu-6", {2}}, {"gpu-7", {2}}};
  EXPECT_EQ(where, expected);
  // The shared GPUs are one device each, consuming no counters.
  for (const dra::Device& device : built->slices[2].devices) {
    EXPECT_EQ(device.consumes_counters.empty(),
              device.name.find("-mig-") == std::string::npos)
        << device.name;
  }
  // What the agent writes has no devices list beside the counter sets.
  const nlohmann::json json = dra::ResourceSliceToJson(built->slices[0]);
  EXPECT_FALSE(json["spec"].contains("devices"));
  EXPECT_EQ(json["spec"]["sharedCounters"].size(), 4u);
}

// Shared GPUs alone take up to 128 devices to a slice; once a MIG GPU's
// devices join, the cap is 64 and a new slice starts.
TEST(ResourceSlicesTest, SharedGpusFirstThenMigStartsANewSlice) {
  std::vector<DiscoveredGpu> gpus;
  for (int i = 0; i < 8; ++i) gpus.push_back(H100(i, i >= 6));
  absl::StatusOr<NodeSlices> built = Build(gpus, kDefaultDraDriver);
  ASSERT_THAT(built.status(), IsOk());
  ExpectOnePool(*built, 2);
  EXPECT_EQ(built->slices[0].shared_counters.size(), 2u);
  EXPECT_EQ(built->slices[1].devices.size(), 56u);  // 6 shared + 2 x 25
}

TEST(ResourceSlicesTest, HamiCoreGpuIsOneSharedDeviceWithPolicies) {
  absl::StatusOr<NodeSlices> built = Build({H100(0, false)}, kDefaultDraDriver);
  ASSERT_THAT(built.status(), IsOk());
  ASSERT_EQ(built->slices.size(), 1u);
  ASSERT_EQ(built->slices[0].devices.size(), 1u);
  const dra::Device& device = built->slices[0].devices[0];
  EXPECT_EQ(device.name, "gpu-0");
  EXPECT_TRUE(device.allow_multiple_allocations);
  EXPECT_EQ(device.attributes.at("mode").text, "hami-core");
  EXPECT_EQ(device.attributes.at("driverVersion").text, "535.104.5");
  EXPECT_EQ(device.attributes.at("cudaComputeCapability").text, "9.0.0");
  EXPECT_EQ(device.attributes.at("architecture").text, "Hopper");
  EXPECT_EQ(device.attributes.at("resource.kubernetes.io/pcieRoot").text,
            "pci0000:10");
  const dra::DeviceCapacity& memory = device.capacity.at("memory");
  EXPECT_EQ(memory.value, int64_t{81559} << 20);
  ASSERT_TRUE(memory.policy.has_value());
  EXPECT_EQ(memory.policy->step, int64_t{1} << 20);
  EXPECT_EQ(device.capacity.at("cores").value, 100);
  EXPECT_EQ(device.capacity.at("shares").value, 10);  // deviceSplitCount
  const nlohmann::json json = dra::ResourceSliceToJson(built->slices[0]);
  EXPECT_EQ(json["spec"]["devices"][0]["capacity"]["memory"]["value"],
            "81559Mi");
  EXPECT_EQ(json["spec"]["pool"]["generation"], 1);
}

TEST(ResourceSlicesTest, HamiDriverNameGivesHamisShape) {
  absl::StatusOr<NodeSlices> built = Build({H100(3, false)}, kHamiDraDriver);
  ASSERT_THAT(built.status(), IsOk());
  const dra::Device& device = built->slices[0].devices[0];
  EXPECT_EQ(device.name, "hami-gpu-3");
  EXPECT_EQ(device.attributes.at("type").text, "hami-gpu");
  EXPECT_EQ(device.attributes.at("minor").int_value, 3);
  EXPECT_EQ(device.attributes.at("pcieBusID").text, "00000000:13:00.0");
  std::vector<std::string> capacities;
  for (const auto& [name, cap] : device.capacity) capacities.push_back(name);
  EXPECT_THAT(capacities, ElementsAre("cores", "memory"));
  EXPECT_EQ(device.capacity.at("cores").policy->min, 0);
  EXPECT_EQ(device.capacity.at("cores").policy->default_value, 100);
  EXPECT_EQ(built->slices[0].driver, kHamiDraDriver);
}

TEST(ResourceSlicesTest, UnhealthyGpuIsWithdrawnAndComesBack) {
  std::vector<DiscoveredGpu> gpus = EightH100(false);
  gpus[2].healthy = false;
  gpus[2].health_reason = "xid 79";
  absl::StatusOr<NodeSlices> sick = Build(gpus, kDefaultDraDriver, 4);
  ASSERT_THAT(sick.status(), IsOk());
  ASSERT_EQ(sick->withdrawn.size(), 1u);
  EXPECT_THAT(sick->withdrawn[0], ::testing::HasSubstr("xid 79"));
  EXPECT_EQ(sick->slices[0].devices.size(), 7u);
  gpus[2].healthy = true;
  absl::StatusOr<NodeSlices> well = Build(gpus, kDefaultDraDriver, 5);
  ASSERT_THAT(well.status(), IsOk());
  EXPECT_EQ(well->slices[0].devices.size(), 8u);
  EXPECT_EQ(well->slices[0].pool.generation, 5);
}

TEST(ResourceSlicesTest, NodeWithoutGpusPublishesAnEmptyPool) {
  absl::StatusOr<NodeSlices> built = Build({}, kDefaultDraDriver);
  ASSERT_THAT(built.status(), IsOk());
  ASSERT_EQ(built->slices.size(), 1u);
  EXPECT_THAT(built->slices[0].devices, IsEmpty());
}

TEST(ResourceSlicesTest, SemverAndArchitecture) {
  EXPECT_EQ(AsSemver("550.54.15"), "550.54.15");
  EXPECT_EQ(AsSemver("535.104.05"), "535.104.5");
  EXPECT_EQ(AsSemver("580.1"), "580.1.0");
  EXPECT_EQ(AsSemver("8.6"), "8.6.0");
  EXPECT_EQ(AsSemver("1.2.3.4"), "1.2.3");
  EXPECT_EQ(AsSemver(""), "");
  EXPECT_EQ(AsSemver("r550"), "");
  EXPECT_EQ(ArchitectureOf(8, 0), "Ampere");
  EXPECT_EQ(ArchitectureOf(8, 9), "Ada Lovelace");
  EXPECT_EQ(ArchitectureOf(7, 5), "Turing");
  EXPECT_EQ(ArchitectureOf(3, 0), "");
}

}  // namespace
}  // namespace deviceshare::agent

namespace deviceshare::agent {
namespace {

using ::testing::IsEmpty;

// `discover --output resourceslices` on fake NVML, as an operator would
// check a node without a cluster: what it prints passes the API server's
// rules as the tests' API server checks them (independently of the agent).
TEST(ResourceSlicesCommandTest, DiscoverPrintsValidSlices) {
  testing::FakeNvmlEnv env(R"(gpus:
- {uuid: GPU-d0, model: NVIDIA H100 80GB HBM3, memory_mib: 81559,
   sm_count: 132, pci_device_id: 0x2330, cc: [9, 0], mig_capable: true,
   mig_mode: true}
- {uuid: GPU-d1, model: NVIDIA H100 80GB HBM3, memory_mib: 81559,
   pci_device_id: 0x2330, cc: [9, 0]}
)");
  const std::string config = env.dir() + "/config.yaml";
  std::ofstream(config) << "scheduler:\n  modes: [hami-core, mig]\n";
  const std::string out = env.dir() + "/slices.json";
  const std::string bin = DEVICESHARE_NODE_AGENT_BIN;
  ASSERT_EQ(
      std::system((bin + " discover --output resourceslices " +
                   "--node-name node-x --config " + config +
                   " --nvml-library " + DEVICESHARE_FAKE_NVML_LIB + " > " + out)
                      .c_str()),
      0);
  const nlohmann::json list = nlohmann::json::parse(ReadWholeFile(out));
  EXPECT_EQ(list["kind"], "List");
  // The MIG GPU's counter set, then the devices, in slices of their own.
  ASSERT_EQ(list["items"].size(), 2u);
  std::set<std::string> names;
  std::set<std::string> sets;
  for (const nlohmann::json& slice : list["items"]) {
    EXPECT_THAT(testing::ValidateResourceSlice(slice), IsEmpty());
    EXPECT_EQ(slice["spec"]["nodeName"], "node-x");
    EXPECT_EQ(slice["spec"]["pool"]["resourceSliceCount"], 2);
    for (const nlohmann::json& set :
         slice["spec"].value("sharedCounters", nlohmann::json::array())) {
      sets.insert(set["name"].get<std::string>());
    }
    for (const nlohmann::json& device :
         slice["spec"].value("devices", nlohmann::json::array())) {
      names.insert(device["name"].get<std::string>());
    }
  }
  EXPECT_THAT(sets, ElementsAre("gpu-0-counters"));
  EXPECT_TRUE(names.contains("gpu-0-mig-7g80gb-0"));
  EXPECT_TRUE(names.contains("gpu-1"));
  EXPECT_EQ(names.size(), 26u);  // 25 placements and one shared GPU
}

}  // namespace
}  // namespace deviceshare::agent
