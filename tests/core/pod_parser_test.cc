#include "deviceshare/k8s/pod_parser.h"

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/codec/yaml_json.h"
#include "deviceshare/config/config_parser.h"
#include "deviceshare/hamicore/hamicore_backend.h"
#include "deviceshare/mig/mig_backend.h"
#include "deviceshare/mps/mps_backend.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;

PodRequest MustParse(const std::string& yaml,
                     const DeviceConfig& config = DeviceConfig{}) {
  absl::StatusOr<PodRequest> pod = ParsePodRequestText(yaml, config);
  EXPECT_TRUE(pod.ok()) << pod.status() << "\n" << yaml;
  return pod.ok() ? *pod : PodRequest{};
}

// A pod named `a` in `default` whose one container `main` has these limits
// (a YAML flow mapping body, e.g. `nvidia.com/gpu: 1`).
std::string OneContainer(const std::string& limits,
                         const std::string& annotations = "") {
  return "apiVersion: v1\nkind: Pod\nmetadata:\n  name: a\n" +
         (annotations.empty() ? "" : "  annotations: {" + annotations + "}\n") +
         "spec:\n  containers:\n  - name: main\n    image: cuda\n"
         "    resources:\n      limits: {" +
         limits + "}\n";
}

ContainerRequest OnlyContainer(const std::string& limits,
                               const DeviceConfig& config = DeviceConfig{}) {
  PodRequest pod = MustParse(OneContainer(limits), config);
  EXPECT_EQ(pod.containers.size(), 1);
  return pod.containers.empty() ? ContainerRequest{} : pod.containers[0];
}

absl::Status LimitsError(const std::string& limits,
                         const DeviceConfig& config = DeviceConfig{}) {
  return ParsePodRequestText(OneContainer(limits), config).status();
}

// gpu_count, memory_mib, memory_percent, cores of a container.
struct Ask {
  int32_t gpus;
  int64_t mib;
  int32_t percent;
  int32_t cores;
};

MATCHER_P(Asks, want, "") {
  const ContainerRequest& c = arg;
  *result_listener << "gpus=" << c.gpu_count << " mib=" << c.memory_mib
                   << " percent=" << c.memory_percent << " cores=" << c.cores;
  return c.gpu_count == want.gpus && c.memory_mib == want.mib &&
         c.memory_percent == want.percent && c.cores == want.cores;
}

// --- Pod metadata -----------------------------------------------------------

TEST(PodParserTest, MetadataAndDefaults) {
  PodRequest pod = MustParse(OneContainer("nvidia.com/gpu: 1"));
  EXPECT_EQ(pod.name, "a");
  EXPECT_EQ(pod.namespace_name, "default");
  EXPECT_EQ(pod.uid, "default/a");
  EXPECT_EQ(pod.dialect, Dialect::kHami);
  EXPECT_FALSE(pod.mode.has_value());
  EXPECT_FALSE(pod.numa_bind);
  EXPECT_FALSE(pod.node_policy.has_value());
  EXPECT_FALSE(pod.gpu_policy.has_value());

  PodRequest named = MustParse(R"(
kind: Pod
metadata: {name: b, namespace: team-a, uid: 1234-abcd}
spec:
  containers: [{name: c}]
)");
  EXPECT_EQ(named.Key(), "team-a/b");
  EXPECT_EQ(named.uid, "1234-abcd");
}

TEST(PodParserTest, PodWithoutGpuIsNotAnError) {
  PodRequest pod = MustParse(R"(
apiVersion: v1
kind: Pod
metadata: {name: web}
spec:
  containers:
  - name: nginx
    resources:
      requests: {cpu: 250m, memory: 64Mi}
      limits: {cpu: "1", memory: 128Mi}
)");
  EXPECT_FALSE(pod.HasGpuRequest());
  EXPECT_EQ(pod.dialect, Dialect::kHami);
  ASSERT_EQ(pod.containers.size(), 1);
  EXPECT_THAT(pod.containers[0], Asks(Ask{0, 0, 0, 0}));
  EXPECT_EQ(pod.cpu_milli, 250);
  EXPECT_EQ(pod.memory_mib, 64);
}

TEST(PodParserTest, ObjectShapeErrors) {
  DeviceConfig config;
  EXPECT_THAT(ParsePodRequest(nlohmann::json::array(), config),
              StatusIs(kInvalid, HasSubstr("not a Pod")));
  EXPECT_THAT(
      ParsePodRequestText("kind: Deployment\nmetadata: {name: d}\n", config),
      StatusIs(kInvalid, HasSubstr("kind \"Deployment\" is not Pod")));
  EXPECT_THAT(ParsePodRequestText("kind: Pod\nspec: {}\n", config),
              StatusIs(kInvalid, HasSubstr("metadata is missing")));
  EXPECT_THAT(
      ParsePodRequestText("kind: Pod\nmetadata: {namespace: x}\n", config),
      StatusIs(kInvalid, HasSubstr("metadata.name is missing")));
  EXPECT_THAT(ParsePodRequestText("metadata: {name: 5}\n", config),
              StatusIs(kInvalid, HasSubstr("5 is not a string")));
  EXPECT_THAT(
      ParsePodRequestText(
          "metadata: {name: a}\nspec: {containers: {name: x}}\n", config),
      StatusIs(kInvalid,
               AllOf(HasSubstr("pod default/a"), HasSubstr("spec.containers"),
                     HasSubstr("not a list"))));
  EXPECT_THAT(
      ParsePodRequestText(
          "metadata: {name: a}\nspec: {containers: [{image: x}]}\n", config),
      StatusIs(kInvalid,
               AllOf(HasSubstr("spec.containers[0]"), HasSubstr("no name"))));
  EXPECT_THAT(ParsePodRequestText("metadata: {name: a}\nspec:\n  containers:\n"
                                  "  - {name: m, resources: {limits: [1]}}\n",
                                  config),
              StatusIs(kInvalid, AllOf(HasSubstr("container m"),
                                       HasSubstr("resources.limits"))));
  EXPECT_THAT(ParsePodRequestText("metadata: {name: a\n", config),
              StatusIs(kInvalid, HasSubstr("line")));
}

