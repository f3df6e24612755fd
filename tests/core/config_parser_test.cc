#include "deviceshare/config/config_parser.h"

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/hamicore/hamicore_backend.h"
#include "deviceshare/mig/mig_backend.h"
#include "deviceshare/mig/mig_config.h"
#include "deviceshare/mps/mps_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

constexpr absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;

absl::StatusOr<Config> ParseWithBuiltins(const std::string& text) {
  return ParseConfigYaml(text, BuiltinConfigExtensions());
}

// The mig backend's settings of `config` (a test failure if they do not
// read).
mig::MigConfig MigOf(const Config& config) {
  absl::StatusOr<mig::MigConfig> mig = mig::ReadMigConfig(config);
  EXPECT_TRUE(mig.ok()) << mig.status();
  return mig.ok() ? *mig : mig::MigConfig{};
}

Config MustParse(const std::string& text) {
  absl::StatusOr<Config> config = ParseWithBuiltins(text);
  EXPECT_TRUE(config.ok()) << config.status() << "\n" << text;
  return config.ok() ? *config : Config{};
}

// The error of parsing `nvidia:` with one `key: value` line.
absl::Status NvidiaError(const std::string& line) {
  return ParseWithBuiltins("nvidia:\n  " + line + "\n").status();
}

TEST(ConfigParserTest, EmptyTextGivesDefaults) {
  EXPECT_EQ(MustParse(""), Config{});
  EXPECT_EQ(MustParse("# nothing configured yet\n"), Config{});
  absl::StatusOr<DeviceConfig> device = ParseDeviceConfigYaml("");
  ASSERT_OK(device);
  EXPECT_EQ(*device, DeviceConfig{});
}

TEST(ConfigParserTest, EmptySectionsAndNullValuesKeepDefaults) {
  EXPECT_EQ(MustParse("scheduler:\nnvidia:\n"), Config{});
  Config config =
      MustParse("nvidia:\n  defaultMemory: ~\n  deviceSplitCount: 4\n");
  EXPECT_EQ(config.device.default_memory_mib, 0);
  EXPECT_EQ(config.device.device_split_count, 4);
}

// No scheduler.modes: the list stays empty, which enables every registered
// backend (BackendSet::Create); an empty list is refused.
TEST(ConfigParserTest, ModesUnsetLeavesTheListEmpty) {
  EXPECT_THAT(
      MustParse("scheduler: {nodePolicy: spread}\n").scheduler.enabled_modes,
      IsEmpty());
  EXPECT_THAT(
      ParseWithBuiltins("scheduler: {modes: []}\n"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("scheduler.modes"), HasSubstr("is empty"))));
}

TEST(ConfigParserTest, WholeFileReadsEverySchedulerKey) {
  Config config = MustParse(R"(
scheduler:
  nodePolicy: spread
  gpuPolicy: Spread
  dialect: volcano
  modes: [mig, hami-core, mps]
)");
  EXPECT_EQ(config.scheduler.node_policy, "spread");
  EXPECT_EQ(config.scheduler.gpu_policy, "spread");
  EXPECT_EQ(config.scheduler.default_dialect, Dialect::kVolcano);
  EXPECT_THAT(config.scheduler.enabled_modes,
              ElementsAre(mig::kMode, hamicore::kMode, mps::kMode));
  EXPECT_EQ(config.device, DeviceConfig{});
  EXPECT_THAT(config.notices, IsEmpty());
}

