// The admission webhook's decision (admission/pod_admission.h) as golden
// tables, one per outcome: mutated (the exact JSON patch), untouched (no
// patch) and refused (the exact message), in both dialects.
#include "deviceshare/admission/pod_admission.h"

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace deviceshare::admission {
namespace {

using nlohmann::json;

// A Pod `default/a` with this `spec` body (JSON object members).
json Pod(const std::string& spec) {
  return json::parse(
      R"({"apiVersion":"v1","kind":"Pod",)"
      R"("metadata":{"name":"a","namespace":"default"},"spec":{)" +
      spec + "}}");
}

struct Row {
  std::string name;
  std::string spec;  // Pod(spec)
  std::string want;  // the patch, "" for none, or the refusal message
  std::function<void(DeviceConfig&)> configure = [](DeviceConfig&) {};
};

void PrintTo(const Row& row, std::ostream* out) { *out << row.name; }

AdmissionSettings Settings(const Row& row) {
  AdmissionSettings settings;
  row.configure(settings.device);
  return settings;
}

// ---- mutated ---------------------------------------------------------------

const std::vector<Row>& MutatedRows() {
  static const auto* rows = new std::vector<Row>{
      {"HamiMemoryAloneGetsTheDefaultCount",
       R"("containers":[{"name":"main",)"
       R"("resources":{"limits":{"nvidia.com/gpumem":"3000"}}}])",
       R"([{"op":"add","path":"/spec/containers/0/resources/limits/nvidia.com~1gpu","value":"1"},
           {"op":"add","path":"/spec/schedulerName","value":"deviceshare-scheduler"}])"},
      {"HamiCountAloneIsExclusiveAndDefaultSchedulerIsTakenOver",
       R"("schedulerName":"default-scheduler","containers":[{"name":"main",)"
       R"("resources":{"limits":{"nvidia.com/gpu":"1"}}}])",
       R"([{"op":"add","path":"/spec/containers/0/resources/limits/nvidia.com~1gpucores","value":"100"},
           {"op":"replace","path":"/spec/schedulerName","value":"deviceshare-scheduler"}])"},
      {"HamiPercentage100AloneGetsCountThenAllCores",
       R"("containers":[{"name":"main",)"
       R"("resources":{"limits":{"nvidia.com/gpumem-percentage":"100"}}}])",
       R"([{"op":"add","path":"/spec/containers/0/resources/limits/nvidia.com~1gpu","value":"1"},
           {"op":"add","path":"/spec/containers/0/resources/limits/nvidia.com~1gpucores","value":"100"},
           {"op":"add","path":"/spec/schedulerName","value":"deviceshare-scheduler"}])"},
      {"HamiDefaultGpuNumAndInitContainer",
       R"("initContainers":[{"name":"warm",)"
       R"("resources":{"limits":{"nvidia.com/gpucores":"30"}}}],)"
       R"("containers":[{"name":"main","image":"busybox"}])",
       R"([{"op":"add","path":"/spec/initContainers/0/resources/limits/nvidia.com~1gpu","value":"2"},
           {"op":"add","path":"/spec/schedulerName","value":"deviceshare-scheduler"}])",
       [](DeviceConfig& c) { c.default_gpu_num = 2; }},
      {"HamiEnvRuntimeClassAndOverwriteEnv",
       R"("containers":[{"name":"main","resources":{"limits":{)"
       R"("nvidia.com/gpu":"1","nvidia.com/gpumem":"2000",)"
       R"("nvidia.com/priority":"1"}}},{"name":"side","image":"proxy"}])",
       R"([{"op":"add","path":"/spec/containers/0/env","value":[
              {"name":"CUDA_TASK_PRIORITY","value":"1"},
              {"name":"GPU_CORE_UTILIZATION_POLICY","value":"force"}]},
           {"op":"add","path":"/spec/containers/1/env","value":[
              {"name":"NVIDIA_VISIBLE_DEVICES","value":"none"}]},
           {"op":"add","path":"/spec/runtimeClassName","value":"nvidia"},
           {"op":"add","path":"/spec/schedulerName","value":"deviceshare-scheduler"}])",
       [](DeviceConfig& c) {
         c.gpu_core_policy = GpuCorePolicy::kForce;
         c.runtime_class_name = "nvidia";
         c.overwrite_env = true;
       }},
      {"HamiEnvAppendsToAnExistingListAndKeepsTheRuntimeClass",
       R"("runtimeClassName":"mine","containers":[{"name":"main",)"
       R"("env":[{"name":"A","value":"1"}],"resources":{"limits":{)"
       R"("nvidia.com/gpu":"1","nvidia.com/gpucores":"50"}}}])",
       R"([{"op":"add","path":"/spec/containers/0/env/-",
            "value":{"name":"GPU_CORE_UTILIZATION_POLICY","value":"disable"}},
           {"op":"add","path":"/spec/schedulerName","value":"deviceshare-scheduler"}])",
       [](DeviceConfig& c) {
         c.gpu_core_policy = GpuCorePolicy::kDisable;
         c.runtime_class_name = "nvidia";
       }},
      {"HamiRenamedResources",
       R"("containers":[{"name":"main",)"
       R"("resources":{"limits":{"hami.io/vmem":"1000"}}}])",
       R"([{"op":"add","path":"/spec/containers/0/resources/limits/hami.io~1vgpu","value":"1"},
           {"op":"add","path":"/spec/schedulerName","value":"deviceshare-scheduler"}])",
       [](DeviceConfig& c) {
         c.resource_count_name = "hami.io/vgpu";
         c.resource_memory_name = "hami.io/vmem";
       }},
      {"VolcanoGetsTheSchedulerOnly",
       R"("containers":[{"name":"main","resources":{"limits":{)"
       R"("volcano.sh/vgpu-number":"1","volcano.sh/vgpu-memory":"2000"}}}])",
       R"([{"op":"add","path":"/spec/schedulerName","value":"deviceshare-scheduler"}])",
       // HAMi's knobs leave a Volcano container alone.
       [](DeviceConfig& c) {
         c.gpu_core_policy = GpuCorePolicy::kForce;
         c.default_gpu_num = 3;
       }},
      {"VolcanoPercentageFromDefaultScheduler",
       R"("schedulerName":"default-scheduler","containers":[{"name":"main",)"
       R"("resources":{"limits":{"volcano.sh/vgpu-number":"2",)"
       R"("volcano.sh/vgpu-memory-percentage":"50",)"
       R"("volcano.sh/vgpu-cores":"25"}}}])",
       R"([{"op":"replace","path":"/spec/schedulerName","value":"deviceshare-scheduler"}])"},
      {"VolcanoWithASidecarUnderOverwriteEnv",
       R"("containers":[{"name":"side"},{"name":"main","resources":{)"
       R"("limits":{"volcano.sh/vgpu-number":"1"}}}])",
       R"([{"op":"add","path":"/spec/containers/0/env","value":[
              {"name":"NVIDIA_VISIBLE_DEVICES","value":"none"}]},
           {"op":"add","path":"/spec/schedulerName","value":"deviceshare-scheduler"}])",
       [](DeviceConfig& c) { c.overwrite_env = true; }},
  };
  return *rows;
}