TEST(PodParserTest, JsonTextAndJsonNumbers) {
  PodRequest pod = MustParse(R"({
    "apiVersion": "v1", "kind": "Pod",
    "metadata": {"name": "j", "namespace": "ns", "uid": "u-1"},
    "spec": {"containers": [{"name": "main", "resources": {"limits": {
      "nvidia.com/gpu": 2, "nvidia.com/gpumem": "3000",
      "nvidia.com/gpucores": 30.0}}}]}})");
  EXPECT_EQ(pod.uid, "u-1");
  ASSERT_EQ(pod.containers.size(), 1);
  EXPECT_THAT(pod.containers[0], Asks(Ask{2, 3000, 0, 30}));
}

// --- Volcano dialect ---------------------------------------------------------

TEST(PodParserVolcanoTest, ManifestWithAnnotations) {
  PodRequest pod = MustParse(R"(
apiVersion: v1
kind: Pod
metadata:
  name: trainer
  namespace: team-b
  annotations:
    volcano.sh/vgpu-mode: hami-core
    nvidia.com/use-gputype: "A100, H100"
    nvidia.com/nouse-gputype: "A100-PCIE-40GB"
    volcano.sh/vgpu-use-gpuuuid: "GPU-a, GPU-b"
    volcano.sh/vgpu-nouse-gpuuuid: GPU-c
spec:
  schedulerName: volcano
  containers:
  - name: trainer
    image: nvcr.io/nvidia/pytorch:24.05-py3
    resources:
      limits:
        volcano.sh/vgpu-number: 2
        volcano.sh/vgpu-memory: 10240
        volcano.sh/vgpu-cores: 50
  - name: logger
    image: busybox
)");
  EXPECT_EQ(pod.dialect, Dialect::kVolcano);
  EXPECT_EQ(pod.mode, hamicore::kMode);
  EXPECT_THAT(pod.use_models, ElementsAre("A100", "H100"));
  EXPECT_THAT(pod.avoid_models, ElementsAre("A100-PCIE-40GB"));
  EXPECT_THAT(pod.use_uuids, ElementsAre("GPU-a", "GPU-b"));
  EXPECT_THAT(pod.avoid_uuids, ElementsAre("GPU-c"));
  ASSERT_EQ(pod.containers.size(), 2);
  EXPECT_EQ(pod.containers[0].name, "trainer");
  EXPECT_THAT(pod.containers[0], Asks(Ask{2, 10240, 0, 50}));
  EXPECT_EQ(pod.containers[1].name, "logger");
  EXPECT_THAT(pod.containers[1], Asks(Ask{0, 0, 0, 0}));
  // The device plugin kubelet will call for it.
  EXPECT_EQ(pod.containers[0].count_resource, "volcano.sh/vgpu-number");
  EXPECT_EQ(pod.containers[1].count_resource, "");
}

TEST(PodParserVolcanoTest, CountingRules) {
  // Number alone: the whole card; Volcano has no exclusive-core rule.
  EXPECT_THAT(OnlyContainer("volcano.sh/vgpu-number: 1"),
              Asks(Ask{1, 0, 0, 0}));
  // Memory alone implies one GPU.
  EXPECT_THAT(OnlyContainer("volcano.sh/vgpu-memory: 3000"),
              Asks(Ask{1, 3000, 0, 0}));
  EXPECT_THAT(OnlyContainer("volcano.sh/vgpu-number: 2, "
                            "volcano.sh/vgpu-memory-percentage: 25"),
              Asks(Ask{2, 0, 25, 0}));
  // formats.md: without number or memory the container asks for nothing.
  EXPECT_THAT(OnlyContainer("volcano.sh/vgpu-cores: 50"),
              Asks(Ask{0, 0, 0, 0}));
  EXPECT_THAT(OnlyContainer("volcano.sh/vgpu-memory-percentage: 50"),
              Asks(Ask{0, 0, 0, 0}));
  EXPECT_EQ(MustParse(OneContainer("volcano.sh/vgpu-cores: 50")).dialect,
            Dialect::kVolcano);
  // An explicit zero count is no GPU.
  EXPECT_THAT(
      OnlyContainer("volcano.sh/vgpu-number: 0, volcano.sh/vgpu-memory: 10"),
      Asks(Ask{0, 0, 0, 0}));
  // The percentage wins over memory, as Volcano sizes each card by it
  // whenever one is given (vgpu/utils.go); zero of either means "not
  // given".
  EXPECT_THAT(OnlyContainer("volcano.sh/vgpu-memory: 2000, "
                            "volcano.sh/vgpu-memory-percentage: 50"),
              Asks(Ask{1, 0, 50, 0}));
  EXPECT_THAT(OnlyContainer("volcano.sh/vgpu-memory: 2000, "
                            "volcano.sh/vgpu-memory-percentage: 0"),
              Asks(Ask{1, 2000, 0, 0}));
  EXPECT_THAT(
      OnlyContainer("volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: "
                    "0, volcano.sh/vgpu-memory-percentage: 0"),
      Asks(Ask{1, 0, 0, 0}));
}