TEST(ConfigParserTest, EveryNvidiaKeyIsStored) {
  Config config = MustParse(R"(
nvidia:
  resourceCountName: example.com/gpu
  resourceMemoryName: example.com/gpumem
  resourceMemoryPercentageName: example.com/gpumem-pct
  resourceCoreName: example.com/gpucores
  resourcePriorityName: example.com/prio
  deviceSplitCount: 7
  deviceMemoryScaling: 1.25
  deviceCoreScaling: 2
  defaultMemory: 2048
  defaultCores: 30
  defaultGPUNum: 2
  memoryFactor: 4
  preConfiguredDeviceMemory: 122880
  overwriteEnv: true
  disableCoreLimit: true
  gpuCorePolicy: force
  libCudaLogLevel: 3
  runtimeClassName: nvidia
  enableNumaTopology: true
  knownMigGeometries:
  - models: [A30]
    allowedGeometries:
    - - {name: 4g.24gb, memory: 24576, count: 1}
  migProfileAllowlist:
  - {models: [A30], profiles: [1g.6gb, 2g.12gb]}
)");
  DeviceConfig want;
  want.resource_count_name = "example.com/gpu";
  want.resource_memory_name = "example.com/gpumem";
  want.resource_memory_percentage_name = "example.com/gpumem-pct";
  want.resource_core_name = "example.com/gpucores";
  want.resource_priority_name = "example.com/prio";
  want.device_split_count = 7;
  want.device_memory_scaling_milli = 1250;
  want.device_core_scaling_milli = 2000;
  want.default_memory_mib = 2048;
  want.default_cores = 30;
  want.default_gpu_num = 2;
  want.memory_factor = 4;
  want.preconfigured_device_memory_mib = 122880;
  want.overwrite_env = true;
  want.disable_core_limit = true;
  want.gpu_core_policy = GpuCorePolicy::kForce;
  want.lib_cuda_log_level = 3;
  want.runtime_class_name = "nvidia";
  want.enable_numa_topology = true;
  EXPECT_EQ(config.device, want);
  // The MIG keys are the mig backend's (mig/mig_config.h).
  std::vector<mig::KnownMigGeometries> geometries = {
      {{"A30"}, {{"", {{"4g.24gb", 24576, 0, 1}}}}}};
  std::vector<mig::MigProfileAllowlist> allowlist = {
      {{"A30"}, {"1g.6gb", "2g.12gb"}}};
  EXPECT_EQ(MigOf(config).known_geometries, geometries);
  EXPECT_EQ(MigOf(config).profile_allowlist, allowlist);
}

TEST(ConfigParserTest, RuntimeClassNameAddsANotice) {
  Config config = MustParse("nvidia:\n  runtimeClassName: nvidia\n");
  EXPECT_EQ(config.device.runtime_class_name, "nvidia");
  ASSERT_EQ(config.notices.size(), 1);
  EXPECT_THAT(config.notices[0],
              AllOf(HasSubstr("nvidia.runtimeClassName"), HasSubstr("nvidia"),
                    HasSubstr("admission webhook"), HasSubstr("does not run")));
  EXPECT_THAT(MustParse("nvidia:\n  runtimeClassName: \"\"\n").notices,
              IsEmpty());
}

TEST(ConfigParserTest, ScalingIsStoredInThousandthsRoundedToNearest) {
  auto milli = [](const std::string& value) {
    return MustParse("nvidia:\n  deviceMemoryScaling: " + value +
                     "\n  deviceCoreScaling: " + value + "\n")
        .device;
  };
  EXPECT_EQ(milli("1").device_memory_scaling_milli, 1000);
  EXPECT_EQ(milli("1.5").device_memory_scaling_milli, 1500);
  EXPECT_EQ(milli("1.5").device_core_scaling_milli, 1500);
  EXPECT_EQ(milli("0.0016").device_memory_scaling_milli, 2);
  EXPECT_EQ(milli("1.0004").device_memory_scaling_milli, 1000);
  EXPECT_EQ(milli("3.1416").device_core_scaling_milli, 3142);
  EXPECT_THAT(NvidiaError("deviceMemoryScaling: 0"),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia.deviceMemoryScaling"),
                                       HasSubstr("0"), HasSubstr("> 0"))));
  EXPECT_THAT(NvidiaError("deviceMemoryScaling: -1.5"),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia.deviceMemoryScaling"),
                                       HasSubstr("-1.5"))));
  EXPECT_THAT(NvidiaError("deviceCoreScaling: 0.0001"),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia.deviceCoreScaling"),
                                       HasSubstr("resolution"))));
  EXPECT_THAT(NvidiaError("deviceCoreScaling: 1e12"),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia.deviceCoreScaling"),
                                       HasSubstr("too large"))));
  EXPECT_THAT(NvidiaError("deviceMemoryScaling: lots"),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia.deviceMemoryScaling"),
                                       HasSubstr("\"lots\" is not a number"))));
}