class MutatedTest : public ::testing::TestWithParam<Row> {};

TEST_P(MutatedTest, PatchIsExact) {
  const Row& row = GetParam();
  const json pod = Pod(row.spec);
  const PodAdmission verdict = AdmitPod(pod, Settings(row));
  ASSERT_TRUE(verdict.allowed) << verdict.message;
  EXPECT_EQ(verdict.patch, json::parse(row.want)) << verdict.patch.dump();
  // The patch applies to the pod as sent.
  EXPECT_NO_THROW(pod.patch(verdict.patch));
}

INSTANTIATE_TEST_SUITE_P(Golden, MutatedTest,
                         ::testing::ValuesIn(MutatedRows()),
                         [](const ::testing::TestParamInfo<Row>& info) {
                           return info.param.name;
                         });

// ---- untouched -------------------------------------------------------------

const std::vector<Row>& UntouchedRows() {
  static const auto* rows = new std::vector<Row>{
      {"NoGpuResource",
       R"("containers":[{"name":"web","resources":{"limits":{"cpu":"1"}}}])",
       "", [](DeviceConfig& c) { c.overwrite_env = true; }},
      {"HamiPodOfAnotherScheduler",
       R"("schedulerName":"volcano","containers":[{"name":"main",)"
       R"("resources":{"limits":{"nvidia.com/gpumem-percentage":"150"}}}])",
       ""},
      {"VolcanoPodOfAnotherScheduler",
       R"("schedulerName":"volcano","nodeName":"n1","containers":[{)"
       R"("name":"main","resources":{"limits":{"volcano.sh/vgpu-number":"1"}}}])",
       ""},
      {"HamiPodAlreadyComplete",
       R"("schedulerName":"deviceshare-scheduler","containers":[{)"
       R"("name":"main","resources":{"limits":{"nvidia.com/gpu":"2",)"
       R"("nvidia.com/gpucores":"50"}}}])",
       ""},
      {"VolcanoPodAlreadyOurs",
       R"("schedulerName":"gpu-share","containers":[{"name":"main",)"
       R"("resources":{"requests":{"volcano.sh/vgpu-memory":"1024"},)"
       R"("limits":{"volcano.sh/vgpu-memory":"1024"}}}])",
       ""},
  };
  return *rows;
}