TEST(PodParserVolcanoTest, DeviceConfigDefaultsAndFactor) {
  DeviceConfig config;
  config.memory_factor = 4;
  config.default_memory_mib = 1024;
  config.default_cores = 25;
  config.default_gpu_num = 2;
  EXPECT_THAT(OnlyContainer("volcano.sh/vgpu-memory: 1000", config),
              Asks(Ask{2, 4000, 0, 25}));
  EXPECT_THAT(OnlyContainer("volcano.sh/vgpu-number: 1", config),
              Asks(Ask{1, 1024, 0, 25}));
  EXPECT_THAT(OnlyContainer("volcano.sh/vgpu-number: 1, "
                            "volcano.sh/vgpu-memory-percentage: 30, "
                            "volcano.sh/vgpu-cores: 0",
                            config),
              Asks(Ask{1, 0, 30, 0}));
}

TEST(PodParserVolcanoTest, LimitsWinOverRequests) {
  PodRequest pod = MustParse(R"(
metadata: {name: r}
spec:
  containers:
  - name: main
    resources:
      requests: {volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 500, volcano.sh/vgpu-cores: 10}
      limits: {volcano.sh/vgpu-memory: 800}
)");
  ASSERT_EQ(pod.containers.size(), 1);
  EXPECT_THAT(pod.containers[0], Asks(Ask{1, 800, 0, 10}));
}

TEST(PodParserVolcanoTest, UnknownVolcanoResourceIsATypo) {
  EXPECT_THAT(
      LimitsError("volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memroy: 10"),
      StatusIs(kInvalid, AllOf(HasSubstr("container main"),
                               HasSubstr("volcano.sh/vgpu-memroy"),
                               HasSubstr("unknown Volcano GPU"))));
}

TEST(PodParserVolcanoTest, VolcanoDeviceConfigMapRenamesTheResources) {
  std::ifstream in(std::string(DEVICESHARE_EXAMPLES_DIR) +
                   "/device-config-volcano.yaml");
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<DeviceConfig> config =
      ParseDeviceConfigYaml(text.str(), BuiltinConfigExtensions());
  ASSERT_OK(config);
  ASSERT_EQ(config->resource_count_name, "volcano.sh/vgpu-number");
  PodRequest pod = MustParse(
      OneContainer("volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 1500"),
      *config);
  EXPECT_EQ(pod.dialect, Dialect::kVolcano);
  // gpuMemoryFactor: 2 in the example.
  EXPECT_THAT(pod.containers[0], Asks(Ask{1, 3000, 0, 0}));
}

TEST(PodParserTest, EveryExamplePodParses) {
  std::ifstream in(std::string(DEVICESHARE_EXAMPLES_DIR) + "/pods.yaml");
  ASSERT_TRUE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::vector<nlohmann::json>> docs =
      ParseYamlDocuments(text.str());
  ASSERT_OK(docs);
  ASSERT_FALSE(docs->empty());
  int volcano = 0;
  for (const nlohmann::json& doc : *docs) {
    absl::StatusOr<PodRequest> pod = ParsePodRequest(doc, DeviceConfig{});
    ASSERT_OK(pod);
    EXPECT_TRUE(pod->HasGpuRequest()) << pod->Key();
    volcano += pod->dialect == Dialect::kVolcano;
  }
  // The file shows both dialects.
  EXPECT_GT(volcano, 0);
  EXPECT_LT(volcano, static_cast<int>(docs->size()));
}

// --- HAMi dialect ------------------------------------------------------------

TEST(PodParserHamiTest, ManifestWithInitContainersAndAnnotations) {
  PodRequest pod = MustParse(R"(
apiVersion: v1
kind: Pod
metadata:
  name: llm
  namespace: team-a
  uid: 7f0c1a52-0003-4c1e-9d3a-000000000003
  annotations:
    nvidia.com/vgpu-mode: mig
    nvidia.com/use-gpuuuid: GPU-1,GPU-2
    nvidia.com/nouse-gpuuuid: GPU-9
    nvidia.com/numa-bind: "true"
    hami.io/node-scheduler-policy: spread
    hami.io/gpu-scheduler-policy: binpack
spec:
  initContainers:
  - name: warmup
    image: busybox
    resources:
      limits: {nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 60, nvidia.com/gpucores: 10}
      requests: {cpu: "2", memory: 3Gi}
  containers:
  - name: server
    image: vllm/vllm-openai
    resources:
      limits: {nvidia.com/gpu: 2, nvidia.com/gpumem: 20480, nvidia.com/gpucores: 30}
      requests: {cpu: 500m, memory: 1Gi}
  - name: proxy
    image: envoy
    resources:
      requests: {cpu: "1", memory: 1536Mi}
)");
  EXPECT_EQ(pod.dialect, Dialect::kHami);
  EXPECT_EQ(pod.uid, "7f0c1a52-0003-4c1e-9d3a-000000000003");
  EXPECT_EQ(pod.mode, mig::kMode);
  EXPECT_THAT(pod.use_uuids, ElementsAre("GPU-1", "GPU-2"));
  EXPECT_THAT(pod.avoid_uuids, ElementsAre("GPU-9"));
  EXPECT_TRUE(pod.numa_bind);
  EXPECT_EQ(pod.node_policy, "spread");
  EXPECT_EQ(pod.gpu_policy, "binpack");
  ASSERT_EQ(pod.containers.size(), 3);
  EXPECT_EQ(pod.containers[0].name, "warmup");
  EXPECT_TRUE(pod.containers[0].is_init);
  EXPECT_THAT(pod.containers[0], Asks(Ask{1, 0, 60, 10}));
  EXPECT_EQ(pod.containers[1].name, "server");
  EXPECT_FALSE(pod.containers[1].is_init);
  EXPECT_THAT(pod.containers[1], Asks(Ask{2, 20480, 0, 30}));
  EXPECT_EQ(pod.containers[2].name, "proxy");
  EXPECT_FALSE(pod.containers[2].is_init);
  EXPECT_THAT(pod.containers[2], Asks(Ask{0, 0, 0, 0}));
  EXPECT_EQ(pod.containers[0].count_resource, "nvidia.com/gpu");
  EXPECT_EQ(pod.containers[1].count_resource, "nvidia.com/gpu");
  EXPECT_EQ(pod.containers[2].count_resource, "");
  // max(init 2 CPUs / 3 GiB, apps 1.5 CPUs / 2.5 GiB): the init container
  // wins on both, it is not added.
  EXPECT_EQ(pod.cpu_milli, 2000);
  EXPECT_EQ(pod.memory_mib, 3072);
}