TEST(ConfigParserTest, IntegerKnobRanges) {
  struct Case {
    const char* line;
    const char* key;
    const char* value;
    const char* want;
  };
  for (const Case& c : {
           Case{"deviceSplitCount: 0", "nvidia.deviceSplitCount", "0", ">= 1"},
           Case{"deviceSplitCount: -1", "nvidia.deviceSplitCount", "-1",
                ">= 1"},
           Case{"deviceSplitCount: 3000000000", "nvidia.deviceSplitCount",
                "3000000000", "<= 2147483647"},
           Case{"defaultMemory: -1", "nvidia.defaultMemory", "-1", ">= 0"},
           Case{"defaultCores: 101", "nvidia.defaultCores", "101", "0..100"},
           Case{"defaultCores: -1", "nvidia.defaultCores", "-1", "0..100"},
           Case{"defaultGPUNum: 0", "nvidia.defaultGPUNum", "0", ">= 1"},
           Case{"memoryFactor: 0", "nvidia.memoryFactor", "0", ">= 1"},
           Case{"gpuMemoryFactor: 0", "nvidia.gpuMemoryFactor", "0", ">= 1"},
           Case{"preConfiguredDeviceMemory: -5",
                "nvidia.preConfiguredDeviceMemory", "-5", ">= 0"},
           Case{"libCudaLogLevel: 5", "nvidia.libCudaLogLevel", "5", "0..4"},
           Case{"libCudaLogLevel: -1", "nvidia.libCudaLogLevel", "-1", "0..4"},
           Case{"defaultMemory: 99999999999999999999", "nvidia.defaultMemory",
                "1e+20", "<= 9223372036854775807"},
       }) {
    EXPECT_THAT(
        NvidiaError(c.line),
        StatusIs(kInvalid, AllOf(HasSubstr(std::string(c.key) + ": " + c.value),
                                 HasSubstr(c.want))))
        << c.line;
  }
}

TEST(ConfigParserTest, LibCudaLogLevelAcceptsHamiCoreLevels) {
  for (int level : {0, 1, 2, 3, 4}) {
    EXPECT_EQ(MustParse("nvidia:\n  libCudaLogLevel: " + std::to_string(level))
                  .device.lib_cuda_log_level,
              level);
  }
}

TEST(ConfigParserTest, WrongTypesNameThePathAndValue) {
  EXPECT_THAT(NvidiaError("overwriteEnv: \"yes\""),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia.overwriteEnv"),
                                       HasSubstr("\"yes\" is not a boolean"))));
  EXPECT_THAT(NvidiaError("enableNumaTopology: 1"),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia.enableNumaTopology"),
                                       HasSubstr("1 is not a boolean"))));
  EXPECT_THAT(NvidiaError("disableCoreLimit: yes"),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia.disableCoreLimit"),
                                       HasSubstr("\"yes\""))));
  EXPECT_THAT(NvidiaError("deviceSplitCount: \"10\""),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia.deviceSplitCount"),
                                       HasSubstr("\"10\" is not a number"),
                                       HasSubstr("without quotes"))));
  EXPECT_THAT(
      NvidiaError("deviceSplitCount: 2.5"),
      StatusIs(kInvalid, AllOf(HasSubstr("nvidia.deviceSplitCount"),
                               HasSubstr("2.5 is not a whole number"))));
  EXPECT_THAT(NvidiaError("defaultCores: [1]"),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia.defaultCores"),
                                       HasSubstr("a list is not a number"))));
  EXPECT_THAT(NvidiaError("resourceCountName: 5"),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia.resourceCountName"),
                                       HasSubstr("5 is not a string"))));
  // HAMi accepts an empty resourceMemoryName (device_test.go:285).
  EXPECT_OK(NvidiaError("resourceMemoryName: \"\""));
  EXPECT_THAT(NvidiaError("resourceCoreName: \"\""),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia.resourceCoreName"),
                                       HasSubstr("empty"))));
  EXPECT_THAT(NvidiaError("knownMigGeometries: {models: [A30]}"),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia.knownMigGeometries"),
                                       HasSubstr("not a list"))));
  EXPECT_THAT(ParseWithBuiltins("nvidia: [deviceSplitCount]\n"),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia: a list"),
                                       HasSubstr("not a mapping"))));
  EXPECT_THAT(ParseWithBuiltins("scheduler: fast\n"),
              StatusIs(kInvalid, AllOf(HasSubstr("scheduler: \"fast\""),
                                       HasSubstr("not a mapping"))));
  EXPECT_THAT(ParseWithBuiltins("- nvidia\n"),
              StatusIs(kInvalid, HasSubstr("not a mapping")));
}

