// The NVML GpuSource and MigControl through the real dlopen path, against
// the fake libnvidia-ml.so.1 of tests/fake_nvml.
#include "deviceshare/agent/nvml_source.h"

#include <dlfcn.h>

#include <atomic>
#include <fstream>
#include <memory>
#include <sstream>
#include <thread>

#include "deviceshare/agent/mig_realizer.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/fake_nvml_env.h"
#include "testing/fakes.h"
#include "testing/status_matchers.h"

namespace deviceshare::agent {
namespace {

using ::deviceshare::testing::FakeClock;
using ::deviceshare::testing::FakeNvmlEnv;
using ::deviceshare::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kLibrary[] = DEVICESHARE_FAKE_NVML_LIB;

// An H100 with NVLink to GPU 1, an A100 on the other socket without SM
// count or compute capability, and a third GPU whose sysfs has no NUMA.
std::string ThreeGpus(const std::string& gpu1_extra = "",
                      const std::string& gpu0_extra = "") {
  return R"(gpus:
- uuid: GPU-aaaa
  model: NVIDIA H100 80GB HBM3
  memory_mib: 81559
  sm_count: 132
  pci_device_id: "0x2330"
  pci_bus_id: "00000000:3B:00.0"
  cc: [9, 0]
  mig_capable: true
  nvlinks: {1: 18}
  numa: 0
)" + gpu0_extra +
         R"(
- uuid: GPU-bbbb
  model: NVIDIA A100-SXM4-80GB
  memory_mib: 81920
  pci_device_id: 0x20B2
  pci_bus_id: "00000000:86:00.0"
  nvlinks: {0: 18}
  numa: 1
)" + gpu1_extra +
         R"(
- uuid: GPU-cccc
  model: NVIDIA L4
  memory_mib: 23034
  sm_count: 58
  pci_device_id: 0x27B8
  pci_bus_id: "00000000:AF:00.0"
  cc: [8, 9]
)";
}

class NvmlSourceTest : public ::testing::Test {
 protected:
  NvmlSourceTest() : env_(ThreeGpus()) {
    env_.SetNuma("0000:3b:00.0", "0");
    env_.SetNuma("0000:86:00.0", "1");
    env_.SetNuma("0000:af:00.0", "-1");
  }

  std::unique_ptr<GpuSource> Open() {
    auto source = OpenNvmlSource(env_.Options(kLibrary, &clock_));
    EXPECT_OK(source);
    return source.ok() ? *std::move(source) : nullptr;
  }

  FakeClock clock_;
  FakeNvmlEnv env_;
};

TEST(NvmlSourceOpenTest, MissingLibraryGivesAClearError) {
  NvmlSourceOptions options;
  options.library_path = "/nonexistent/libnvidia-ml.so.1";
  auto source = OpenNvmlSource(options);
  EXPECT_THAT(
      source,
      StatusIs(absl::StatusCode::kFailedPrecondition,
               AllOf(HasSubstr("cannot load NVML "
                               "\"/nonexistent/libnvidia-ml.so.1\": "),
                     HasSubstr("is the NVIDIA driver installed? (use "
                               "--inventory FILE on machines without one)"))));
  EXPECT_THAT(OpenNvmlMigControl(options),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("cannot load NVML")));
}

TEST(NvmlSourceOpenTest, LibraryWithoutNvmlSymbolsIsRejected) {
  NvmlSourceOptions options;
  options.library_path = "libm.so.6";
  EXPECT_THAT(OpenNvmlSource(options),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("lacks nvmlInit_v2")));
}

TEST(NvmlSourceOpenTest, DriverNotLoadedFailsInit) {
  FakeNvmlEnv env("gpus: []\n");
  unsetenv("FAKE_NVML_INVENTORY");  // the fake's "no driver"
  NvmlSourceOptions options;
  options.library_path = kLibrary;
  EXPECT_THAT(OpenNvmlSource(options),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("nvmlInit_v2 failed"),
                             HasSubstr("Driver Not Loaded (NVML 9)"))));
}

TEST(NvmlSourceSmCountTest, WholeGpuSmCountComesFromTheLargestMigProfile) {
  // What a real H100 answers: no multiprocessorCount for the whole GPU.
  FakeNvmlEnv env(R"(gpus:
- uuid: GPU-aaaa
  model: NVIDIA H100 80GB HBM3
  memory_mib: 81559
  pci_device_id: "0x2330"
  pci_bus_id: "00000000:3B:00.0"
  mig_capable: true
)");
  FakeClock clock;
  auto source = OpenNvmlSource(env.Options(kLibrary, &clock));
  ASSERT_OK(source);
  auto gpus = (*source)->Discover();
  ASSERT_OK(gpus);
  ASSERT_EQ(gpus->size(), 1u);
  EXPECT_EQ((*gpus)[0].sm_count, 132);  // 7g.80gb
}