TEST(PodParserHamiTest, HostNeedsAreMaxOfInitAndSumOfApps) {
  PodRequest pod = MustParse(R"(
metadata: {name: m}
spec:
  initContainers:
  - {name: i1, resources: {requests: {cpu: 300m, memory: 100Mi}}}
  - {name: i2, resources: {limits: {cpu: 700m, memory: 4Gi}}}
  containers:
  - {name: a1, resources: {requests: {cpu: 400m, memory: 1Gi}, limits: {cpu: "8"}}}
  - {name: a2, resources: {limits: {cpu: 600m, memory: 2Gi}}}
)");
  // cpu: apps 400m + 600m = 1000m beat the largest init (700m); memory: the
  // 4 GiB init container beats 3 GiB of apps. Requests win over limits.
  EXPECT_EQ(pod.cpu_milli, 1000);
  EXPECT_EQ(pod.memory_mib, 4096);
  EXPECT_THAT(
      ParsePodRequestText("metadata: {name: m}\nspec:\n  containers:\n"
                          "  - {name: c, resources: {requests: {cpu: lots}}}\n",
                          DeviceConfig{}),
      StatusIs(kInvalid,
               AllOf(HasSubstr("container c"), HasSubstr("cpu: \"lots\""))));
}

TEST(PodParserHamiTest, HostNeedsOverflowIsAnError) {
  EXPECT_THAT(ParsePodRequestText(R"(
metadata: {name: big}
spec:
  containers:
  - {name: a, resources: {requests: {cpu: "9000000000000000"}}}
  - {name: b, resources: {requests: {cpu: "9000000000000000"}}}
)",
                                  DeviceConfig{}),
              StatusIs(kInvalid, AllOf(HasSubstr("pod default/big"),
                                       HasSubstr("total cpu overflows"))));
}

TEST(PodParserHamiTest, SidecarsRunBesideTheApps) {
  PodRequest pod = MustParse(R"(
metadata: {name: s}
spec:
  initContainers:
  - {name: mesh, restartPolicy: Always, resources: {requests: {cpu: 200m, memory: 128Mi}}}
  - {name: setup, resources: {requests: {cpu: "1", memory: 256Mi}}}
  containers:
  - {name: app, resources: {requests: {cpu: 500m, memory: 512Mi}}}
)");
  // setup runs beside the sidecar (1200m, 384Mi); the app too (700m, 640Mi).
  EXPECT_EQ(pod.cpu_milli, 1200);
  EXPECT_EQ(pod.memory_mib, 640);
  EXPECT_THAT(ParsePodRequestText(R"(
metadata: {name: s}
spec:
  initContainers:
  - {name: mesh, restartPolicy: Always, resources: {limits: {nvidia.com/gpu: 1}}}
  containers: [{name: app}]
)",
                                  DeviceConfig{}),
              StatusIs(kInvalid, AllOf(HasSubstr("container mesh"),
                                       HasSubstr("sidecar"))));
}

TEST(PodParserHamiTest, GpuAloneIsExclusive) {
  // HAMi's webhook (defaultExclusiveCoreIfNeeded): all cores, whole card.
  EXPECT_THAT(OnlyContainer("nvidia.com/gpu: 1"), Asks(Ask{1, 0, 0, 100}));
  EXPECT_THAT(
      OnlyContainer("nvidia.com/gpu: 2, nvidia.com/gpumem-percentage: 100"),
      Asks(Ask{2, 0, 100, 100}));
  // A 0 percentage is ignored, so memory is still the whole card; but a
  // percentage was named and is not 100, so the webhook adds no cores
  // (device_test.go:1889, TestZeroMemoryPercentageIsAccountedAsWholeCard).
  EXPECT_THAT(
      OnlyContainer("nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 0"),
      Asks(Ask{1, 0, 0, 0}));
  // Named cores are kept, even 0.
  EXPECT_THAT(OnlyContainer("nvidia.com/gpu: 1, nvidia.com/gpucores: 0"),
              Asks(Ask{1, 0, 0, 0}));
  // Shared memory: no exclusive cores.
  EXPECT_THAT(
      OnlyContainer("nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 50"),
      Asks(Ask{1, 0, 50, 0}));
  EXPECT_THAT(OnlyContainer("nvidia.com/gpu: 1, nvidia.com/gpumem: 4000"),
              Asks(Ask{1, 4000, 0, 0}));
}

// HAMi's scheduler clamps what its webhook would have refused
// (device_test.go:1791, :1827 "above 100"; :1925 "negative memory
// percentage"; :1984 "core limit can't exceed 100").
TEST(PodParserHamiTest, OutOfRangePercentagesAreClampedAsHamiSchedulerDoes) {
  EXPECT_THAT(
      OnlyContainer("nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 150"),
      Asks(Ask{1, 0, 100, 0}));
  EXPECT_THAT(OnlyContainer("nvidia.com/gpu: 1, "
                            "nvidia.com/gpumem-percentage: 4294967346"),
              Asks(Ask{1, 0, 100, 0}));
  EXPECT_THAT(
      OnlyContainer("nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: -1"),
      Asks(Ask{1, 0, 0, 0}));
  EXPECT_THAT(OnlyContainer("nvidia.com/gpu: 1, nvidia.com/gpumem: 512, "
                            "nvidia.com/gpucores: 120"),
              Asks(Ask{1, 512, 0, 100}));
}