TEST(ConfigParserTest, GpuCorePolicy) {
  EXPECT_EQ(
      MustParse("nvidia: {gpuCorePolicy: default}").device.gpu_core_policy,
      GpuCorePolicy::kDefault);
  EXPECT_EQ(MustParse("nvidia: {gpuCorePolicy: force}").device.gpu_core_policy,
            GpuCorePolicy::kForce);
  EXPECT_EQ(
      MustParse("nvidia: {gpuCorePolicy: disable}").device.gpu_core_policy,
      GpuCorePolicy::kDisable);
  EXPECT_THAT(
      NvidiaError("gpuCorePolicy: always"),
      StatusIs(kInvalid,
               AllOf(HasSubstr("nvidia.gpuCorePolicy"), HasSubstr("\"always\""),
                     HasSubstr("default, force or disable"))));
}

TEST(ConfigParserTest, GpuMemoryFactorIsVolcanosNameForMemoryFactor) {
  EXPECT_EQ(MustParse("nvidia: {gpuMemoryFactor: 4}").device.memory_factor, 4);
  EXPECT_EQ(MustParse("nvidia: {memoryFactor: 3}").device.memory_factor, 3);
  EXPECT_EQ(MustParse("nvidia: {memoryFactor: 2, gpuMemoryFactor: 2}")
                .device.memory_factor,
            2);
  EXPECT_THAT(
      ParseWithBuiltins("nvidia: {memoryFactor: 2, gpuMemoryFactor: 3}"),
      StatusIs(kInvalid, AllOf(HasSubstr("nvidia.gpuMemoryFactor"),
                               HasSubstr("3 disagrees"),
                               HasSubstr("nvidia.memoryFactor: 2"))));
}

TEST(ConfigParserTest, UnknownKeysNameTheFullPath) {
  EXPECT_THAT(
      NvidiaError("deviceSplitCout: 10"),
      StatusIs(kInvalid, HasSubstr("nvidia.deviceSplitCout: unknown key")));
  EXPECT_THAT(
      ParseWithBuiltins("scheduler:\n  nodepolicy: spread\n"),
      StatusIs(kInvalid, HasSubstr("scheduler.nodepolicy: unknown key")));
  EXPECT_THAT(
      ParseWithBuiltins(R"(
nvidia:
  knownMigGeometries:
  - models: [A30]
    allowedGeometries:
    - group: g1
      geometries: [{name: 1g.6gb, memory: 6144, count: 4, slices: 1}]
)"),
      StatusIs(kInvalid,
               HasSubstr("nvidia.knownMigGeometries[0].allowedGeometries[0]."
                         "geometries[0].slices: unknown key")));
  EXPECT_THAT(
      ParseWithBuiltins(R"(
nvidia:
  knownMigGeometries:
  - models: [A30]
    allowedGeometries:
    - group: g1
      geometry: []
)"),
      StatusIs(kInvalid,
               HasSubstr("nvidia.knownMigGeometries[0].allowedGeometries[0]."
                         "geometry: unknown key")));
  EXPECT_THAT(
      ParseWithBuiltins("nvidia:\n  knownMigGeometries:\n  - model: [A30]\n"),
      StatusIs(kInvalid,
               HasSubstr("nvidia.knownMigGeometries[0].model: unknown key")));
  EXPECT_THAT(
      ParseWithBuiltins("nvidia:\n  migProfileAllowlist:\n"
                        "  - {models: [A30], profile: [1g.6gb]}\n"),
      StatusIs(kInvalid, HasSubstr("nvidia.migProfileAllowlist[0].profile: "
                                   "unknown key")));
}

