#include "deviceshare/config/config_parser.h"

#include <fstream>
#include <sstream>
#include <string>

#include "deviceshare/hamicore/hamicore_backend.h"
#include "deviceshare/mig/mig_backend.h"
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

Config MustParse(const std::string& text) {
  absl::StatusOr<Config> config = ParseConfigYaml(text);
  EXPECT_TRUE(config.ok()) << config.status() << "\n" << text;
  return config.ok() ? *config : Config{};
}

// The error of parsing `nvidia:` with one `key: value` line.
absl::Status NvidiaError(const std::string& line) {
  return ParseConfigYaml("nvidia:\n  " + line + "\n").status();
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
  want.known_mig_geometries = {{{"A30"}, {{"", {{"4g.24gb", 24576, 0, 1}}}}}};
  want.mig_profile_allowlist = {{{"A30"}, {"1g.6gb", "2g.12gb"}}};
  EXPECT_EQ(config.device, want);
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
  EXPECT_THAT(NvidiaError("resourceMemoryName: \"\""),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia.resourceMemoryName"),
                                       HasSubstr("empty"))));
  EXPECT_THAT(NvidiaError("knownMigGeometries: {models: [A30]}"),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia.knownMigGeometries"),
                                       HasSubstr("not a list"))));
  EXPECT_THAT(ParseConfigYaml("nvidia: [deviceSplitCount]\n"),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia: a list"),
                                       HasSubstr("not a mapping"))));
  EXPECT_THAT(ParseConfigYaml("scheduler: fast\n"),
              StatusIs(kInvalid, AllOf(HasSubstr("scheduler: \"fast\""),
                                       HasSubstr("not a mapping"))));
  EXPECT_THAT(ParseConfigYaml("- nvidia\n"),
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
  EXPECT_THAT(ParseConfigYaml("nvidia: {memoryFactor: 2, gpuMemoryFactor: 3}"),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia.gpuMemoryFactor"),
                                       HasSubstr("3 disagrees"),
                                       HasSubstr("nvidia.memoryFactor: 2"))));
}