// An empty resourceMemoryName: no container can name memory, so every
// count-only request is exclusive (device_test.go:285).
TEST(PodParserHamiTest, EmptyMemoryNameMakesCountRequestsExclusive) {
  DeviceConfig config;
  config.resource_memory_name = "";
  EXPECT_THAT(OnlyContainer("nvidia.com/gpu: 1", config),
              Asks(Ask{1, 0, 0, 100}));
}

TEST(PodParserHamiTest, DefaultsFromTheDeviceConfig) {
  DeviceConfig config;
  config.default_memory_mib = 2048;
  config.default_cores = 20;
  config.default_gpu_num = 3;
  // The webhook sees no memory field, so it adds all cores; the scheduler
  // then books defaultMemory (TestGenerateResourceRequests_DefaultMemory).
  EXPECT_THAT(OnlyContainer("nvidia.com/gpu: 1", config),
              Asks(Ask{1, 2048, 0, 100}));
  // gpumem / gpucores / percentage without gpu: defaultGPUNum GPUs.
  EXPECT_THAT(OnlyContainer("nvidia.com/gpumem: 1000", config),
              Asks(Ask{3, 1000, 0, 20}));
  EXPECT_THAT(OnlyContainer("nvidia.com/gpucores: 40", config),
              Asks(Ask{3, 2048, 0, 40}));
  // The exclusive-core rule runs after the webhook adds the count
  // (MutateAdmission: mutateContainerResource, then
  // defaultExclusiveCoreIfNeeded): a lone percentage of 100 gets all cores.
  EXPECT_THAT(OnlyContainer("nvidia.com/gpumem-percentage: 100", config),
              Asks(Ask{3, 0, 100, 100}));
  EXPECT_THAT(OnlyContainer("nvidia.com/gpumem-percentage: 50", config),
              Asks(Ask{3, 0, 50, 20}));
  DeviceConfig plain;
  EXPECT_THAT(OnlyContainer("nvidia.com/gpumem: 1000", plain),
              Asks(Ask{1, 1000, 0, 0}));
  EXPECT_THAT(
      OnlyContainer("nvidia.com/gpu: 0, nvidia.com/gpumem: 1000", plain),
      Asks(Ask{0, 0, 0, 0}));
  EXPECT_EQ(MustParse(OneContainer("nvidia.com/gpu: 0")).dialect,
            Dialect::kHami);
}

TEST(PodParserHamiTest, MemoryFactorAndPrecedence) {
  DeviceConfig config;
  config.memory_factor = 1024;
  EXPECT_THAT(OnlyContainer("nvidia.com/gpu: 1, nvidia.com/gpumem: 3", config),
              Asks(Ask{1, 3072, 0, 0}));
  EXPECT_THAT(OnlyContainer("nvidia.com/gpu: 1, nvidia.com/gpumem: 3000, "
                            "nvidia.com/gpumem-percentage: 50"),
              Asks(Ask{1, 3000, 0, 0}));
}

TEST(PodParserHamiTest, RenamedResources) {
  DeviceConfig config;
  config.resource_count_name = "example.com/vgpu";
  config.resource_memory_name = "example.com/vgpu-mem";
  config.resource_memory_percentage_name = "example.com/vgpu-pct";
  config.resource_core_name = "example.com/vgpu-core";
  EXPECT_THAT(OnlyContainer("example.com/vgpu: 1, example.com/vgpu-core: 20, "
                            "example.com/vgpu-pct: 40",
                            config),
              Asks(Ask{1, 0, 40, 20}));
  // The default names mean nothing under this config.
  EXPECT_THAT(OnlyContainer("nvidia.com/gpu: 1", config),
              Asks(Ask{0, 0, 0, 0}));
}

TEST(PodParserHamiTest, PriorityIsCheckedButAsksForNoGpu) {
  EXPECT_THAT(OnlyContainer("nvidia.com/priority: 1"), Asks(Ask{0, 0, 0, 0}));
  EXPECT_THAT(
      OnlyContainer("nvidia.com/priority: 1, volcano.sh/vgpu-number: 1"),
      Asks(Ask{1, 0, 0, 0}));
  EXPECT_THAT(LimitsError("nvidia.com/gpu: 1, nvidia.com/priority: high"),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia.com/priority"),
                                       HasSubstr("\"high\""))));
}

// --- Quantity errors: pod, container, key and value ------------------------