TEST(ConfigParserTest, KeysAtTheWrongLevelAreErrors) {
  EXPECT_THAT(ParseWithBuiltins("deviceSplitCount: 10\n"),
              StatusIs(kInvalid, AllOf(HasSubstr("deviceSplitCount"),
                                       HasSubstr("under nvidia:"))));
  EXPECT_THAT(ParseWithBuiltins("nodePolicy: spread\n"),
              StatusIs(kInvalid, AllOf(HasSubstr("nodePolicy"),
                                       HasSubstr("under scheduler:"))));
}

TEST(ConfigParserTest, OtherVendorSectionsBecomeNotices) {
  Config config = MustParse(R"(
nvidia:
  deviceSplitCount: 5
cambricon:
  resourceCountName: cambricon.com/vmlu
hygon: {resourceCountName: hygon.com/dcunum}
metax: {}
vnpus:
- chipName: 910B3
)");
  EXPECT_EQ(config.device.device_split_count, 5);
  EXPECT_THAT(
      config.notices,
      UnorderedElementsAre(
          "section `cambricon` belongs to another vendor; deviceshare does "
          "not read it",
          "section `hygon` belongs to another vendor; deviceshare does not "
          "read it",
          "section `metax` belongs to another vendor; deviceshare does not "
          "read it",
          "section `vnpus` belongs to another vendor; deviceshare does not "
          "read it"));
}

TEST(ConfigParserTest, SchedulerValuesAreChecked) {
  // Whether a policy of that name is registered is checked when the
  // scheduler is made (SchedulerTest.ConfigPoliciesMustBeRegistered); its
  // spelling here.
  EXPECT_THAT(ParseWithBuiltins("scheduler: {nodePolicy: first fit}"),
              StatusIs(kInvalid, AllOf(HasSubstr("scheduler.nodePolicy"),
                                       HasSubstr("\"first fit\""),
                                       HasSubstr("not a policy name"))));
  EXPECT_THAT(ParseWithBuiltins("scheduler: {gpuPolicy: \"binpack,numa\"}"),
              StatusIs(kInvalid, AllOf(HasSubstr("scheduler.gpuPolicy"),
                                       HasSubstr("\"binpack,numa\""))));
  EXPECT_EQ(
      MustParse("scheduler: {gpuPolicy: Topology-Aware}").scheduler.gpu_policy,
      "topology-aware");
  EXPECT_THAT(ParseWithBuiltins("scheduler: {gpuPolicy: 1}"),
              StatusIs(kInvalid, AllOf(HasSubstr("scheduler.gpuPolicy"),
                                       HasSubstr("1 is not a string"))));
  EXPECT_THAT(ParseWithBuiltins("scheduler: {dialect: kubernetes}"),
              StatusIs(kInvalid, AllOf(HasSubstr("scheduler.dialect"),
                                       HasSubstr("\"kubernetes\""),
                                       HasSubstr("hami or volcano"))));
  EXPECT_THAT(ParseWithBuiltins("scheduler: {modes: []}"),
              StatusIs(kInvalid, AllOf(HasSubstr("scheduler.modes"),
                                       HasSubstr("empty"))));
  EXPECT_THAT(ParseWithBuiltins("scheduler: {modes: hami-core}"),
              StatusIs(kInvalid, AllOf(HasSubstr("scheduler.modes"),
                                       HasSubstr("not a list"))));
  EXPECT_THAT(ParseWithBuiltins("scheduler: {modes: [mig, mps, mig]}"),
              StatusIs(kInvalid, AllOf(HasSubstr("scheduler.modes[2]"),
                                       HasSubstr("duplicate mode \"mig\""))));
  // Whether a backend serves a well-formed mode is checked when the
  // scheduler is made (SchedulerTest.UnknownModesAreRefused).
  EXPECT_THAT(ParseWithBuiltins("scheduler: {modes: [hami-core, V-GPU]}"),
              StatusIs(kInvalid, AllOf(HasSubstr("scheduler.modes[1]"),
                                       HasSubstr("\"V-GPU\""))));
}