TEST_F(NvmlSourceTest, DiscoversEveryField) {
  auto source = Open();
  ASSERT_NE(source, nullptr);
  EXPECT_THAT(source->Describe(), HasSubstr("libnvidia-ml.so.1"));
  EXPECT_THAT(source->Describe(), HasSubstr("(driver 580.00-fake)"));
  auto gpus = source->Discover();
  ASSERT_OK(gpus);
  ASSERT_EQ(gpus->size(), 3u);

  const DiscoveredGpu& h100 = (*gpus)[0];
  EXPECT_EQ(h100.uuid, "GPU-aaaa");
  EXPECT_EQ(h100.index, 0);
  EXPECT_EQ(h100.model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(h100.pci_bus_id, "00000000:3B:00.0");
  EXPECT_EQ(h100.pci_device_id, 0x2330u);
  EXPECT_EQ(h100.memory_mib, 81559);
  EXPECT_EQ(h100.cc_major, 9);
  EXPECT_EQ(h100.cc_minor, 0);
  EXPECT_EQ(h100.sm_count, 132);
  EXPECT_EQ(h100.numa_node, 0);
  EXPECT_TRUE(h100.mig_capable);
  EXPECT_FALSE(h100.mig_enabled);
  EXPECT_TRUE(h100.mig_instances.empty());
  EXPECT_TRUE(h100.healthy);
  EXPECT_EQ(h100.health_reason, "");
  // Peer 1: 18 NVLinks, other socket. Peer 2: PCIe only, same socket by
  // NVML's topology although its sysfs has no NUMA node (-1 reads as 0);
  // the PCIe level is NVML's common ancestor (the fake says NODE/SYSTEM).
  EXPECT_THAT(h100.links, ElementsAre(GpuLink{1, 18, false, PcieLevel::kSystem},
                                      GpuLink{2, 0, true, PcieLevel::kNuma}));
  // The H100-80GB table, in NVML's profile-index order, "MIG " stripped.
  ASSERT_EQ(h100.mig_profiles.size(), 7u);
  EXPECT_EQ(h100.mig_profiles[0],
            (MigProfileInfo{
                "1g.10gb", 19, 1, 7, 16, 9984, {0, 1, 2, 3, 4, 5, 6}, 1}));
  EXPECT_EQ(h100.mig_profiles[2],
            (MigProfileInfo{"3g.40gb", 9, 3, 2, 60, 40448, {0, 4}, 4}));
  EXPECT_EQ(h100.mig_profiles[4],
            (MigProfileInfo{"7g.80gb", 0, 7, 1, 132, 81152, {0}, 8}));
  EXPECT_EQ(h100.mig_profiles[5].name, "1g.10gb+me");
  EXPECT_EQ(h100.mig_profiles[6],
            (MigProfileInfo{"1g.20gb", 15, 1, 4, 26, 20096, {0, 2, 4, 6}, 2}));

  const DiscoveredGpu& a100 = (*gpus)[1];
  EXPECT_EQ(a100.uuid, "GPU-bbbb");
  EXPECT_EQ(a100.index, 1);
  EXPECT_EQ(a100.pci_device_id, 0x20B2u);
  EXPECT_EQ(a100.memory_mib, 81920);
  EXPECT_EQ(a100.sm_count, 0);  // NVML would not say
  EXPECT_EQ(a100.cc_major, 0);
  EXPECT_EQ(a100.numa_node, 1);
  EXPECT_FALSE(a100.mig_capable);
  EXPECT_TRUE(a100.mig_profiles.empty());
  EXPECT_THAT(a100.links,
              ElementsAre(GpuLink{0, 18, false}, GpuLink{2, 0, false}));

  const DiscoveredGpu& l4 = (*gpus)[2];
  EXPECT_EQ(l4.numa_node, 0);
  EXPECT_EQ(l4.cc_major, 8);
  EXPECT_EQ(l4.cc_minor, 9);
  EXPECT_THAT(l4.links, ElementsAre(GpuLink{0, 0, true, PcieLevel::kNuma},
                                    GpuLink{1, 0, false}));
}

TEST_F(NvmlSourceTest, LostGpuIsUnhealthyUntilItAnswersAgain) {
  auto source = Open();
  ASSERT_NE(source, nullptr);
  ASSERT_OK(source->Discover());
  auto health = source->CheckHealth();
  ASSERT_OK(health);
  EXPECT_THAT(*health, ElementsAre(GpuHealth{"GPU-aaaa", true, ""},
                                   GpuHealth{"GPU-bbbb", true, ""},
                                   GpuHealth{"GPU-cccc", true, ""}));

  env_.WriteInventory(ThreeGpus("  lost: true\n"));
  health = source->CheckHealth();
  ASSERT_OK(health);
  EXPECT_TRUE((*health)[0].healthy);
  EXPECT_FALSE((*health)[1].healthy);
  EXPECT_EQ((*health)[1].reason,
            "nvmlDeviceGetMemoryInfo: GPU is lost (NVML 15)");
  auto gpus = source->Discover();
  ASSERT_OK(gpus);
  EXPECT_FALSE((*gpus)[1].healthy);
  EXPECT_THAT((*gpus)[1].health_reason, HasSubstr("GPU is lost"));

  env_.WriteInventory(ThreeGpus());
  health = source->CheckHealth();
  ASSERT_OK(health);
  EXPECT_TRUE((*health)[1].healthy);
  EXPECT_EQ((*health)[1].reason, "");
}

TEST_F(NvmlSourceTest, CriticalXidHoldsUntilThirtyQuietSeconds) {
  auto source = Open();
  ASSERT_NE(source, nullptr);
  ASSERT_OK(source->Discover());  // registers for events

  env_.WriteInventory(ThreeGpus("", "  xid: [79]\n"));
  auto health = source->CheckHealth();
  ASSERT_OK(health);
  EXPECT_EQ((*health)[0], (GpuHealth{"GPU-aaaa", false, "xid 79"}));
  EXPECT_TRUE((*health)[1].healthy);

  // Delivered once; the GPU answers polls, but 30 s have not passed.
  clock_.Advance(absl::Seconds(29));
  health = source->CheckHealth();
  ASSERT_OK(health);
  EXPECT_FALSE((*health)[0].healthy);
  EXPECT_EQ((*health)[0].reason, "xid 79");

  clock_.Advance(absl::Seconds(1));
  health = source->CheckHealth();
  ASSERT_OK(health);
  EXPECT_TRUE((*health)[0].healthy);

  // A new xid restarts the wait; it is seen by Discover() too.
  env_.WriteInventory(ThreeGpus("", "  xid: [48]\n"));
  clock_.Advance(absl::Seconds(5));
  auto gpus = source->Discover();
  ASSERT_OK(gpus);
  EXPECT_FALSE((*gpus)[0].healthy);
  EXPECT_EQ((*gpus)[0].health_reason, "xid 48");
  clock_.Advance(absl::Seconds(30));
  health = source->CheckHealth();
  ASSERT_OK(health);
  EXPECT_TRUE((*health)[0].healthy);
}

TEST_F(NvmlSourceTest, ApplicationXidsDoNotCount) {
  auto source = Open();
  ASSERT_NE(source, nullptr);
  ASSERT_OK(source->Discover());
  env_.WriteInventory(ThreeGpus("  xid: [13, 31, 43, 45, 68, 109]\n"));
  auto health = source->CheckHealth();
  ASSERT_OK(health);
  EXPECT_TRUE((*health)[1].healthy) << (*health)[1].reason;
}

TEST_F(NvmlSourceTest, CheckHealthBeforeDiscoverCoversEveryGpu) {
  env_.WriteInventory(ThreeGpus("  xid: [94]\n"));
  auto source = Open();
  ASSERT_NE(source, nullptr);
  auto health = source->CheckHealth();
  ASSERT_OK(health);
  ASSERT_EQ(health->size(), 3u);
  EXPECT_EQ((*health)[1], (GpuHealth{"GPU-bbbb", false, "xid 94"}));
}

TEST_F(NvmlSourceTest, DiscoverAndCheckHealthFromTwoThreads) {
  auto source = Open();
  ASSERT_NE(source, nullptr);
  std::atomic<int> failures{0};
  std::thread discover([&] {
    for (int i = 0; i < 20; ++i) {
      auto gpus = source->Discover();
      if (!gpus.ok() || gpus->size() != 3) ++failures;
    }
  });
  for (int i = 0; i < 20; ++i) {
    auto health = source->CheckHealth();
    if (!health.ok() || health->size() != 3) ++failures;
  }
  discover.join();
  EXPECT_EQ(failures.load(), 0);
}

// An 8-slice H100 with MIG on, and the A100 with MIG off.
std::string MigGpus() {
  return R"(gpus:
- {uuid: GPU-mig, model: NVIDIA H100 80GB HBM3, memory_mib: 81559,
   pci_device_id: 0x2330, mig_capable: true, mig_mode: true}
- {uuid: GPU-off, model: NVIDIA H100 80GB HBM3, memory_mib: 81559,
   pci_device_id: 0x2330, mig_capable: true, mig_mode: false}
)";
}