TEST(ConfigParserTest, UnknownKeysNameTheFullPath) {
  EXPECT_THAT(
      NvidiaError("deviceSplitCout: 10"),
      StatusIs(kInvalid, HasSubstr("nvidia.deviceSplitCout: unknown key")));
  EXPECT_THAT(
      ParseConfigYaml("scheduler:\n  nodepolicy: spread\n"),
      StatusIs(kInvalid, HasSubstr("scheduler.nodepolicy: unknown key")));
  EXPECT_THAT(
      ParseConfigYaml(R"(
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
      ParseConfigYaml(R"(
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
      ParseConfigYaml("nvidia:\n  knownMigGeometries:\n  - model: [A30]\n"),
      StatusIs(kInvalid,
               HasSubstr("nvidia.knownMigGeometries[0].model: unknown key")));
  EXPECT_THAT(
      ParseConfigYaml("nvidia:\n  migProfileAllowlist:\n"
                      "  - {models: [A30], profile: [1g.6gb]}\n"),
      StatusIs(kInvalid, HasSubstr("nvidia.migProfileAllowlist[0].profile: "
                                   "unknown key")));
}

TEST(ConfigParserTest, KeysAtTheWrongLevelAreErrors) {
  EXPECT_THAT(ParseConfigYaml("deviceSplitCount: 10\n"),
              StatusIs(kInvalid, AllOf(HasSubstr("deviceSplitCount"),
                                       HasSubstr("under nvidia:"))));
  EXPECT_THAT(ParseConfigYaml("nodePolicy: spread\n"),
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
  EXPECT_THAT(ParseConfigYaml("scheduler: {nodePolicy: first fit}"),
              StatusIs(kInvalid, AllOf(HasSubstr("scheduler.nodePolicy"),
                                       HasSubstr("\"first fit\""),
                                       HasSubstr("not a policy name"))));
  EXPECT_THAT(ParseConfigYaml("scheduler: {gpuPolicy: \"binpack,numa\"}"),
              StatusIs(kInvalid, AllOf(HasSubstr("scheduler.gpuPolicy"),
                                       HasSubstr("\"binpack,numa\""))));
  EXPECT_EQ(
      MustParse("scheduler: {gpuPolicy: Topology-Aware}").scheduler.gpu_policy,
      "topology-aware");
  EXPECT_THAT(ParseConfigYaml("scheduler: {gpuPolicy: 1}"),
              StatusIs(kInvalid, AllOf(HasSubstr("scheduler.gpuPolicy"),
                                       HasSubstr("1 is not a string"))));
  EXPECT_THAT(ParseConfigYaml("scheduler: {dialect: kubernetes}"),
              StatusIs(kInvalid, AllOf(HasSubstr("scheduler.dialect"),
                                       HasSubstr("\"kubernetes\""),
                                       HasSubstr("hami or volcano"))));
  EXPECT_THAT(ParseConfigYaml("scheduler: {modes: []}"),
              StatusIs(kInvalid, AllOf(HasSubstr("scheduler.modes"),
                                       HasSubstr("empty"))));
  EXPECT_THAT(ParseConfigYaml("scheduler: {modes: hami-core}"),
              StatusIs(kInvalid, AllOf(HasSubstr("scheduler.modes"),
                                       HasSubstr("not a list"))));
  EXPECT_THAT(ParseConfigYaml("scheduler: {modes: [mig, mps, mig]}"),
              StatusIs(kInvalid, AllOf(HasSubstr("scheduler.modes[2]"),
                                       HasSubstr("duplicate mode \"mig\""))));
  // Whether a backend serves a well-formed mode is checked when the
  // scheduler is made (SchedulerTest.UnknownModesAreRefused).
  EXPECT_THAT(ParseConfigYaml("scheduler: {modes: [hami-core, V-GPU]}"),
              StatusIs(kInvalid, AllOf(HasSubstr("scheduler.modes[1]"),
                                       HasSubstr("\"V-GPU\""))));
}

TEST(ConfigParserTest, BrokenYamlNamesLineAndColumn) {
  EXPECT_THAT(
      ParseConfigYaml("nvidia:\n  deviceSplitCount: [10\n"),
      StatusIs(kInvalid, AllOf(HasSubstr("line"), HasSubstr("column"))));
  EXPECT_THAT(ParseDeviceConfigYaml("nvidia:\n  a: 1\n   b: 2\n"),
              StatusIs(kInvalid, HasSubstr("line 3")));
}

// --- knownMigGeometries and migProfileAllowlist --------------------------

TEST(MigConfigTest, VolcanoGroupShape) {
  Config config = MustParse(R"(
nvidia:
  knownMigGeometries:
  - models: ["A100-SXM4-80GB", "A100-80GB-PCIe"]
    allowedGeometries:
    - group: "group1"
      geometries: [{name: 1g.10gb, memory: 9728, count: 7}]
    - group: "group2"
      geometries:
      - {name: 2g.20gb, memory: 19968, count: 3}
      - {name: 1g.10gb, memory: 9728, count: 1}
)");
  std::vector<KnownMigGeometries> want = {
      {{"A100-SXM4-80GB", "A100-80GB-PCIe"},
       {{"group1", {{"1g.10gb", 9728, 0, 7}}},
        {"group2", {{"2g.20gb", 19968, 0, 3}, {"1g.10gb", 9728, 0, 1}}}}}};
  EXPECT_EQ(config.device.known_mig_geometries, want);
}

TEST(MigConfigTest, HamiListOfListsShape) {
  Config config = MustParse(R"(
nvidia:
  knownMigGeometries:
  - models: [ "A100-SXM4-40GB", "A100-PCIE-40GB"]
    allowedGeometries:
      - - {name: 1g.5gb,  core: 14, memory: 5120,  count: 7}
      - - {name: 1g.5gb,  core: 14, memory: 5120,  count: 1}
        - {name: 2g.10gb, core: 28, memory: 10240, count: 3}
  - models: [H100-SXM5-80GB]
    allowedGeometries:
      - - {name: 7g.80gb, core: 100, memory: 81920, count: 1}
)");
  std::vector<KnownMigGeometries> want = {
      {{"A100-SXM4-40GB", "A100-PCIE-40GB"},
       {{"", {{"1g.5gb", 5120, 14, 7}}},
        {"", {{"1g.5gb", 5120, 14, 1}, {"2g.10gb", 10240, 28, 3}}}}},
      {{"H100-SXM5-80GB"}, {{"", {{"7g.80gb", 81920, 100, 1}}}}}};
  EXPECT_EQ(config.device.known_mig_geometries, want);
}

TEST(MigConfigTest, GeometryErrorsNameTheFullPath) {
  auto error = [](const std::string& allowed) {
    return ParseConfigYaml(
               "nvidia:\n  knownMigGeometries:\n  - models: [A30]\n"
               "    allowedGeometries:\n" +
               allowed)
        .status();
  };
  const std::string p = "nvidia.knownMigGeometries[0].allowedGeometries";
  EXPECT_THAT(
      error("    - group: g1\n"
            "      geometries: [{name: 1g.6gb, memory: 6144, count: 4}]\n"
            "    - group: g2\n"
            "      geometries: [{name: 2g.12gb, memory: abc, count: 2}]\n"),
      StatusIs(kInvalid, HasSubstr(p + "[1].geometries[0].memory: \"abc\" is "
                                       "not a number")));
  EXPECT_THAT(error("    - - {name: 1g.6gb, memory: 0, count: 4}\n"),
              StatusIs(kInvalid, HasSubstr(p + "[0][0].memory: 0 is out of "
                                               "range")));
  EXPECT_THAT(error("    - - {name: 1g.6gb, memory: 6144, count: 0}\n"),
              StatusIs(kInvalid, HasSubstr(p + "[0][0].count: 0 is out of "
                                               "range")));
  EXPECT_THAT(error("    - - {name: 1g.6gb, memory: 6144, count: 4, core: "
                    "101}\n"),
              StatusIs(kInvalid, HasSubstr(p + "[0][0].core: 101 is out of "
                                               "range (want 0..100)")));
  EXPECT_THAT(error("    - - {name: 6gb, memory: 6144, count: 4}\n"),
              StatusIs(kInvalid, AllOf(HasSubstr(p + "[0][0].name: \"6gb\""),
                                       HasSubstr("not a MIG profile name"))));
  EXPECT_THAT(error("    - - {memory: 6144, count: 4}\n"),
              StatusIs(kInvalid, HasSubstr(p + "[0][0].name: missing")));
  EXPECT_THAT(error("    - - {name: 1g.6gb, count: 4}\n"),
              StatusIs(kInvalid, HasSubstr(p + "[0][0].memory: missing")));
  EXPECT_THAT(error("    - []\n"),
              StatusIs(kInvalid, HasSubstr(p + "[0]: is empty")));
  EXPECT_THAT(error("    []\n"),
              StatusIs(kInvalid, HasSubstr(p + ": is empty")));
  EXPECT_THAT(error("    - 1g.6gb\n"),
              StatusIs(kInvalid, AllOf(HasSubstr(p + "[0]: \"1g.6gb\""),
                                       HasSubstr("neither"))));
  EXPECT_THAT(
      error("    - group: g1\n"
            "      geometries: [{name: 1g.6gb, memory: 6144, count: 4}]\n"
            "    - - {name: 2g.12gb, memory: 12288, count: 2}\n"),
      StatusIs(kInvalid, AllOf(HasSubstr(p + "[1]"), HasSubstr("mixes"))));
  EXPECT_THAT(
      error("    - group: g1\n"
            "      geometries: [{name: 1g.6gb, memory: 6144, count: 4}]\n"
            "    - group: g1\n"
            "      geometries: [{name: 2g.12gb, memory: 12288, count: 2}]\n"),
      StatusIs(kInvalid, AllOf(HasSubstr(p + "[1].group"),
                               HasSubstr("duplicate group \"g1\""))));
  EXPECT_THAT(
      error("    - geometries: [{name: 1g.6gb, memory: 6144, count: 4}]\n"),
      StatusIs(kInvalid, HasSubstr(p + "[0].group: missing")));
}

TEST(MigConfigTest, ModelsMustBeANonEmptyListOfNames) {
  const std::string geometries =
      "    allowedGeometries: [[{name: 1g.6gb, memory: 6144, count: 4}]]\n";
  EXPECT_THAT(ParseConfigYaml("nvidia:\n  knownMigGeometries:\n"
                              "  - models: []\n" +
                              geometries),
              StatusIs(kInvalid, HasSubstr("nvidia.knownMigGeometries[0]."
                                           "models: is empty")));
  EXPECT_THAT(ParseConfigYaml("nvidia:\n  knownMigGeometries:\n  - " +
                              geometries.substr(4)),
              StatusIs(kInvalid, HasSubstr("nvidia.knownMigGeometries[0]."
                                           "models: missing")));
  EXPECT_THAT(ParseConfigYaml("nvidia:\n  knownMigGeometries:\n"
                              "  - models: [A30, \"\"]\n" +
                              geometries),
              StatusIs(kInvalid, HasSubstr("nvidia.knownMigGeometries[0]."
                                           "models[1]: is empty")));
  EXPECT_THAT(ParseConfigYaml("nvidia:\n  knownMigGeometries:\n"
                              "  - models: A30\n" +
                              geometries),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia.knownMigGeometries[0]."
                                                 "models: \"A30\""),
                                       HasSubstr("not a list"))));
}