TEST(ConfigParserTest, BrokenYamlNamesLineAndColumn) {
  EXPECT_THAT(
      ParseWithBuiltins("nvidia:\n  deviceSplitCount: [10\n"),
      StatusIs(kInvalid, AllOf(HasSubstr("line"), HasSubstr("column"))));
  EXPECT_THAT(ParseDeviceConfigYaml("nvidia:\n  a: 1\n   b: 2\n"),
              StatusIs(kInvalid, HasSubstr("line 3")));
}

TEST(ConfigMapTest, DeviceConfigDataKey) {
  Config config = MustParse(R"(
apiVersion: v1
kind: ConfigMap
metadata: {name: hami-scheduler-device, namespace: kube-system}
data:
  device-config.yaml: |
    nvidia:
      deviceSplitCount: 4
      defaultCores: 20
    kunlun:
      resourceCountName: kunlunxin.com/xpu
)");
  EXPECT_EQ(config.device.device_split_count, 4);
  EXPECT_EQ(config.device.default_cores, 20);
  EXPECT_EQ(config.scheduler, SchedulerConfig{});
  EXPECT_THAT(config.notices,
              ElementsAre("section `kunlun` belongs to another vendor; "
                          "deviceshare does not read it"));
}

TEST(ConfigMapTest, OwnFileBesideTheDeviceConfig) {
  Config config = MustParse(R"(
kind: ConfigMap
data:
  device-config.yaml: |
    nvidia: {deviceSplitCount: 6}
  deviceshare.yaml: |
    scheduler: {nodePolicy: spread, modes: [hami-core, mig]}
  README: hello
)");
  EXPECT_EQ(config.device.device_split_count, 6);
  EXPECT_EQ(config.scheduler.node_policy, "spread");
  EXPECT_THAT(config.scheduler.enabled_modes,
              ElementsAre(hamicore::kMode, mig::kMode));
  EXPECT_THAT(config.notices,
              ElementsAre("ConfigMap data key `README` is not read by "
                          "deviceshare"));
  // ParseDeviceConfigYaml reads the same object for its device part.
  absl::StatusOr<DeviceConfig> device = ParseDeviceConfigYaml(R"(
kind: ConfigMap
data:
  device-config.yaml: "nvidia: {deviceSplitCount: 6}"
)");
  ASSERT_OK(device);
  EXPECT_EQ(device->device_split_count, 6);
}

