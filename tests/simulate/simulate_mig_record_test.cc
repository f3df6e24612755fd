// Never book a MIG slice twice: a running pod whose MIG record does not
// read is still charged, and the slices it may hold are never handed to
// another pod. Property tests over mutated records of both dialects, run
// through the whole simulate pipeline (the same reading serve does when it
// starts): HAMi's `hami.io/vgpu-mig-allocations` JSON and Volcano's MIG id
// `GPU-x[group-position]` in `volcano.sh/vgpu-ids-new`.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "deviceshare/codec/hami_codec.h"
#include "deviceshare/codec/volcano_codec.h"
#include "deviceshare/mig/mig_catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "simulate_fixtures.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::Docs;
using ::deviceshare::testing::Gpus;
using ::deviceshare::testing::PlacementOf;
using ::deviceshare::testing::PodYaml;
using ::deviceshare::testing::ShortCluster;
using ::deviceshare::testing::ShortNode;
using ::deviceshare::testing::SimulateJson;
using Json = nlohmann::ordered_json;

constexpr int kProbes = 7;  // one per 1g slice of an A100

// The slices of the running pod's instance in HAMi's record below: a
// 2g.10gb at start 0 of an A100-40GB (memory slices 0 and 1).
constexpr char kHamiRecord[] = "GPU-n1-0,NVIDIA,10240,28:;";
constexpr char kHamiMig[] =
    R"([{"containerIndex":0,"deviceIndex":0,"gpuUUID":"GPU-n1-0",)"
    R"("profile":"2g.10gb","placement":{"start":0,"size":2}}])";

const mig::MigModel& A100() {
  return *mig::MigCatalog::Builtin().FindModel("A100-40GB");
}

// The memory slices HAMi's record and the MIG JSON `mig` hold on GPU-n1-0
// as deviceshare reads them: each instance the JSON places there at a
// legal start of its profile (with a size that matches it), and the whole
// GPU for any device that is left without one, as when the JSON does not
// read at all.
uint32_t HamiHeld(const std::string& mig) {
  const uint32_t whole = A100().FullMask();
  absl::StatusOr<std::vector<std::vector<DeviceGrant>>> entries =
      DecodeHamiAllocation(kHamiRecord);
  if (!entries.ok() || !MergeHamiMigAllocations(mig, *entries).ok()) {
    return whole;
  }
  uint32_t held = 0;
  for (const std::vector<DeviceGrant>& container : *entries) {
    for (const DeviceGrant& grant : container) {
      if (grant.uuid != "GPU-n1-0") continue;
      const mig::MigProfile* profile = A100().FindProfile(grant.mig.profile);
      if (profile == nullptr || !profile->IsLegalStart(grant.mig.start) ||
          (grant.mig.size != 0 && grant.mig.size != profile->memory_slices)) {
        return whole;
      }
      held |= profile->MaskAt(grant.mig.start);
    }
  }
  return held;
}

// Runs a running HAMi pod with MIG JSON `mig` beside kProbes 1g.5gb pods;
// checks that the running pod is charged and that no probe is handed a
// slice it holds.
void ExpectNoSliceTwice(const std::string& mig) {
  SCOPED_TRACE(absl::StrCat("hami.io/vgpu-mig-allocations: ", mig));
  nlohmann::json annotations = {{"hami.io/vgpu-devices-allocated", kHamiRecord},
                                {"hami.io/vgpu-mig-allocations", mig}};
  const std::string running = absl::StrCat(
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: running\n"
      "  namespace: default\n  annotations: ",
      annotations.dump(),
      "\nspec:\n  nodeName: n1\n  containers:\n"
      "  - name: main\n    resources:\n"
      "      limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 10000}\n");
  std::vector<std::string> docs = {running};
  for (int i = 0; i < kProbes; ++i) {
    docs.push_back(PodYaml(absl::StrCat("probe", i),
                           "nvidia.com/gpu: 1, nvidia.com/gpumem: 4000",
                           "nvidia.com/vgpu-mode: mig"));
  }
  auto report = SimulateJson(
      ShortCluster({ShortNode(
          "n1", Gpus("n1", 1, 40960, "NVIDIA A100-SXM4-40GB", "mode: mig"))}),
      Docs(docs), "scheduler: {modes: [hami-core, mig]}\n");
  ASSERT_OK(report);
  EXPECT_TRUE((*report)["unaccounted"].empty()) << report->dump(1);
  const uint32_t held = HamiHeld(mig);
  const mig::MigProfile& one = *A100().FindProfile("1g.5gb");
  uint32_t given = 0;
  for (int i = 0; i < kProbes; ++i) {
    const Json placement = PlacementOf(*report, absl::StrCat("probe", i));
    if (placement.is_null()) continue;
    const Json& device = placement["containers"][0]["devices"][0];
    ASSERT_EQ(device["mig_profile"], "1g.5gb") << report->dump(1);
    const uint32_t mask = one.MaskAt(device["mig_start"].get<int32_t>());
    EXPECT_EQ(mask & held, 0u) << "probe" << i << " took a held slice";
    EXPECT_EQ(mask & given, 0u) << "probe" << i << " took a given slice";
    given |= mask;
  }
}