TEST(MigConfigTest, ProfileAllowlist) {
  Config config = MustParse(R"(
nvidia:
  migProfileAllowlist:
  - {models: ["A100-SXM4-40GB", "A100-PCIE-40GB"], profiles: ["1g.5gb", "2g.10gb", "3g.20gb", "7g.40gb"]}
  - models: ["H100-PCIE-80GB"]
    profiles: ["1g.10gb", "1g.10gb+me", "7g.80gb"]
)");
  std::vector<MigProfileAllowlist> want = {
      {{"A100-SXM4-40GB", "A100-PCIE-40GB"},
       {"1g.5gb", "2g.10gb", "3g.20gb", "7g.40gb"}},
      {{"H100-PCIE-80GB"}, {"1g.10gb", "1g.10gb+me", "7g.80gb"}}};
  EXPECT_EQ(config.device.mig_profile_allowlist, want);
  EXPECT_THAT(ParseConfigYaml("nvidia:\n  migProfileAllowlist:\n"
                              "  - {models: [A30], profiles: []}\n"),
              StatusIs(kInvalid, HasSubstr("nvidia.migProfileAllowlist[0]."
                                           "profiles: is empty")));
  EXPECT_THAT(
      ParseConfigYaml("nvidia:\n  migProfileAllowlist:\n"
                      "  - {models: [A30], profiles: [1g.6gb, big]}\n"),
      StatusIs(kInvalid, AllOf(HasSubstr("nvidia.migProfileAllowlist[0]."
                                         "profiles[1]: \"big\""),
                               HasSubstr("not a MIG profile name"))));
  EXPECT_THAT(ParseConfigYaml("nvidia:\n  migProfileAllowlist:\n"
                              "  - {profiles: [1g.6gb]}\n"),
              StatusIs(kInvalid, HasSubstr("nvidia.migProfileAllowlist[0]."
                                           "models: missing")));
}