TEST(ConfigMapTest, Errors) {
  EXPECT_THAT(ParseWithBuiltins("kind: ConfigMap\ndata:\n  other: x\n"),
              StatusIs(kInvalid, AllOf(HasSubstr("device-config.yaml"),
                                       HasSubstr("deviceshare.yaml"))));
  EXPECT_THAT(ParseWithBuiltins("kind: ConfigMap\n"),
              StatusIs(kInvalid, HasSubstr("data: missing")));
  EXPECT_THAT(
      ParseWithBuiltins("kind: Pod\nmetadata: {name: x}\n"),
      StatusIs(kInvalid, HasSubstr("kind: \"Pod\" is not a ConfigMap")));
  EXPECT_THAT(
      ParseWithBuiltins("kind: ConfigMap\ndata:\n  device-config.yaml: 5\n"),
      StatusIs(kInvalid, AllOf(HasSubstr("data[\"device-config.yaml\"]"),
                               HasSubstr("not a string"))));
  EXPECT_THAT(
      ParseWithBuiltins("kind: ConfigMap\ndata:\n  device-config.yaml: |\n"
                        "    nvidia:\n      deviceSplitCout: 10\n"),
      StatusIs(kInvalid,
               HasSubstr("device-config.yaml: nvidia.deviceSplitCout: "
                         "unknown key")));
  EXPECT_THAT(
      ParseWithBuiltins("kind: ConfigMap\ndata:\n  device-config.yaml: |\n"
                        "    nvidia:\n      a: [1\n"),
      StatusIs(kInvalid, AllOf(HasSubstr("device-config.yaml: YAML line"),
                               HasSubstr("column"))));
  EXPECT_THAT(
      ParseWithBuiltins("kind: ConfigMap\ndata:\n  device-config.yaml: |\n"
                        "    scheduler: {nodePolicy: spread}\n"),
      StatusIs(kInvalid, AllOf(HasSubstr("device-config.yaml: scheduler"),
                               HasSubstr("deviceshare.yaml"))));
  EXPECT_THAT(
      ParseWithBuiltins("kind: ConfigMap\ndata:\n"
                        "  device-config.yaml: \"nvidia: {defaultCores: 1}\"\n"
                        "  deviceshare.yaml: \"nvidia: {defaultCores: 2}\"\n"),
      StatusIs(kInvalid, HasSubstr("both")));
}

TEST(ConfigParserTest, DeviceConfigBodyRejectsTheSchedulerSection) {
  absl::StatusOr<DeviceConfig> device =
      ParseDeviceConfigYaml("nvidia: {deviceSplitCount: 3}\ncambricon: {}\n");
  ASSERT_OK(device);
  EXPECT_EQ(device->device_split_count, 3);
  EXPECT_THAT(ParseDeviceConfigYaml("scheduler: {nodePolicy: spread}\n"),
              StatusIs(kInvalid, HasSubstr("scheduler")));
}

// --- The example files shipped for humans ----------------------------------

std::string ReadExample(const std::string& name) {
  std::ifstream in(std::string(DEVICESHARE_EXAMPLES_DIR) + "/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(ConfigParserTest, TypicalWorkloadAndNodesToScore) {
  Config config = MustParse(R"(
scheduler:
  nodePolicy: fragaware
  nodesToScore: 64
  typicalWorkload:
    - {cpuMilli: 8000, gpuCount: 1, gpuMilli: 1000, share: 0.3}
    - {gpuCount: 1, gpuMilli: 500, models: [A100], share: 0.3}
    - {cpuMilli: 2000, share: 0.2}
)");
  EXPECT_EQ(config.scheduler.nodes_to_score, 64);
  ASSERT_EQ(config.scheduler.typical_workload.size(), 3u);
  // Shares summing to 0.8 are weights: 3/8, 3/8, 2/8.
  WorkloadShape first = config.scheduler.typical_workload[0];
  EXPECT_NEAR(first.share, 0.375, 1e-9);
  first.share = 0;
  EXPECT_EQ(first, (WorkloadShape{
                       .cpu_milli = 8000, .gpu_milli = 1000, .gpu_count = 1}));
  EXPECT_EQ(config.scheduler.typical_workload[1].models,
            std::vector<std::string>{"A100"});
  EXPECT_NEAR(config.scheduler.typical_workload[2].share, 0.25, 1e-9);
  EXPECT_EQ(config.scheduler.typical_workload[2].gpu_count, 0);
}

TEST(ConfigParserTest, BadTypicalWorkloadNamesTheField) {
  const std::pair<const char*, const char*> cases[] = {
      {"typicalWorkload: {share: 1}", "scheduler.typicalWorkload"},
      {"typicalWorkload: [{gpuCount: 1, gpuMilli: 500}]",
       "scheduler.typicalWorkload[0].share: is missing"},
      {"typicalWorkload: [{gpuCount: 1, gpuMilli: 500, share: 0}]",
       "scheduler.typicalWorkload[0].share: 0 is not a number in (0, 1]"},
      {"typicalWorkload: [{gpuCount: 1, gpuMilli: 1500, share: 1}]",
       "scheduler.typicalWorkload[0].gpuMilli"},
      {"typicalWorkload: [{gpuCount: 1, share: 1}]",
       "gpuCount 1 with gpuMilli 0"},
      {"typicalWorkload: [{gpus: 1, share: 1}]",
       "scheduler.typicalWorkload[0].gpus: unknown key"},
      {"typicalWorkload: [{share: 0.7}, {share: 0.6}]",
       "shares sum to 1.3000, more than 1"},
      {"nodesToScore: -1", "scheduler.nodesToScore"},
  };
  for (const auto& [body, want] : cases) {
    SCOPED_TRACE(body);
    EXPECT_THAT(ParseConfigYaml(absl::StrCat("scheduler:\n  ", body, "\n")),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(want)));
  }
}