TEST(NvmlMigControlTest, CreateAdoptDestroyPersistAcrossProcesses) {
  FakeNvmlEnv env(MigGpus());
  MigInstanceInfo made;
  {
    auto control = OpenNvmlMigControl(env.Options(kLibrary));
    ASSERT_OK(control);
    auto created = (*control)->CreateInstance("GPU-mig", "3g.40gb", 4);
    ASSERT_OK(created);
    made = *created;
    EXPECT_EQ(made.slot, (MigSlot{"3g.40gb", 4, 4}));
    EXPECT_EQ(made.gpu_instance_id, 2);  // NVML's id for the upper half
    EXPECT_EQ(made.compute_instance_id, 0);
    EXPECT_THAT(made.mig_uuid, StartsWith("MIG-"));
    EXPECT_EQ(made.mig_uuid.size(), 40u);

    // NVML's own checks, mapped to the interface's codes.
    EXPECT_THAT((*control)->CreateInstance("GPU-mig", "1g.10gb", 5),
                StatusIs(absl::StatusCode::kFailedPrecondition,
                         HasSubstr("memory slices are taken")));
    EXPECT_THAT((*control)->CreateInstance("GPU-mig", "3g.40gb", 2),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("legal starts: 0, 4")));
    EXPECT_THAT((*control)->CreateInstance("GPU-mig", "5g.50gb", 0),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("no MIG profile \"5g.50gb\"")));
    EXPECT_THAT((*control)->CreateInstance("GPU-off", "1g.10gb", 0),
                StatusIs(absl::StatusCode::kFailedPrecondition,
                         HasSubstr("MIG is not enabled")));
    EXPECT_THAT((*control)->CreateInstance("GPU-nope", "1g.10gb", 0),
                StatusIs(absl::StatusCode::kNotFound));
    // Per-profile caps: one +me instance per GPU.
    ASSERT_OK((*control)->CreateInstance("GPU-mig", "1g.10gb+me", 0));
    EXPECT_THAT((*control)->CreateInstance("GPU-mig", "1g.10gb+me", 1),
                StatusIs(absl::StatusCode::kFailedPrecondition));
  }

  // The state file is what a restarted agent finds.
  std::ifstream state_file(env.state_path());
  ASSERT_TRUE(state_file.good());
  nlohmann::json state = nlohmann::json::parse(state_file);
  EXPECT_EQ(state["gpus"]["GPU-mig"].size(), 2u);

  auto source = OpenNvmlSource(env.Options(kLibrary));
  ASSERT_OK(source);
  auto gpus = (*source)->Discover();
  ASSERT_OK(gpus);
  ASSERT_EQ(gpus->size(), 2u);
  EXPECT_TRUE((*gpus)[0].mig_enabled);
  ASSERT_EQ((*gpus)[0].mig_instances.size(), 2u);
  EXPECT_EQ((*gpus)[0].mig_instances[0].slot, (MigSlot{"1g.10gb+me", 0, 1}));
  EXPECT_EQ((*gpus)[0].mig_instances[0].gpu_instance_id, 7);
  EXPECT_EQ((*gpus)[0].mig_instances[1], made);
  EXPECT_TRUE((*gpus)[1].mig_instances.empty());

  auto control = OpenNvmlMigControl(env.Options(kLibrary));
  ASSERT_OK(control);
  auto listed = (*control)->ListInstances("GPU-mig");
  ASSERT_OK(listed);
  EXPECT_EQ(*listed, (*gpus)[0].mig_instances);

  ASSERT_OK((*control)->DestroyInstance("GPU-mig", made.gpu_instance_id));
  EXPECT_THAT((*control)->DestroyInstance("GPU-mig", made.gpu_instance_id),
              StatusIs(absl::StatusCode::kNotFound));
  listed = (*control)->ListInstances("GPU-mig");
  ASSERT_OK(listed);
  ASSERT_EQ(listed->size(), 1u);
  EXPECT_EQ((*listed)[0].slot.profile, "1g.10gb+me");
  // The freed half can be made again.
  auto again = (*control)->CreateInstance("GPU-mig", "3g.40gb", 4);
  ASSERT_OK(again);
  EXPECT_EQ(again->mig_uuid, made.mig_uuid);  // same GI/CI ids, same uuid
}