TEST(MigConfigTest, ProfileNames) {
  auto accepts = [](const std::string& name) {
    return ParseConfigYaml(
               "nvidia:\n  migProfileAllowlist:\n"
               "  - {models: [X], profiles: [\"" +
               name + "\"]}\n")
        .ok();
  };
  for (const char* good :
       {"1g.5gb", "1g.10gb", "7g.79gb", "1g.10gb+me", "1g.24gb+me.all",
        "2g.48gb-me", "1g.24gb+gfx", "7g.141gb", "4g.24gb"}) {
    EXPECT_TRUE(accepts(good)) << good;
  }
  for (const char* bad :
       {"", "1g", "1g.", "1g.10", "g.10gb", "0g.5gb", "1g.05gb", "1c.3g.20gb",
        "1g.10gb+", "1g.10gb+ME", "1g.10gb+me.", "MIG 1g.10gb", "1g.10gb "}) {
    EXPECT_FALSE(accepts(bad)) << bad;
  }
}

// --- Kubernetes ConfigMap objects -----------------------------------------

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
  EXPECT_THAT(ParseConfigYaml("kind: ConfigMap\ndata:\n  other: x\n"),
              StatusIs(kInvalid, AllOf(HasSubstr("device-config.yaml"),
                                       HasSubstr("deviceshare.yaml"))));
  EXPECT_THAT(ParseConfigYaml("kind: ConfigMap\n"),
              StatusIs(kInvalid, HasSubstr("data: missing")));
  EXPECT_THAT(
      ParseConfigYaml("kind: Pod\nmetadata: {name: x}\n"),
      StatusIs(kInvalid, HasSubstr("kind: \"Pod\" is not a ConfigMap")));
  EXPECT_THAT(
      ParseConfigYaml("kind: ConfigMap\ndata:\n  device-config.yaml: 5\n"),
      StatusIs(kInvalid, AllOf(HasSubstr("data[\"device-config.yaml\"]"),
                               HasSubstr("not a string"))));
  EXPECT_THAT(
      ParseConfigYaml("kind: ConfigMap\ndata:\n  device-config.yaml: |\n"
                      "    nvidia:\n      deviceSplitCout: 10\n"),
      StatusIs(kInvalid,
               HasSubstr("device-config.yaml: nvidia.deviceSplitCout: "
                         "unknown key")));
  EXPECT_THAT(
      ParseConfigYaml("kind: ConfigMap\ndata:\n  device-config.yaml: |\n"
                      "    nvidia:\n      a: [1\n"),
      StatusIs(kInvalid, AllOf(HasSubstr("device-config.yaml: YAML line"),
                               HasSubstr("column"))));
  EXPECT_THAT(
      ParseConfigYaml("kind: ConfigMap\ndata:\n  device-config.yaml: |\n"
                      "    scheduler: {nodePolicy: spread}\n"),
      StatusIs(kInvalid, AllOf(HasSubstr("device-config.yaml: scheduler"),
                               HasSubstr("deviceshare.yaml"))));
  EXPECT_THAT(
      ParseConfigYaml("kind: ConfigMap\ndata:\n"
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

TEST(ConfigExamplesTest, HamiDeviceConfig) {
  std::string text = ReadExample("device-config-hami.yaml");
  Config config = MustParse(text);
  const DeviceConfig& d = config.device;
  EXPECT_EQ(d.resource_count_name, "nvidia.com/gpu");
  EXPECT_EQ(d.device_split_count, 10);
  EXPECT_EQ(d.device_memory_scaling_milli, 1500);
  EXPECT_EQ(d.lib_cuda_log_level, 1);
  EXPECT_TRUE(d.enable_numa_topology);
  ASSERT_EQ(d.known_mig_geometries.size(), 3);
  const KnownMigGeometries& a100_80 = d.known_mig_geometries[1];
  EXPECT_THAT(a100_80.models, ElementsAre("A100-SXM4-80GB", "A100-80GB-PCIe",
                                          "A100-PCIE-80GB"));
  ASSERT_EQ(a100_80.geometries.size(), 4);
  EXPECT_EQ(
      a100_80.geometries[1],
      (MigGeometry{"", {{"1g.10gb", 9728, 14, 1}, {"2g.20gb", 19968, 28, 3}}}));
  EXPECT_EQ(a100_80.geometries[3],
            (MigGeometry{"", {{"7g.80gb", 80896, 98, 1}}}));
  EXPECT_THAT(config.notices,
              ElementsAre(HasSubstr("`cambricon`"), HasSubstr("`hygon`"),
                          HasSubstr("nvidia.enableNumaTopology"),
                          HasSubstr("nvidia.knownMigGeometries")));
  absl::StatusOr<DeviceConfig> device = ParseDeviceConfigYaml(text);
  ASSERT_OK(device);
  EXPECT_EQ(*device, d);
}

TEST(ConfigExamplesTest, VolcanoDeviceConfigMap) {
  Config config = MustParse(ReadExample("device-config-volcano.yaml"));
  const DeviceConfig& d = config.device;
  EXPECT_EQ(d.resource_count_name, "volcano.sh/vgpu-number");
  EXPECT_EQ(d.resource_memory_name, "volcano.sh/vgpu-memory");
  EXPECT_EQ(d.memory_factor, 2);
  ASSERT_EQ(d.known_mig_geometries.size(), 3);
  EXPECT_THAT(d.known_mig_geometries[0].models, ElementsAre("A30"));
  const KnownMigGeometries& a100_40 = d.known_mig_geometries[1];
  ASSERT_EQ(a100_40.geometries.size(), 4);
  EXPECT_EQ(a100_40.geometries[1],
            (MigGeometry{"group2",
                         {{"2g.10gb", 10240, 0, 3}, {"1g.5gb", 5120, 0, 1}}}));
  EXPECT_EQ(d.known_mig_geometries[2].geometries[3].group, "group4");
  // Validated now, used once the mig backend lands: said, not silent.
  EXPECT_THAT(config.notices,
              ElementsAre(HasSubstr("nvidia.knownMigGeometries")));
}

}  // namespace
}  // namespace deviceshare

