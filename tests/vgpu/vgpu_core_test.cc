// In-process tests of libvgpu.so's pure parts: the environment contract,
// the allocation map and the shared region, including deaths inside its
// critical sections (forked children that SIGKILL themselves there).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>

#include "allocation_map.h"
#include "env_config.h"
#include "gtest/gtest.h"
#include "shared_region.h"
#include "testing/temp_folder.h"

namespace deviceshare::vgpu {
namespace {

constexpr uint64_t kMiB = 1ULL << 20;
constexpr char kUuid[] = "GPU-11111111-2222-3333-4444-555555555555";

std::map<std::string, std::string>* g_env = nullptr;
const char* FakeEnv(const char* name) {
  auto it = g_env->find(name);
  return it == g_env->end() ? nullptr : it->second.c_str();
}

VgpuConfig ConfigOf(std::map<std::string, std::string> env) {
  g_env = &env;
  VgpuConfig config = ReadConfig(FakeEnv);
  g_env = nullptr;
  return config;
}

TEST(VgpuConfigTest, ParsesSizesLikeHamiCore) {
  EXPECT_EQ(ParseByteSize("4g"), 4ULL << 30);
  EXPECT_EQ(ParseByteSize("1024m"), 1024 * kMiB);
  EXPECT_EQ(ParseByteSize("512K"), 512ULL << 10);
  EXPECT_EQ(ParseByteSize("1048576"), kMiB);
  EXPECT_EQ(ParseByteSize("0x100000"), kMiB);
  EXPECT_EQ(ParseByteSize("0"), 0u);
  EXPECT_EQ(ParseByteSize(""), std::nullopt);
  EXPECT_EQ(ParseByteSize("m"), std::nullopt);
  EXPECT_EQ(ParseByteSize("-1g"), std::nullopt);
  EXPECT_EQ(ParseByteSize("12 GB"), std::nullopt);
  EXPECT_EQ(ParseByteSize("99999999999999999999"), std::nullopt);
  EXPECT_EQ(ParseByteSize("99999999999999g"), std::nullopt);  // overflows
}

TEST(VgpuConfigTest, PerDeviceVariablesOverrideTheGlobalOnes) {
  VgpuConfig config =
      ConfigOf({{"CUDA_DEVICE_MEMORY_LIMIT", "2g"},
                {"CUDA_DEVICE_MEMORY_LIMIT_1", "3000m"},
                {"CUDA_DEVICE_SM_LIMIT", "30"},
                {"CUDA_DEVICE_SM_LIMIT_2", "100"},
                {"GPU_CORE_UTILIZATION_POLICY", "FORCE"},
                {"LIBCUDA_LOG_LEVEL", "4"},
                {"CUDA_DEVICE_MEMORY_SHARED_CACHE", "/x.cache"}});
  EXPECT_EQ(config.memory_limit_bytes[0], 2ULL << 30);
  EXPECT_EQ(config.memory_limit_bytes[1], 3000 * kMiB);
  EXPECT_EQ(config.memory_limit_bytes[15], 2ULL << 30);
  EXPECT_EQ(config.sm_limit_percent[0], 30);
  EXPECT_EQ(config.sm_limit_percent[2], 0);  // 100 % is no limit
  EXPECT_EQ(config.core_policy, CorePolicy::kForce);
  EXPECT_EQ(config.log_level, 4);
  EXPECT_EQ(config.region_path, "/x.cache");
  EXPECT_TRUE(config.AnyMemoryLimit());
  EXPECT_TRUE(config.AnySmLimit());
  EXPECT_TRUE(config.errors.empty());
}

TEST(VgpuConfigTest, BadValuesAreIgnoredAndNamed) {
  VgpuConfig config = ConfigOf({{"CUDA_DEVICE_MEMORY_LIMIT_0", "lots"},
                                {"CUDA_DEVICE_SM_LIMIT", "half"},
                                {"LIBCUDA_LOG_LEVEL", "9"}});
  EXPECT_EQ(config.memory_limit_bytes[0], 0u);
  EXPECT_FALSE(config.AnyMemoryLimit());
  ASSERT_EQ(config.errors.size(), 3u);
  std::string all;
  for (const std::string& error : config.errors) all += error + "\n";
  EXPECT_NE(all.find("CUDA_DEVICE_MEMORY_LIMIT_0=\"lots\""), std::string::npos);
  EXPECT_NE(all.find("CUDA_DEVICE_SM_LIMIT=\"half\""), std::string::npos);
  EXPECT_NE(all.find("LIBCUDA_LOG_LEVEL=\"9\""), std::string::npos);
}

TEST(VgpuConfigTest, PolicyDisableAndPassThroughSwitches) {
  VgpuConfig config = ConfigOf({{"CUDA_DEVICE_SM_LIMIT", "20"},
                                {"GPU_CORE_UTILIZATION_POLICY", "disable"},
                                {"CUDA_DISABLE_CONTROL", "true"}});
  EXPECT_FALSE(config.AnySmLimit());
  EXPECT_TRUE(config.disable_control);
  EXPECT_EQ(config.region_path, "/tmp/cudevshr.cache");
}

TEST(VgpuConfigTest, ContainerDevicesComeFromNvidiaVisibleDevicesUuids) {
  VgpuConfig config = ConfigOf({{"NVIDIA_VISIBLE_DEVICES", "GPU-aaa, GPU-bbb"},
                                {"CUDA_VISIBLE_DEVICES", "1,GPU-bbb"}});
  EXPECT_EQ(config.container_uuids,
            (std::vector<std::string>{"GPU-aaa", "GPU-bbb"}));
  EXPECT_EQ(config.cuda_visible, (std::vector<std::string>{"1", "GPU-bbb"}));
  EXPECT_TRUE(
      ConfigOf({{"NVIDIA_VISIBLE_DEVICES", "all"}}).container_uuids.empty());
}

TEST(AllocationMapTest, TenThousandLiveEntriesAndTombstonesStayExact) {
  AllocationMap map;
  for (uint64_t i = 1; i <= 10000; ++i) {
    ASSERT_TRUE(
        map.Insert(i << 21, Allocation{i, 0, AllocationKind::kLinear, 0}));
  }
  EXPECT_EQ(map.size(), 10000u);
  // Churn far past the table's capacity in inserts and removals.
  for (uint64_t round = 0; round < 5; ++round) {
    for (uint64_t i = 1; i <= 10000; i += 2) {
      Allocation taken;
      ASSERT_TRUE(map.Take(i << 21, &taken));
      EXPECT_EQ(taken.bytes, i);
      ASSERT_TRUE(map.Insert(i << 21, taken));
    }
  }
  Allocation found;
  EXPECT_TRUE(map.Find(9999ULL << 21, &found));
  EXPECT_EQ(found.bytes, 9999u);
  EXPECT_FALSE(map.Find(10001ULL << 21, &found));
  EXPECT_FALSE(map.Take(10001ULL << 21, &found));
  EXPECT_FALSE(map.Insert(0, found));  // 0 is never a live pointer
  uint64_t sum = 0;
  map.ForEach([&](uint64_t, const Allocation& a) { sum += a.bytes; });
  EXPECT_EQ(sum, 10000ULL * 10001 / 2);
  map.Clear();
  EXPECT_EQ(map.size(), 0u);
}

class SharedRegionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = folder_.path();
    ASSERT_FALSE(dir_.empty());
    path_ = dir_ + "/r.cache";
  }