class UntouchedTest : public ::testing::TestWithParam<Row> {};

TEST_P(UntouchedTest, AllowedWithoutPatch) {
  const Row& row = GetParam();
  AdmissionSettings settings = Settings(row);
  if (row.name == "VolcanoPodAlreadyOurs")
    settings.scheduler_name = "gpu-share";
  const PodAdmission verdict = AdmitPod(Pod(row.spec), settings);
  EXPECT_TRUE(verdict.allowed) << verdict.message;
  EXPECT_EQ(verdict.patch, json::array());
}

INSTANTIATE_TEST_SUITE_P(Golden, UntouchedTest,
                         ::testing::ValuesIn(UntouchedRows()),
                         [](const ::testing::TestParamInfo<Row>& info) {
                           return info.param.name;
                         });

// ---- refused ---------------------------------------------------------------

const std::vector<Row>& RefusedRows() {
  static const auto* rows = new std::vector<Row>{
      {"HamiPercentageAbove100",
       R"("containers":[{"name":"side"},{"name":"main","resources":{)"
       R"("limits":{"nvidia.com/gpumem-percentage":"150"}}}])",
       R"(spec.containers[1].resources.limits["nvidia.com/gpumem-percentage"]: )"
       R"(150 is outside 0..100)"},
      {"HamiNegativePercentageInRequests",
       R"("initContainers":[{"name":"init","resources":{)"
       R"("requests":{"nvidia.com/gpumem-percentage":"-5"}}}],)"
       R"("containers":[{"name":"main"}])",
       R"(spec.initContainers[0].resources.requests["nvidia.com/gpumem-percentage"]: )"
       R"(-5 is outside 0..100)"},
      {"HamiPrivileged",
       R"("containers":[{"name":"main","securityContext":{"privileged":true},)"
       R"("resources":{"limits":{"nvidia.com/gpu":"1"}}}])",
       "spec.containers[0].securityContext.privileged: true is refused in a "
       "pod that asks for GPU shares (a privileged container sees every GPU "
       "of its node)"},
      {"HamiNodeNameSet",
       R"("nodeName":"gpu-1","containers":[{"name":"main",)"
       R"("resources":{"limits":{"nvidia.com/gpumem":"1000"}}}])",
       "spec.nodeName: \"gpu-1\" is set; a pod that asks for GPU shares must "
       "be placed by deviceshare-scheduler, which accounts for its GPUs"},
      {"HamiNegativeMemoryTheParserRefuses",
       R"("containers":[{"name":"main",)"
       R"("resources":{"limits":{"nvidia.com/gpumem":"-3"}}}])",
       "pod default/a container main: nvidia.com/gpumem: \"-3\" is negative"},
      {"HamiPriorityNotANumber",
       R"("containers":[{"name":"main","resources":{"limits":{)"
       R"("nvidia.com/gpu":"1","nvidia.com/priority":"high"}}}])",
       R"(spec.containers[0].resources.limits["nvidia.com/priority"]: )"
       R"("high" is not a quantity)"},
      {"VolcanoCoresAbove100",
       R"("containers":[{"name":"main","resources":{"limits":{)"
       R"("volcano.sh/vgpu-number":"1","volcano.sh/vgpu-cores":"120"}}}])",
       R"(spec.containers[0].resources.limits["volcano.sh/vgpu-cores"]: )"
       R"(120 is outside 0..100)"},
      {"VolcanoPrivilegedInitContainer",
       R"("initContainers":[{"name":"init",)"
       R"("securityContext":{"privileged":true}}],)"
       R"("containers":[{"name":"main","resources":{"limits":{)"
       R"("volcano.sh/vgpu-number":"1"}}}])",
       "spec.initContainers[0].securityContext.privileged: true is refused "
       "in a pod that asks for GPU shares (a privileged container sees every "
       "GPU of its node)"},
      {"VolcanoNodeNameSet",
       R"("nodeName":"gpu-2","containers":[{"name":"main","resources":{)"
       R"("limits":{"volcano.sh/vgpu-memory":"1000"}}}])",
       "spec.nodeName: \"gpu-2\" is set; a pod that asks for GPU shares must "
       "be placed by deviceshare-scheduler, which accounts for its GPUs"},
      {"VolcanoUnknownResourceTheParserRefuses",
       R"("containers":[{"name":"main","resources":{"limits":{)"
       R"("volcano.sh/vgpu-number":"1","volcano.sh/vgpu-memroy":"10"}}}])",
       "pod default/a container main: volcano.sh/vgpu-memroy: unknown Volcano "
       "GPU resource (want one of volcano.sh/vgpu-number, "
       "volcano.sh/vgpu-memory, volcano.sh/vgpu-memory-percentage, "
       "volcano.sh/vgpu-cores)"},
  };
  return *rows;
}