namespace deviceshare {
namespace {

using ::deviceshare::testing::StatusIs;
using ::testing::HasSubstr;

// Group names travel in Volcano ids, GPU-x[group-position].
TEST(ConfigMigTest, GroupNamesThatBreakAllocationIdsAreRejected) {
  for (const char* name : {"g-", "1g.10gb", "a[b", "x:y"}) {
    const std::string yaml = absl::StrCat(
        "nvidia:\n  knownMigGeometries:\n  - models: [A30]\n"
        "    allowedGeometries:\n    - group: \"",
        name,
        "\"\n      geometries: [{name: 1g.6gb, memory: 6144, count: 4}]\n");
    EXPECT_THAT(ParseConfigYaml(yaml),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("allowedGeometries[0].group")))
        << name;
  }
}

TEST(ConfigMigTest, ConfigMapSearchNeedsGeometriesAndUnusedKeysAreSaid) {
  EXPECT_THAT(
      ParseConfigYaml("scheduler: {modes: [mig], migSearch: configmap}\n"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("scheduler.migSearch")));
  EXPECT_THAT(ParseConfigYaml("scheduler: {migSearch: everywhere}\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("\"everywhere\" is not a MIG search")));
  auto placement = ParseConfigYaml(
      "scheduler: {modes: [mig]}\nnvidia:\n  knownMigGeometries:\n"
      "  - models: [A30]\n    allowedGeometries:\n    - group: g1\n"
      "      geometries: [{name: 1g.6gb, memory: 6144, count: 4}]\n");
  ASSERT_TRUE(placement.ok()) << placement.status();
  EXPECT_EQ(placement->scheduler.mig_search, MigSearch::kPlacement);
  ASSERT_EQ(placement->notices.size(), 1u);
  EXPECT_THAT(placement->notices[0],
              HasSubstr("knownMigGeometries: not used: scheduler.migSearch is "
                        "placement"));
}

}  // namespace
}  // namespace deviceshare