// Mutants of a JSON document: the value at each path replaced by values of
// every kind, and each member removed.
void Mutate(const nlohmann::json& doc, nlohmann::json& node,
            std::vector<std::string>& out) {
  static const nlohmann::json kValues[] = {nullptr,
                                           true,
                                           -1,
                                           0,
                                           1,
                                           3,
                                           7,
                                           8,
                                           2147483648LL,
                                           1.5,
                                           "0",
                                           "x",
                                           "",
                                           nlohmann::json::array(),
                                           nlohmann::json::object()};
  if (node.is_object()) {
    std::vector<std::string> keys;
    for (const auto& [key, value] : node.items()) keys.push_back(key);
    for (const std::string& key : keys) {
      nlohmann::json saved = node[key];
      node.erase(key);
      out.push_back(doc.dump());
      node[key] = saved;
      for (const nlohmann::json& value : kValues) {
        node[key] = value;
        out.push_back(doc.dump());
      }
      node[key] = saved;
      Mutate(doc, node[key], out);
    }
  } else if (node.is_array()) {
    for (size_t i = 0; i < node.size(); ++i) Mutate(doc, node[i], out);
  }
}

TEST(MigRecordPropertyTest, HamiMigAllocationsNeverBookASliceTwice) {
  std::vector<std::string> mutants = {kHamiMig};
  const std::string text = kHamiMig;
  for (size_t cut = 0; cut < text.size(); ++cut) {
    mutants.push_back(text.substr(0, cut));
  }
  nlohmann::json doc = nlohmann::json::parse(text);
  Mutate(doc, doc, mutants);
  const nlohmann::json entry = doc[0];
  for (const nlohmann::json& whole :
       {nlohmann::json(entry), nlohmann::json::array(),
        nlohmann::json::array({entry, entry}), nlohmann::json::array({nullptr}),
        nlohmann::json::array({nlohmann::json::array()})}) {
    mutants.push_back(whole.dump());
  }
  for (const std::string& mutant : mutants) {
    ExpectNoSliceTwice(mutant);
    if (::testing::Test::HasFatalFailure()) return;
  }
}

// The first mutant the old reading got wrong, as a named case: a running
// 2g.10gb at start 0 whose record's placement is not an object was left
// out whole, and the next pods were handed slices 0 and 1 again.
TEST(MigRecordPropertyTest, AMalformedHamiRecordHoldsItsGpu) {
  EXPECT_EQ(HamiHeld(absl::StrReplaceAll(
                kHamiMig, {{R"({"start":0,"size":2})", "[0,2]"}})),
            A100().FullMask());
  ExpectNoSliceTwice(
      absl::StrReplaceAll(kHamiMig, {{R"({"start":0,"size":2})", "[0,2]"}}));
}

constexpr char kVolcanoConfig[] =
    R"(scheduler: {modes: [hami-core, mig], migSearch: configmap}
nvidia:
  knownMigGeometries:
  - models: ["A100-SXM4-80GB"]
    allowedGeometries:
    - group: group1
      geometries: [{name: 1g.10gb, memory: 9728, count: 7}]
    - group: group2
      geometries: [{name: 2g.20gb, memory: 19968, count: 3},
                   {name: 1g.10gb, memory: 9728, count: 1}]
)";