TEST(PodParserErrorsTest, BadQuantitiesNameEverything) {
  EXPECT_THAT(
      LimitsError("nvidia.com/gpu: 1, nvidia.com/gpumem: -3"),
      StatusIs(kInvalid, HasSubstr("pod default/a container main: "
                                   "nvidia.com/gpumem: \"-3\" is negative")));
  EXPECT_THAT(
      LimitsError("nvidia.com/gpu: \"-1\""),
      StatusIs(kInvalid, HasSubstr("nvidia.com/gpu: \"-1\" is negative")));
  EXPECT_THAT(
      LimitsError("volcano.sh/vgpu-number: lots"),
      StatusIs(kInvalid, AllOf(HasSubstr("container main"),
                               HasSubstr("volcano.sh/vgpu-number: \"lots\""))));
  EXPECT_THAT(LimitsError("nvidia.com/gpu: 1.5"),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia.com/gpu: \"1.5\""),
                                       HasSubstr("whole number"))));
  EXPECT_THAT(LimitsError("volcano.sh/vgpu-number: 500m"),
              StatusIs(kInvalid, AllOf(HasSubstr("\"500m\""),
                                       HasSubstr("whole number"))));
  EXPECT_THAT(LimitsError("nvidia.com/gpu: true"),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia.com/gpu: true"),
                                       HasSubstr("not a quantity"))));
  EXPECT_THAT(
      LimitsError("nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: lots"),
      StatusIs(kInvalid, HasSubstr("nvidia.com/gpumem-percentage: \"lots\"")));
  EXPECT_THAT(LimitsError("nvidia.com/gpu: 1, nvidia.com/gpucores: -5"),
              StatusIs(kInvalid, HasSubstr("nvidia.com/gpucores: \"-5\"")));
  EXPECT_THAT(
      LimitsError("volcano.sh/vgpu-number: 1, volcano.sh/vgpu-cores: 200"),
      StatusIs(kInvalid, AllOf(HasSubstr("volcano.sh/vgpu-cores"),
                               HasSubstr("above 100"))));
  // Even a value the Volcano rules ignore is checked.
  EXPECT_THAT(LimitsError("volcano.sh/vgpu-cores: -5"),
              StatusIs(kInvalid, HasSubstr("volcano.sh/vgpu-cores: \"-5\"")));
}

TEST(PodParserErrorsTest, Overflow) {
  EXPECT_THAT(
      LimitsError("nvidia.com/gpu: 3000000000"),
      StatusIs(kInvalid, AllOf(HasSubstr("nvidia.com/gpu: \"3000000000\""),
                               HasSubstr("overflows int32"))));
  EXPECT_THAT(LimitsError("nvidia.com/gpu: \"99999999999999999999\""),
              StatusIs(kInvalid, HasSubstr("overflows int64")));
  EXPECT_THAT(LimitsError("nvidia.com/gpu: 1, nvidia.com/gpumem: 1e30"),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia.com/gpumem"),
                                       HasSubstr("overflows"))));
  DeviceConfig config;
  config.memory_factor = 2;
  EXPECT_THAT(
      LimitsError("volcano.sh/vgpu-memory: 9223372036854775807", config),
      StatusIs(kInvalid, AllOf(HasSubstr("volcano.sh/vgpu-memory"),
                               HasSubstr("memory factor 2 overflows int64"))));
  EXPECT_THAT(OnlyContainer("volcano.sh/vgpu-memory: 9223372036854775807"),
              Asks(Ask{1, 9223372036854775807LL, 0, 0}));
}

TEST(PodParserErrorsTest, OneContainerOneDialect) {
  EXPECT_THAT(LimitsError("nvidia.com/gpu: 1, volcano.sh/vgpu-memory: 100"),
              StatusIs(kInvalid,
                       AllOf(HasSubstr("pod default/a container main"),
                             HasSubstr("mixes Volcano (volcano.sh/vgpu-memory) "
                                       "and HAMi (nvidia.com/gpu)"))));
}

TEST(PodParserErrorsTest, OnePodOneDialect) {
  EXPECT_THAT(ParsePodRequestText(R"(
metadata: {name: mixed, namespace: ns}
spec:
  initContainers:
  - {name: prep, resources: {limits: {volcano.sh/vgpu-number: 1}}}
  containers:
  - {name: main, resources: {limits: {nvidia.com/gpu: 1}}}
)",
                                  DeviceConfig{}),
              StatusIs(kInvalid, AllOf(HasSubstr("pod ns/mixed"),
                                       HasSubstr("container prep uses volcano"),
                                       HasSubstr("container main uses hami"))));
}

// --- MIG resources (nvidia.com/mig-<profile>, both dialects) ---------------

TEST(PodParserMigTest, MigResourceAsksForInstancesOfTheProfile) {
  PodRequest pod = MustParse(OneContainer("nvidia.com/mig-1g.10gb: 2"));
  ASSERT_EQ(pod.containers.size(), 1);
  // Memory and cores stay 0: the profile decides them.
  EXPECT_THAT(pod.containers[0], Asks(Ask{2, 0, 0, 0}));
  EXPECT_EQ(pod.containers[0].mig_profile, "1g.10gb");
  EXPECT_EQ(pod.mode, mig::kMode);
  EXPECT_EQ(pod.dialect, Dialect::kHami);
  EXPECT_TRUE(pod.HasGpuRequest());

  // Variant profiles, and a vgpu-mode that agrees.
  PodRequest variant = MustParse(OneContainer("nvidia.com/mig-1g.10gb+me: 1",
                                              "nvidia.com/vgpu-mode: mig"));
  EXPECT_EQ(variant.containers[0].mig_profile, "1g.10gb+me");
  EXPECT_EQ(variant.mode, mig::kMode);

  // 0 asks for nothing and does not force the mode.
  PodRequest none = MustParse(OneContainer("nvidia.com/mig-1g.10gb: 0"));
  EXPECT_THAT(none.containers[0], Asks(Ask{0, 0, 0, 0}));
  EXPECT_EQ(none.containers[0].mig_profile, "");
  EXPECT_EQ(none.mode, std::nullopt);
}

