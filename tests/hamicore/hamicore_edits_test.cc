// Tests of the hami-core backend's ContainerEdits: the env vars and mounts
// the node agent injects so that libvgpu.so enforces the share
// (docs/reference/formats.md, "Container edits").
#include <map>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "deviceshare/backend/container_edits.h"
#include "deviceshare/config/device_config.h"
#include "deviceshare/hamicore/hamicore_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Key;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

std::unique_ptr<SharingBackend> MakeBackend(const DeviceConfig& config) {
  auto backend = hamicore::NewHamiCoreBackend(config);
  EXPECT_TRUE(backend.ok()) << backend.status();
  return backend.ok() ? *std::move(backend) : nullptr;
}

ContainerAllocation TwoGpuContainer() {
  ContainerAllocation container;
  container.container_index = 1;
  container.name = "main";
  container.devices = {
      DeviceGrant{"GPU-aaaa", 0, hamicore::kMode, 3000, 40},
      DeviceGrant{"GPU-bbbb", 3, hamicore::kMode, 5120, 40},
  };
  return container;
}

EditOptions Options(const std::string& pod_uid = "pod-uid-1",
                    const std::string& container = "main") {
  EditOptions options;
  options.hook_path = "/usr/local/vgpu";
  options.pod_uid = pod_uid;
  options.container_name = container;
  return options;
}

std::map<std::string, std::string> EnvMap(const ContainerEdits& edits) {
  std::map<std::string, std::string> env;
  for (const auto& [name, value] : edits.env) {
    EXPECT_TRUE(env.emplace(name, value).second) << "duplicate env " << name;
  }
  return env;
}