// Whether Volcano's record `record` reads as one MIG grant on GPU-a with a
// slot (group and position, or profile and start) that names an instance
// of the configuration above.
bool VolcanoNamesAnInstance(const std::string& record) {
  absl::StatusOr<std::vector<std::vector<DeviceGrant>>> entries =
      DecodeVolcanoAllocation(record);
  if (!entries.ok() || entries->size() != 1 || (*entries)[0].size() != 1) {
    return false;
  }
  const MigSlot& slot = (*entries)[0][0].mig;
  if (slot.group == "group1") return slot.position >= 0 && slot.position < 7;
  if (slot.group == "group2") return slot.position >= 0 && slot.position < 4;
  const mig::MigModel& a100 =
      *mig::MigCatalog::Builtin().FindModel("A100-80GB");
  const mig::MigProfile* profile = a100.FindProfile(slot.profile);
  return slot.group.empty() && profile != nullptr &&
         profile->IsLegalStart(slot.start);
}

TEST(MigRecordPropertyTest, VolcanoMigIdsNeverBookASliceTwice) {
  const std::string valid = "GPU-a[group1-0],NVIDIA,10,0:";
  std::vector<std::string> mutants = {valid};
  // Cut anywhere after the bracket opens: the id still names GPU-a.
  for (size_t cut = valid.find('[') + 1; cut < valid.size(); ++cut) {
    mutants.push_back(valid.substr(0, cut));
  }
  for (const char* inside :
       {"group1-7", "group1-", "group1", "-0", "group9-0", "", "group1-x",
        "group1--1", "group1-0][x", "1g.10gb-0", "2g.20gb-1", "9g.90gb-0",
        "group2-0", "group2-3", "group2-4", "group1-99999999999", "[",
        "group1-0-0"}) {
    mutants.push_back(absl::StrCat("GPU-a[", inside, "],NVIDIA,10,0:"));
  }
  for (const char* fields : {",NVIDIA", ",NVIDIA,x,0", ",NVIDIA,10,-1",
                             ",NVIDIA,-10,0", ",NVIDIA,10,x", ""}) {
    mutants.push_back(absl::StrCat("GPU-a[group1-0]", fields, ":"));
  }
  const std::string ask =
      "volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 10";
  const std::string node =
      "apiVersion: v1\nkind: Node\nmetadata:\n  name: n\n  annotations:\n"
      "    volcano.sh/node-vgpu-register: "
      "'GPU-a,10,81920,NVIDIA-NVIDIA A100-SXM4-80GB,true,mig:'\n";
  for (const std::string& record : mutants) {
    SCOPED_TRACE(absl::StrCat("volcano.sh/vgpu-ids-new: ", record));
    nlohmann::json annotations = {{"volcano.sh/vgpu-mode", "mig"},
                                  {"volcano.sh/vgpu-ids-new", record}};
    const std::string running = absl::StrCat(
        "apiVersion: v1\nkind: Pod\nmetadata:\n  name: running\n"
        "  namespace: default\n  annotations: ",
        annotations.dump(),
        "\nspec:\n  nodeName: n\n  containers:\n  - name: main\n"
        "    resources:\n      limits: {",
        ask, "}\n");
    std::vector<std::string> docs = {running};
    for (int i = 0; i < kProbes; ++i) {
      docs.push_back(
          PodYaml(absl::StrCat("probe", i), ask, "volcano.sh/vgpu-mode: mig"));
    }
    auto report = SimulateJson(node, Docs(docs), kVolcanoConfig);
    ASSERT_OK(report);
    EXPECT_TRUE((*report)["unaccounted"].empty()) << report->dump(1);
    int placed = 0;
    for (int i = 0; i < kProbes; ++i) {
      placed += !PlacementOf(*report, absl::StrCat("probe", i)).is_null();
    }
    if (VolcanoNamesAnInstance(record)) {
      // One instance is the running pod's: at most six are left.
      EXPECT_LE(placed, kProbes - 1) << report->dump(1);
    } else {
      // Its instance could be any: the GPU is held whole.
      EXPECT_EQ(placed, 0) << report->dump(1);
    }
  }
}

}  // namespace
}  // namespace deviceshare