TEST(PodParserMigTest, RequestsInitContainersAndTheVolcanoDialect) {
  PodRequest pod = MustParse(R"(
apiVersion: v1
kind: Pod
metadata:
  name: mig
  annotations: {volcano.sh/vgpu-mode: mig}
spec:
  initContainers:
  - name: warmup
    resources:
      requests: {nvidia.com/mig-3g.40gb: 1}
  containers:
  - name: main
    resources:
      limits: {nvidia.com/mig-1g.10gb: "2"}
      requests: {nvidia.com/mig-1g.10gb: "2", cpu: "1"}
  - name: vgpu
    resources:
      limits: {volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 4096}
)");
  ASSERT_EQ(pod.containers.size(), 3);
  EXPECT_TRUE(pod.containers[0].is_init);
  EXPECT_THAT(pod.containers[0], Asks(Ask{1, 0, 0, 0}));
  EXPECT_EQ(pod.containers[0].mig_profile, "3g.40gb");
  EXPECT_THAT(pod.containers[1], Asks(Ask{2, 0, 0, 0}));
  EXPECT_EQ(pod.containers[1].mig_profile, "1g.10gb");
  // A container without a profile in a MIG pod: the backend picks one.
  EXPECT_THAT(pod.containers[2], Asks(Ask{1, 4096, 0, 0}));
  EXPECT_EQ(pod.containers[2].mig_profile, "");
  EXPECT_EQ(pod.mode, mig::kMode);
  EXPECT_EQ(pod.dialect, Dialect::kVolcano);
  EXPECT_EQ(pod.cpu_milli, 1000);

  // With only MIG resources, the annotations tell the dialect.
  PodRequest volcano = MustParse(
      OneContainer("nvidia.com/mig-1g.10gb: 1", "volcano.sh/vgpu-mode: mig"));
  EXPECT_EQ(volcano.dialect, Dialect::kVolcano);
}

TEST(PodParserMigTest, ConflictsNameTheResource) {
  struct Case {
    std::string limits;
    std::string annotations;
    std::vector<std::string> parts;
  };
  const Case cases[] = {
      {"nvidia.com/mig-1g.10gb: 1",
       "volcano.sh/vgpu-mode: hami-core",
       {"container main", "nvidia.com/mig-1g.10gb asks for a MIG instance",
        "\"hami-core\""}},
      {"nvidia.com/mig-1g.10gb: 1",
       "nvidia.com/vgpu-mode: mps",
       {"nvidia.com/mig-1g.10gb", "\"mps\""}},
      {"nvidia.com/mig-1g.10gb: 1, nvidia.com/gpu: 1",
       "",
       {"container main", "nvidia.com/mig-1g.10gb: cannot be combined with",
        "nvidia.com/gpu"}},
      {"nvidia.com/mig-1g.10gb: 1, volcano.sh/vgpu-number: 1",
       "",
       {"nvidia.com/mig-1g.10gb", "volcano.sh/vgpu-number"}},
      {"nvidia.com/mig-1g.10gb: 1, nvidia.com/gpumem: 1000",
       "",
       {"nvidia.com/mig-1g.10gb", "nvidia.com/gpumem"}},
      {"nvidia.com/mig-1g.10gb: 1, nvidia.com/mig-2g.20gb: 1",
       "",
       {"nvidia.com/mig-2g.20gb", "also asks nvidia.com/mig-1g.10gb"}},
      {"nvidia.com/mig-3g: 1",
       "",
       {"container main", "nvidia.com/mig-3g", "\"3g\" is not a MIG profile"}},
      {"nvidia.com/mig-: 1", "", {"nvidia.com/mig-", "\"\" is not a MIG"}},
      {"nvidia.com/mig-1g.10gb: -1", "", {"nvidia.com/mig-1g.10gb", "-1"}},
      {"nvidia.com/mig-1g.10gb: 1.5", "", {"nvidia.com/mig-1g.10gb", "1.5"}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.limits + " / " + c.annotations);
    absl::Status status =
        ParsePodRequestText(OneContainer(c.limits, c.annotations), {}).status();
    EXPECT_THAT(status, StatusIs(kInvalid, HasSubstr("pod default/a")));
    for (const std::string& part : c.parts) {
      EXPECT_THAT(status.message(), HasSubstr(part));
    }
  }
  // Two different MIG resources split over limits and requests.
  EXPECT_THAT(ParsePodRequestText(R"(
metadata: {name: a}
spec:
  containers:
  - name: main
    resources:
      limits: {nvidia.com/mig-1g.10gb: 1}
      requests: {nvidia.com/mig-2g.20gb: 1}
)",
                                  {})
                  .status(),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia.com/mig-2g.20gb"),
                                       HasSubstr("nvidia.com/mig-1g.10gb"))));
}

// --- Annotations
// --------------------------------------------------------------

absl::Status AnnotationError(const std::string& annotations) {
  return ParsePodRequestText(OneContainer("nvidia.com/gpu: 1", annotations),
                             DeviceConfig{})
      .status();
}

PodRequest WithAnnotations(const std::string& annotations) {
  return MustParse(OneContainer("nvidia.com/gpu: 1", annotations));
}

TEST(PodParserAnnotationsTest, Modes) {
  EXPECT_EQ(WithAnnotations("volcano.sh/vgpu-mode: mig").mode, mig::kMode);
  EXPECT_EQ(WithAnnotations("nvidia.com/vgpu-mode: mps").mode, mps::kMode);
  EXPECT_EQ(WithAnnotations("nvidia.com/vgpu-mode: \" hami-core \"").mode,
            hamicore::kMode);
  EXPECT_EQ(
      WithAnnotations("volcano.sh/vgpu-mode: mig, nvidia.com/vgpu-mode: mig")
          .mode,
      mig::kMode);
  EXPECT_THAT(
      AnnotationError("volcano.sh/vgpu-mode: mig, nvidia.com/vgpu-mode: mps"),
      StatusIs(kInvalid, AllOf(HasSubstr("pod default/a"),
                               HasSubstr("nvidia.com/vgpu-mode: \"mps\""),
                               HasSubstr("volcano.sh/vgpu-mode \"mig\""))));
  // HAMi's value need not be one name: a GPU serves the pod when its mode
  // occurs in it (device.go checkType).
  PodRequest listed =
      WithAnnotations("nvidia.com/vgpu-mode: \"hami-core,mig\"");
  EXPECT_EQ(listed.mode, std::nullopt);
  EXPECT_TRUE(listed.AcceptsMode(hamicore::kMode));
  EXPECT_TRUE(listed.AcceptsMode(mig::kMode));
  EXPECT_FALSE(listed.AcceptsMode(mps::kMode));
  EXPECT_FALSE(WithAnnotations("nvidia.com/vgpu-mode: V-GPU")
                   .AcceptsMode(hamicore::kMode));
  // Volcano's is one name, exactly.
  EXPECT_THAT(AnnotationError("volcano.sh/vgpu-mode: V-GPU"),
              StatusIs(kInvalid, AllOf(HasSubstr("pod default/a"),
                                       HasSubstr("volcano.sh/vgpu-mode"),
                                       HasSubstr("\"V-GPU\""))));
  // A well-formed mode no backend serves is the scheduler's to refuse
  // (SchedulerTest.UnknownModesAreRefused).
  EXPECT_EQ(WithAnnotations("nvidia.com/vgpu-mode: vgpu").mode,
            SharingMode("vgpu"));
}