const std::regex& UuidV5Regex() {
  static const std::regex* regex = new std::regex(
      "[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  return *regex;
}

TEST(HamiCoreEditsTest, TwoGpuContainerGetsLimitsPerVisibleIndex) {
  auto backend = MakeBackend(DeviceConfig{});
  ASSERT_NE(backend, nullptr);
  ContainerEdits edits = backend->Edits(TwoGpuContainer(), Options());
  std::map<std::string, std::string> env = EnvMap(edits);
  EXPECT_EQ(env["NVIDIA_VISIBLE_DEVICES"], "GPU-aaaa,GPU-bbbb");
  // Indexed by position in the container's device list, not Gpu::index.
  EXPECT_EQ(env["CUDA_DEVICE_MEMORY_LIMIT_0"], "3000m");
  EXPECT_EQ(env["CUDA_DEVICE_MEMORY_LIMIT_1"], "5120m");
  EXPECT_EQ(env.count("CUDA_DEVICE_MEMORY_LIMIT_3"), 0u);
  EXPECT_EQ(env.count("CUDA_DEVICE_MEMORY_LIMIT_2"), 0u);
  EXPECT_EQ(env["CUDA_DEVICE_SM_LIMIT"], "40");
  EXPECT_THAT(edits.device_ids, ElementsAre("GPU-aaaa", "GPU-bbbb"));
  // Defaults: no oversubscription, no core policy, no log level.
  EXPECT_EQ(env.count("CUDA_OVERSUBSCRIBE"), 0u);
  EXPECT_EQ(env.count("GPU_CORE_UTILIZATION_POLICY"), 0u);
  EXPECT_EQ(env.count("LIBCUDA_LOG_LEVEL"), 0u);
  EXPECT_THAT(
      env, UnorderedElementsAre(
               Key("NVIDIA_VISIBLE_DEVICES"), Key("CUDA_DEVICE_MEMORY_LIMIT_0"),
               Key("CUDA_DEVICE_MEMORY_LIMIT_1"), Key("CUDA_DEVICE_SM_LIMIT"),
               Key("CUDA_DEVICE_MEMORY_SHARED_CACHE")));
}

TEST(HamiCoreEditsTest, SharedCacheIsAStableVersion5UuidPerContainer) {
  auto backend = MakeBackend(DeviceConfig{});
  ASSERT_NE(backend, nullptr);
  auto cache = [&](const std::string& uid, const std::string& container) {
    return EnvMap(backend->Edits(
        TwoGpuContainer(),
        Options(uid, container)))["CUDA_DEVICE_MEMORY_SHARED_CACHE"];
  };
  const std::string a = cache("uid-train", "main");
  std::smatch match;
  const std::regex path("/tmp/vgpu/(.*)\\.cache");
  ASSERT_TRUE(std::regex_match(a, match, path)) << a;
  const std::string uuid = match[1];
  EXPECT_TRUE(std::regex_match(uuid, UuidV5Regex())) << uuid;
  // RFC 4122 v5 of "uid-train/main" under the OID namespace
  // 6ba7b812-9dad-11d1-80b4-00c04fd430c8, as Python's uuid.uuid5 gives it.
  EXPECT_EQ(uuid, "701dd5af-6f8e-5c94-9f9a-2b6da9cdee10");
  EXPECT_EQ(hamicore::CacheFileUuid("uid-train", "sidecar"),
            "3521f161-aa38-5f36-9d44-65e92280690b");

  // Same pod and container: the same file (a retried Allocate).
  EXPECT_EQ(cache("uid-train", "main"), a);
  // Another container or another pod: another file.
  EXPECT_NE(cache("uid-train", "sidecar"), a);
  EXPECT_NE(cache("uid-other", "main"), a);
  EXPECT_NE(cache("uid-train", "main2"), a);
  for (const std::string& other :
       {cache("uid-train", "sidecar"), cache("uid-other", "main")}) {
    ASSERT_TRUE(std::regex_match(other, match, path)) << other;
    EXPECT_TRUE(std::regex_match(std::string(match[1]), UuidV5Regex()));
  }
}

TEST(HamiCoreEditsTest, OversubscribeOnlyWhenMemoryScalingAboveOne) {
  DeviceConfig config;
  config.device_memory_scaling_milli = 1000;
  auto backend = MakeBackend(config);
  ASSERT_NE(backend, nullptr);
  EXPECT_EQ(EnvMap(backend->Edits(TwoGpuContainer(), Options()))
                .count("CUDA_OVERSUBSCRIBE"),
            0u);
  config.device_memory_scaling_milli = 999;
  backend = MakeBackend(config);
  EXPECT_EQ(EnvMap(backend->Edits(TwoGpuContainer(), Options()))
                .count("CUDA_OVERSUBSCRIBE"),
            0u);
  config.device_memory_scaling_milli = 1001;
  backend = MakeBackend(config);
  EXPECT_EQ(EnvMap(backend->Edits(TwoGpuContainer(),
                                  Options()))["CUDA_OVERSUBSCRIBE"],
            "true");
  config.device_memory_scaling_milli = 2000;
  backend = MakeBackend(config);
  EXPECT_EQ(EnvMap(backend->Edits(TwoGpuContainer(),
                                  Options()))["CUDA_OVERSUBSCRIBE"],
            "true");
}

TEST(HamiCoreEditsTest, CoreUtilizationPolicyFollowsTheConfig) {
  auto policy = [](const DeviceConfig& config) {
    auto backend = MakeBackend(config);
    std::map<std::string, std::string> env =
        EnvMap(backend->Edits(TwoGpuContainer(), Options()));
    auto it = env.find("GPU_CORE_UTILIZATION_POLICY");
    return it == env.end() ? std::string("<unset>") : it->second;
  };
  DeviceConfig config;
  EXPECT_EQ(policy(config), "<unset>");
  config.gpu_core_policy = GpuCorePolicy::kForce;
  EXPECT_EQ(policy(config), "force");
  config.gpu_core_policy = GpuCorePolicy::kDisable;
  EXPECT_EQ(policy(config), "disable");
  // disableCoreLimit wins over any policy.
  config.gpu_core_policy = GpuCorePolicy::kForce;
  config.disable_core_limit = true;
  EXPECT_EQ(policy(config), "disable");
  config.gpu_core_policy = GpuCorePolicy::kDefault;
  EXPECT_EQ(policy(config), "disable");
}

TEST(HamiCoreEditsTest, LibCudaLogLevelOnlyWhenSet) {
  DeviceConfig config;
  auto backend = MakeBackend(config);
  EXPECT_EQ(EnvMap(backend->Edits(TwoGpuContainer(), Options()))
                .count("LIBCUDA_LOG_LEVEL"),
            0u);
  config.lib_cuda_log_level = 0;
  backend = MakeBackend(config);
  EXPECT_EQ(
      EnvMap(backend->Edits(TwoGpuContainer(), Options()))["LIBCUDA_LOG_LEVEL"],
      "0");
  config.lib_cuda_log_level = 4;
  backend = MakeBackend(config);
  EXPECT_EQ(
      EnvMap(backend->Edits(TwoGpuContainer(), Options()))["LIBCUDA_LOG_LEVEL"],
      "4");
}

TEST(HamiCoreEditsTest, MountsTheInterposerUnderTheHookPath) {
  auto backend = MakeBackend(DeviceConfig{});
  ASSERT_NE(backend, nullptr);
  EditOptions options = Options("uid-7", "trainer");
  options.hook_path = "/opt/hami/vgpu";
  ContainerEdits edits = backend->Edits(TwoGpuContainer(), options);
  EXPECT_THAT(
      edits.mounts,
      ElementsAre(
          Mount{"/opt/hami/vgpu/libvgpu.so", "/usr/local/vgpu/libvgpu.so",
                /*read_only=*/true},
          Mount{"/opt/hami/vgpu/ld.so.preload", "/etc/ld.so.preload",
                /*read_only=*/true},
          Mount{"/opt/hami/vgpu/containers/uid-7_trainer", "/tmp/vgpu",
                /*read_only=*/false},
          Mount{"/tmp/vgpulock", "/tmp/vgpulock", /*read_only=*/false}));
  // The cache file lives in the per-container directory mounted at /tmp/vgpu.
  std::map<std::string, std::string> env = EnvMap(edits);
  EXPECT_EQ(
      env["CUDA_DEVICE_MEMORY_SHARED_CACHE"],
      "/tmp/vgpu/" + hamicore::CacheFileUuid("uid-7", "trainer") + ".cache");
}

TEST(HamiCoreEditsTest, DefaultHookPathIsUsrLocalVgpu) {
  auto backend = MakeBackend(DeviceConfig{});
  ASSERT_NE(backend, nullptr);
  EditOptions options;
  options.pod_uid = "u";
  options.container_name = "c";
  ContainerEdits edits = backend->Edits(TwoGpuContainer(), options);
  ASSERT_EQ(edits.mounts.size(), 4u);
  EXPECT_EQ(edits.mounts[0].host_path, "/usr/local/vgpu/libvgpu.so");
  EXPECT_EQ(edits.mounts[1].host_path, "/usr/local/vgpu/ld.so.preload");
  EXPECT_EQ(edits.mounts[2].host_path, "/usr/local/vgpu/containers/u_c");
}

TEST(HamiCoreEditsTest, SingleGpuContainer) {
  auto backend = MakeBackend(DeviceConfig{});
  ASSERT_NE(backend, nullptr);
  ContainerAllocation container;
  container.name = "c";
  container.devices = {DeviceGrant{"GPU-cccc", 5, hamicore::kMode, 40960, 0}};
  std::map<std::string, std::string> env =
      EnvMap(backend->Edits(container, Options()));
  EXPECT_EQ(env["NVIDIA_VISIBLE_DEVICES"], "GPU-cccc");
  EXPECT_EQ(env["CUDA_DEVICE_MEMORY_LIMIT_0"], "40960m");
  EXPECT_EQ(env.count("CUDA_DEVICE_MEMORY_LIMIT_1"), 0u);
  EXPECT_EQ(env["CUDA_DEVICE_SM_LIMIT"], "0");
}

TEST(HamiCoreEditsTest, GpulessContainerIsHiddenOnlyWithOverwriteEnv) {
  ContainerAllocation none;
  none.name = "sidecar";
  auto plain = MakeBackend(DeviceConfig{});
  ASSERT_NE(plain, nullptr);
  ContainerEdits edits = plain->Edits(none, Options());
  EXPECT_THAT(edits.env, IsEmpty());
  EXPECT_THAT(edits.mounts, IsEmpty());
  EXPECT_THAT(edits.device_ids, IsEmpty());

  DeviceConfig config;
  config.overwrite_env = true;
  auto overwrite = MakeBackend(config);
  ASSERT_NE(overwrite, nullptr);
  edits = overwrite->Edits(none, Options());
  EXPECT_THAT(edits.env, ElementsAre(std::pair<std::string, std::string>(
                             "NVIDIA_VISIBLE_DEVICES", "none")));
  EXPECT_THAT(edits.mounts, IsEmpty());
  EXPECT_THAT(edits.device_ids, IsEmpty());

  // overwrite_env does not change a container that has GPUs.
  EXPECT_EQ(EnvMap(overwrite->Edits(TwoGpuContainer(),
                                    Options()))["NVIDIA_VISIBLE_DEVICES"],
            "GPU-aaaa,GPU-bbbb");
}

TEST(HamiCoreEditsTest, EditsArePure) {
  DeviceConfig config;
  config.device_memory_scaling_milli = 1500;
  config.lib_cuda_log_level = 3;
  auto backend = MakeBackend(config);
  ASSERT_NE(backend, nullptr);
  ContainerEdits first = backend->Edits(TwoGpuContainer(), Options());
  ContainerEdits second = backend->Edits(TwoGpuContainer(), Options());
  EXPECT_TRUE(first == second);
  EXPECT_THAT(first.env, Contains(Key("CUDA_OVERSUBSCRIBE")));
  EXPECT_THAT(first.env, Not(Contains(Key("CUDA_TASK_PRIORITY"))));
}

}  // namespace
}  // namespace deviceshare