TEST(ConfigExamplesTest, HamiDeviceConfig) {
  std::string text = ReadExample("device-config-hami.yaml");
  Config config = MustParse(text);
  const DeviceConfig& d = config.device;
  EXPECT_EQ(d.resource_count_name, "nvidia.com/gpu");
  EXPECT_EQ(d.device_split_count, 10);
  EXPECT_EQ(d.device_memory_scaling_milli, 1500);
  EXPECT_EQ(d.lib_cuda_log_level, 1);
  EXPECT_TRUE(d.enable_numa_topology);
  const mig::MigConfig mig = MigOf(config);
  ASSERT_EQ(mig.known_geometries.size(), 3);
  const mig::KnownMigGeometries& a100_80 = mig.known_geometries[1];
  EXPECT_THAT(a100_80.models, ElementsAre("A100-SXM4-80GB", "A100-80GB-PCIe",
                                          "A100-PCIE-80GB"));
  ASSERT_EQ(a100_80.geometries.size(), 4);
  EXPECT_EQ(a100_80.geometries[1],
            (mig::MigGeometry{
                "", {{"1g.10gb", 9728, 14, 1}, {"2g.20gb", 19968, 28, 3}}}));
  EXPECT_EQ(a100_80.geometries[3],
            (mig::MigGeometry{"", {{"7g.80gb", 80896, 98, 1}}}));
  EXPECT_THAT(config.notices,
              ElementsAre(HasSubstr("`cambricon`"), HasSubstr("`hygon`"),
                          HasSubstr("nvidia.enableNumaTopology"),
                          HasSubstr("nvidia.knownMigGeometries")));
  absl::StatusOr<DeviceConfig> device =
      ParseDeviceConfigYaml(text, BuiltinConfigExtensions());
  ASSERT_OK(device);
  EXPECT_EQ(*device, d);
}

TEST(ConfigExamplesTest, VolcanoDeviceConfigMap) {
  Config config = MustParse(ReadExample("device-config-volcano.yaml"));
  const DeviceConfig& d = config.device;
  EXPECT_EQ(d.resource_count_name, "volcano.sh/vgpu-number");
  EXPECT_EQ(d.resource_memory_name, "volcano.sh/vgpu-memory");
  EXPECT_EQ(d.memory_factor, 2);
  const mig::MigConfig mig = MigOf(config);
  ASSERT_EQ(mig.known_geometries.size(), 3);
  EXPECT_THAT(mig.known_geometries[0].models, ElementsAre("A30"));
  const mig::KnownMigGeometries& a100_40 = mig.known_geometries[1];
  ASSERT_EQ(a100_40.geometries.size(), 4);
  EXPECT_EQ(a100_40.geometries[1],
            (mig::MigGeometry{
                "group2", {{"2g.10gb", 10240, 0, 3}, {"1g.5gb", 5120, 0, 1}}}));
  EXPECT_EQ(mig.known_geometries[2].geometries[3].group, "group4");
  // Validated now, used once the mig backend lands: said, not silent.
  EXPECT_THAT(config.notices,
              ElementsAre(HasSubstr("nvidia.knownMigGeometries")));
}

}  // namespace
}  // namespace deviceshare