TEST(PodParserAnnotationsTest, ModelAndUuidLists) {
  PodRequest pod = WithAnnotations(
      "nvidia.com/use-gputype: \" A100 ,, H100,\", "
      "nvidia.com/nouse-gputype: \"\", "
      "volcano.sh/vgpu-use-gpuuuid: \"GPU-a,GPU-b\", "
      "nvidia.com/use-gpuuuid: \"GPU-b, GPU-c\", "
      "volcano.sh/vgpu-nouse-gpuuuid: GPU-x, "
      "nvidia.com/nouse-gpuuuid: GPU-y");
  EXPECT_THAT(pod.use_models, ElementsAre("A100", "H100"));
  EXPECT_THAT(pod.avoid_models, IsEmpty());
  EXPECT_THAT(pod.use_uuids, ElementsAre("GPU-a", "GPU-b", "GPU-c"));
  EXPECT_THAT(pod.avoid_uuids, ElementsAre("GPU-x", "GPU-y"));
}

TEST(PodParserAnnotationsTest, NumaBind) {
  EXPECT_TRUE(WithAnnotations("nvidia.com/numa-bind: \"true\"").numa_bind);
  EXPECT_FALSE(WithAnnotations("nvidia.com/numa-bind: \"false\"").numa_bind);
  // HAMi's assertNuma: Go's ParseBool; what it cannot read is false
  // (device_test.go:1590 TestAssertNuma "NumaBind invalid value").
  for (const char* yes : {"1", "t", "T", "TRUE", "True"}) {
    EXPECT_TRUE(
        WithAnnotations(absl::StrCat("nvidia.com/numa-bind: \"", yes, "\""))
            .numa_bind)
        << yes;
  }
  for (const char* no : {"yes", "notabool", "0", "F", ""}) {
    EXPECT_FALSE(
        WithAnnotations(absl::StrCat("nvidia.com/numa-bind: \"", no, "\""))
            .numa_bind)
        << no;
  }
  // Unquoted, YAML makes it a bool; Kubernetes rejects that too.
  EXPECT_THAT(AnnotationError("nvidia.com/numa-bind: true"),
              StatusIs(kInvalid, AllOf(HasSubstr("nvidia.com/numa-bind"),
                                       HasSubstr("not a string"))));
}

TEST(PodParserAnnotationsTest, Policies) {
  PodRequest pod = WithAnnotations(
      "hami.io/node-scheduler-policy: binpack, "
      "hami.io/gpu-scheduler-policy: Spread");
  EXPECT_EQ(pod.node_policy, "binpack");
  EXPECT_EQ(pod.gpu_policy, "spread");
  // Any well-formed name parses; whether it is registered is the
  // scheduler's prefilter step's to say
  // (SchedulerTest.UnknownPodPoliciesTakeHamisDefaults).
  EXPECT_EQ(WithAnnotations("hami.io/gpu-scheduler-policy: topology-aware")
                .gpu_policy,
            "topology-aware");
  // HAMi's policy chains (util_test.go TestPolicyContains): blanks and
  // empty entries dropped, each name as a single one.
  EXPECT_EQ(
      WithAnnotations("hami.io/gpu-scheduler-policy: \"Mutex, spread,,numa\"")
          .gpu_policy,
      "mutex,spread,numa");
  // HAMi takes any value: a word that is no policy name is one it does not
  // know (skipped in a chain, HAMi's default alone), and a list stays a
  // list.
  EXPECT_EQ(
      WithAnnotations("hami.io/gpu-scheduler-policy: \"binpack,first fit\"")
          .gpu_policy,
      "binpack,");
  EXPECT_EQ(WithAnnotations("hami.io/gpu-scheduler-policy: \"\"").gpu_policy,
            "");
  // Weights are kept as written: the scheduler reads them.
  EXPECT_EQ(
      WithAnnotations("hami.io/device-scoring-weights: \"slot=1, core=x\"")
          .scoring_weights,
      "slot=1, core=x");
  EXPECT_EQ(WithAnnotations("hami.io/node-scheduler-policy: \"first fit\"")
                .node_policy,
            "");
}

TEST(PodParserAnnotationsTest, UnrelatedAnnotationsAreIgnored) {
  PodRequest pod = WithAnnotations(
      "prometheus.io/scrape: \"true\", hami.io/vgpu-node: node-1");
  EXPECT_THAT(pod.use_models, IsEmpty());
  EXPECT_FALSE(pod.mode.has_value());
  EXPECT_THAT(
      ParsePodRequestText("metadata: {name: a, annotations: [x]}\nspec: {}\n",
                          DeviceConfig{}),
      StatusIs(kInvalid, HasSubstr("annotations is not a mapping")));
}

}  // namespace
}  // namespace deviceshare