TEST(NvmlMigControlTest, RealizerThroughNvmlAdoptsAfterRestart) {
  FakeNvmlEnv env(MigGpus());
  const std::vector<HeldMigSlot> held = {
      {{"pod-a", 0, 0}, MigSlot{"3g.40gb", 0, 4}},
      {{"pod-b", 1, 0}, MigSlot{"1g.10gb", 6, 1}},
  };
  std::vector<RealizedMigSlot> first;
  {
    auto control = OpenNvmlMigControl(env.Options(kLibrary));
    ASSERT_OK(control);
    MigRealizer realizer(control->get());
    auto realized = realizer.Realize("GPU-mig", held);
    ASSERT_OK(realized);
    first = *realized;
  }
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].instance.slot.start, 0);
  EXPECT_EQ(first[1].instance.gpu_instance_id, 13);
  EXPECT_FALSE(first[1].instance.mig_uuid.empty());

  auto control = OpenNvmlMigControl(env.Options(kLibrary));
  ASSERT_OK(control);
  MigRealizer realizer(control->get());
  auto realized = realizer.Realize("GPU-mig", held);
  ASSERT_OK(realized);
  EXPECT_EQ(*realized, first);  // adopted, nothing new
  auto listed = (*control)->ListInstances("GPU-mig");
  ASSERT_OK(listed);
  EXPECT_EQ(listed->size(), 2u);

  // pod-b is gone: the GPU still hosts pod-a's instance, so the sweep
  // leaves pod-b's orphan; once pod-a goes too, both are removed.
  auto swept = realizer.CleanupOrphans("GPU-mig", {held[0]});
  ASSERT_OK(swept);
  EXPECT_TRUE(swept->empty());
  swept = realizer.CleanupOrphans("GPU-mig", {});
  ASSERT_OK(swept);
  EXPECT_EQ(swept->size(), 2u);
  listed = (*control)->ListInstances("GPU-mig");
  ASSERT_OK(listed);
  EXPECT_TRUE(listed->empty());
}