class RefusedTest : public ::testing::TestWithParam<Row> {};

TEST_P(RefusedTest, MessageIsExact) {
  const Row& row = GetParam();
  const PodAdmission verdict = AdmitPod(Pod(row.spec), Settings(row));
  EXPECT_FALSE(verdict.allowed);
  EXPECT_EQ(verdict.patch, json::array());
  EXPECT_EQ(verdict.message, row.want);
}

INSTANTIATE_TEST_SUITE_P(Golden, RefusedTest,
                         ::testing::ValuesIn(RefusedRows()),
                         [](const ::testing::TestParamInfo<Row>& info) {
                           return info.param.name;
                         });

// ---- shapes ----------------------------------------------------------------

TEST(PodAdmissionTest, WrongShapesAreRefusedNamingTheField) {
  const AdmissionSettings settings;
  EXPECT_EQ(AdmitPod(json("pod"), settings).message,
            "pod: \"pod\" is not an object");
  EXPECT_EQ(AdmitPod(json::parse(R"({"metadata":{}})"), settings).message,
            "spec: missing or not an object");
  EXPECT_EQ(AdmitPod(Pod(R"("containers":{})"), settings).message,
            "spec.containers: {} is not a list");
  EXPECT_EQ(AdmitPod(Pod(R"("containers":[{"name":"a"},7])"), settings).message,
            "spec.containers[1]: 7 is not an object");
  EXPECT_EQ(
      AdmitPod(Pod(R"("containers":[{"resources":{"limits":[1]}}])"), settings)
          .message,
      "spec.containers[0].resources.limits: [1] is not an object");
  EXPECT_EQ(
      AdmitPod(Pod(R"("containers":[{"resources":{"limits":{)"
                   R"("nvidia.com/gpumem-percentage":true}}}])"),
               settings)
          .message,
      R"(spec.containers[0].resources.limits["nvidia.com/gpumem-percentage"]: )"
      R"(true is not a quantity)");
}

// A pod being created by a controller has no name yet: the parser check
// still runs.
TEST(PodAdmissionTest, PodWithGenerateNameIsAdmitted) {
  json pod = Pod(R"("containers":[{"name":"main","resources":{"limits":{)"
                 R"("nvidia.com/gpu":"1","nvidia.com/gpumem":"1000"}}}])");
  pod["metadata"] = {{"generateName", "job-"}};
  const PodAdmission verdict = AdmitPod(pod, AdmissionSettings{});
  EXPECT_TRUE(verdict.allowed) << verdict.message;
  EXPECT_EQ(verdict.patch,
            json::parse(R"([{"op":"add","path":"/spec/schedulerName",)"
                        R"("value":"deviceshare-scheduler"}])"));
}

}  // namespace
}  // namespace deviceshare::admission