  SharedRegion* Open(Failpoint failpoint = Failpoint::kNone) {
    std::string error;
    SharedRegion* region = SharedRegion::Open(path_, failpoint, &error);
    EXPECT_NE(region, nullptr) << error;
    return region;
  }

  // Runs `body` in a child with a region opened at `failpoint`; returns the
  // signal that ended it (0 for a normal exit).
  template <typename Body>
  int InChild(Failpoint failpoint, Body body) {
    pid_t pid = fork();
    if (pid == 0) {
      std::string error;
      SharedRegion* region = SharedRegion::Open(path_, failpoint, &error);
      if (region == nullptr) _exit(3);
      body(*region);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  }

  ::deviceshare::testing::TempFolder folder_{"vgpu-region-"};
  std::string dir_;
  std::string path_;
};

TEST_F(SharedRegionTest, ReservesUpToTheLimitAndNoFurther) {
  SharedRegion* region = Open();
  bool mismatch = false;
  int device = region->DeviceIndex(kUuid, 1024 * kMiB, 0, &mismatch);
  ASSERT_EQ(device, 0);
  EXPECT_TRUE(region->Reserve(device, 1000 * kMiB));
  EXPECT_FALSE(region->Reserve(device, 25 * kMiB));
  EXPECT_TRUE(region->Reserve(device, 24 * kMiB));
  EXPECT_FALSE(region->Reserve(device, 1));
  EXPECT_EQ(region->Charged(device), 1024 * kMiB);
  region->Release(device, 24 * kMiB);
  EXPECT_EQ(region->Charged(device), 1000 * kMiB);
  EXPECT_FALSE(region->Reserve(device, ~0ULL));  // no wrap-around
  region->DetachProcess();
  EXPECT_EQ(region->Charged(device), 0u);
}

TEST_F(SharedRegionTest, GpusAreCountedByUuidAcrossProcesses) {
  SharedRegion* region = Open();
  bool mismatch = false;
  ASSERT_EQ(region->DeviceIndex("GPU-b", 100 * kMiB, 0, &mismatch), 0);
  ASSERT_EQ(region->DeviceIndex("GPU-a", 200 * kMiB, 0, &mismatch), 1);
  ASSERT_TRUE(region->Reserve(1, 150 * kMiB));
  // Another process that numbers the GPUs the other way round charges the
  // same counter.
  EXPECT_EQ(InChild(Failpoint::kNone,
                    [](SharedRegion& child) {
                      bool ignored = false;
                      int a =
                          child.DeviceIndex("GPU-a", 200 * kMiB, 0, &ignored);
                      if (a != 1 || child.Reserve(a, 51 * kMiB)) _exit(4);
                      if (!child.Reserve(a, 50 * kMiB)) _exit(5);
                      child.DetachProcess();
                    }),
            0);
  EXPECT_EQ(region->Charged(1), 150 * kMiB);
}

TEST_F(SharedRegionTest, StaleLimitsAreReplacedOnlyWhenNobodyIsAttached) {
  {
    SharedRegion* first = Open();
    bool mismatch = false;
    first->DeviceIndex(kUuid, 100 * kMiB, 0, &mismatch);
    ASSERT_TRUE(first->Reserve(0, kMiB));
    SharedRegion* second = Open();
    // A live process holds the old limit: it stays, and the caller hears.
    EXPECT_EQ(second->DeviceIndex(kUuid, 500 * kMiB, 0, &mismatch), 0);
    EXPECT_TRUE(mismatch);
    EXPECT_EQ(second->Limit(0), 100 * kMiB);
    first->DetachProcess();
    // Nobody attached any more: the new limit wins.
    EXPECT_EQ(second->DeviceIndex(kUuid, 500 * kMiB, 0, &mismatch), 0);
    EXPECT_FALSE(mismatch);
    EXPECT_EQ(second->Limit(0), 500 * kMiB);
  }
}

TEST_F(SharedRegionTest, ADeadProcessesChargeIsReclaimed) {
  SharedRegion* region = Open();
  bool mismatch = false;
  region->DeviceIndex(kUuid, 1024 * kMiB, 0, &mismatch);
  // The child charges 1000 MiB and exits without detaching (as a SIGKILL
  // would leave it).
  EXPECT_EQ(InChild(Failpoint::kNone,
                    [](SharedRegion& child) {
                      bool ignored = false;
                      child.DeviceIndex(kUuid, 1024 * kMiB, 0, &ignored);
                      if (!child.Reserve(0, 1000 * kMiB)) _exit(4);
                    }),
            0);
  EXPECT_EQ(region->Charged(0), 1000 * kMiB);
  // A reservation that would fail reclaims the dead first.
  EXPECT_TRUE(region->Reserve(0, 1024 * kMiB));
  EXPECT_EQ(region->Charged(0), 1024 * kMiB);
}

class CriticalSectionTest : public SharedRegionTest,
                            public ::testing::WithParamInterface<Failpoint> {};

TEST_P(CriticalSectionTest, DeathThereLeavesAUsableExactLedger) {
  uint64_t held_by_us = 100 * kMiB;
  if (GetParam() == Failpoint::kRegionInit) {
    // Only a process that builds the header can die building it.
    held_by_us = 0;
  } else {
    SharedRegion* setup = Open();
    bool mismatch = false;
    setup->DeviceIndex(kUuid, 1024 * kMiB, 0, &mismatch);
    ASSERT_TRUE(setup->Reserve(0, held_by_us));
    if (GetParam() == Failpoint::kReclaim) {
      // Something dead to reclaim: a child that charged and vanished.
      ASSERT_EQ(InChild(Failpoint::kNone,
                        [](SharedRegion& child) {
                          bool ignored = false;
                          child.DeviceIndex(kUuid, 1024 * kMiB, 0, &ignored);
                          child.Reserve(0, 300 * kMiB);
                        }),
                0);
    }
  }
  int signal = InChild(GetParam(), [](SharedRegion& child) {
    bool ignored = false;
    child.DeviceIndex(kUuid, 1024 * kMiB, 0, &ignored);
    child.Reserve(0, 200 * kMiB);
    child.Release(0, 200 * kMiB);
    child.Reserve(0, 2048 * kMiB);  // fails: reclaims the dead
  });
  EXPECT_EQ(signal, SIGKILL);

  // The next process: opens, and the ledger is exact and usable at once.
  SharedRegion* next = Open();
  bool mismatch = false;
  ASSERT_EQ(next->DeviceIndex(kUuid, 1024 * kMiB, 0, &mismatch), 0);
  EXPECT_TRUE(next->Reserve(0, 1024 * kMiB - held_by_us));
  EXPECT_FALSE(next->Reserve(0, kMiB));
  EXPECT_EQ(next->Charged(0), 1024 * kMiB);
}

INSTANTIATE_TEST_SUITE_P(EveryCriticalSection, CriticalSectionTest,
                         ::testing::Values(Failpoint::kRegionInit,
                                           Failpoint::kSlotClaim,
                                           Failpoint::kReserve,
                                           Failpoint::kRelease,
                                           Failpoint::kReclaim));

TEST_F(SharedRegionTest, ATornOrForeignFileIsRebuilt) {
  // HAMi-core's layout (another size) and garbage of the right size.
  {
    std::FILE* file = std::fopen(path_.c_str(), "wb");
    std::fputs("19920718 not ours", file);
    std::fclose(file);
  }
  SharedRegion* region = Open();
  bool mismatch = false;
  EXPECT_EQ(region->DeviceIndex(kUuid, kMiB, 0, &mismatch), 0);
  std::string error;
  EXPECT_NE(SharedRegion::MapForReading(path_, &error), nullptr) << error;
  EXPECT_EQ(SharedRegion::MapForReading(dir_ + "/none", &error), nullptr);
  EXPECT_NE(error.find("/none"), std::string::npos);
}

TEST_F(SharedRegionTest, ContainerGpuTimeNeverGoesBackwards) {
  SharedRegion* region = Open();
  bool mismatch = false;
  region->DeviceIndex(kUuid, 0, 50, &mismatch);
  ASSERT_TRUE(region->AttachProcess());
  region->AddGpuTime(0, 1000);
  EXPECT_EQ(InChild(Failpoint::kNone,
                    [](SharedRegion& child) {
                      child.AttachProcess();
                      child.AddGpuTime(0, 500);
                      child.DetachProcess();
                    }),
            0);
  EXPECT_EQ(region->ContainerGpuTime(0), 1500u);
}

}  // namespace
}  // namespace deviceshare::vgpu