// The fake itself: stale or foreign handles are errors, never crashes.
TEST(FakeNvmlLibraryTest, UnknownHandlesAreInvalidArgument) {
  FakeNvmlEnv env(MigGpus());
  void* lib = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(lib, nullptr) << dlerror();
  using Init = int (*)();
  using GetUuid = int (*)(void*, char*, unsigned);
  using GetInfo = int (*)(void*, void*);
  auto init = reinterpret_cast<Init>(dlsym(lib, "nvmlInit_v2"));
  auto shutdown = reinterpret_cast<Init>(dlsym(lib, "nvmlShutdown"));
  auto get_uuid = reinterpret_cast<GetUuid>(dlsym(lib, "nvmlDeviceGetUUID"));
  auto gi_info =
      reinterpret_cast<GetInfo>(dlsym(lib, "nvmlGpuInstanceGetInfo"));
  ASSERT_NE(init, nullptr);
  ASSERT_NE(get_uuid, nullptr);
  ASSERT_NE(gi_info, nullptr);
  char uuid[96];
  EXPECT_EQ(get_uuid(nullptr, uuid, sizeof(uuid)), 1);  // UNINITIALIZED
  ASSERT_EQ(init(), 0);
  int not_ours = 0;
  EXPECT_EQ(get_uuid(&not_ours, uuid, sizeof(uuid)), 2);
  EXPECT_EQ(get_uuid(reinterpret_cast<void*>(0x11090000), uuid, 96), 2);
  char info[64];
  EXPECT_EQ(gi_info(reinterpret_cast<void*>(0x13000200), info), 2);
  // Internal symbols stay hidden.
  EXPECT_EQ(dlsym(lib, "_ZN9fake_nvml4GpusEv"), nullptr);
  EXPECT_EQ(shutdown(), 0);
  dlclose(lib);
}

}  // namespace
}  // namespace deviceshare::agent
