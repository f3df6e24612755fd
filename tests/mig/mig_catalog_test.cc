#include "deviceshare/mig/mig_catalog.h"

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace deviceshare::mig {
namespace {

using ::deviceshare::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const MigModel& Model(absl::string_view name) {
  const MigModel* model = MigCatalog::Builtin().FindModel(name);
  EXPECT_NE(model, nullptr) << name;
  return *model;
}

TEST(MigCatalogTest, BuiltinHasTheExpectedModels) {
  std::vector<std::string> names;
  for (const MigModel& m : MigCatalog::Builtin().models()) {
    names.push_back(m.name);
  }
  EXPECT_THAT(names, ElementsAre("A30-24GB", "A100-40GB", "A100-80GB",
                                 "H100-80GB", "H100-PCIe-80GB", "H100-NVL-94GB",
                                 "H100-96GB", "H200-141GB"));
}

TEST(MigCatalogTest, H100HoldsTheMeasuredNvmlValues) {
  const MigModel& h100 = Model("H100-80GB");
  EXPECT_EQ(h100.memory_slices, 8);
  EXPECT_EQ(h100.compute_slices, 7);
  EXPECT_THAT(h100.pci_device_ids, ElementsAre(0x2330u));
  struct Row {
    const char* name;
    int32_t id, memory_slices, compute_slices;
    int64_t mib;
    int32_t sm;
    uint32_t starts;
    int32_t max;
    bool variant;
  };
  const Row rows[] = {
      {"1g.10gb", 19, 1, 1, 9984, 16, 0x7F, 7, false},
      {"1g.10gb+me", 20, 1, 1, 9984, 16, 0x7F, 1, true},
      {"1g.20gb", 15, 2, 1, 20096, 26, 0x55, 4, false},
      {"2g.20gb", 14, 2, 2, 20096, 32, 0x15, 3, false},
      {"3g.40gb", 9, 4, 3, 40448, 60, 0x11, 2, false},
      {"4g.40gb", 5, 4, 4, 40448, 64, 0x01, 1, false},
      {"7g.80gb", 0, 8, 7, 81152, 132, 0x01, 1, false},
  };
  ASSERT_EQ(h100.profiles.size(), std::size(rows));
  for (size_t i = 0; i < std::size(rows); ++i) {
    const MigProfile& p = h100.profiles[i];
    SCOPED_TRACE(p.name);
    EXPECT_EQ(p.name, rows[i].name);
    EXPECT_EQ(p.id, rows[i].id);
    EXPECT_EQ(p.memory_slices, rows[i].memory_slices);
    EXPECT_EQ(p.compute_slices, rows[i].compute_slices);
    EXPECT_EQ(p.memory_mib, rows[i].mib);
    EXPECT_EQ(p.sm_count, rows[i].sm);
    EXPECT_EQ(p.legal_starts, rows[i].starts);
    EXPECT_EQ(p.max_instances, rows[i].max);
    EXPECT_EQ(p.variant, rows[i].variant);
  }
}

TEST(MigCatalogTest, A30HasFourSlicesAndItsOwnIds) {
  const MigModel& a30 = Model("A30-24GB");
  EXPECT_EQ(a30.memory_slices, 4);
  EXPECT_EQ(a30.compute_slices, 4);
  // Id 14 is 1g on A30 but 2g on A100: ids are per model.
  EXPECT_EQ(a30.FindProfile("1g.6gb")->id, 14);
  EXPECT_EQ(Model("A100-80GB").FindProfile("2g.20gb")->id, 14);
  EXPECT_EQ(a30.FindProfile("4g.24gb")->legal_starts, 0x1u);
  EXPECT_EQ(a30.FindProfile("2g.12gb")->legal_starts, 0x5u);
}

TEST(MigCatalogTest, EveryBuiltinProfileKnowsItsMemory) {
  for (const MigModel& model : MigCatalog::Builtin().models()) {
    for (const MigProfile& p : model.profiles) {
      EXPECT_GT(p.memory_mib, 0) << model.name << " " << p.name;
      EXPECT_GE(p.sm_count, 0) << model.name << " " << p.name;
    }
    // Memory grows with the profile order within one memory-slice count.
    for (size_t i = 1; i < model.profiles.size(); ++i) {
      EXPECT_LE(model.profiles[i - 1].memory_slices,
                model.profiles[i].memory_slices)
          << model.name;
    }
  }
}

TEST(MigCatalogTest, MaskAtCoversTheInstanceSlices) {
  const MigModel& h100 = Model("H100-80GB");
  EXPECT_EQ(h100.FindProfile("1g.10gb")->MaskAt(6), 0x40u);
  EXPECT_EQ(h100.FindProfile("3g.40gb")->MaskAt(4), 0xF0u);
  EXPECT_EQ(h100.FindProfile("7g.80gb")->MaskAt(0), 0xFFu);
  EXPECT_EQ(h100.FindProfile("1g.20gb")->MaskAt(2), 0x0Cu);
  EXPECT_EQ(h100.FindProfile("1g.10gb")->MaskAt(-1), 0u);
  EXPECT_EQ(h100.FullMask(), 0xFFu);
}

TEST(MigCatalogTest, FindProfileIgnoresCaseAndNvmlPrefix) {
  const MigModel& h100 = Model("H100-80GB");
  EXPECT_EQ(h100.ProfileIndex("1g.10gb"), 0);
  EXPECT_EQ(h100.ProfileIndex("MIG 1G.10GB+ME"), 1);
  EXPECT_EQ(h100.ProfileIndex("7g.79gb"), -1);
  EXPECT_EQ(h100.FindProfile("5g.50gb"), nullptr);
  EXPECT_EQ(MigCatalog::Builtin().FindModel("h100-80gb"), &h100);
}

Gpu GpuNamed(const std::string& model, uint32_t pci = 0) {
  Gpu gpu;
  gpu.model = model;
  gpu.pci_device_id = pci;
  return gpu;
}

std::string MatchName(const Gpu& gpu) {
  const MigModel* model = MigCatalog::Builtin().Match(gpu);
  return model == nullptr ? "<none>" : model->name;
}

TEST(MigCatalogTest, MatchesNvidiaSmiAndRegistrationSpellings) {
  const std::pair<const char*, const char*> cases[] = {
      {"NVIDIA A100-SXM4-80GB", "A100-80GB"},
      {"NVIDIA A100 80GB PCIe", "A100-80GB"},
      {"NVIDIA-NVIDIA A100-SXM4-80GB", "A100-80GB"},
      {"A100-80GB-PCIe", "A100-80GB"},  // HAMi config spelling
      {"NVIDIA A100-SXM4-40GB", "A100-40GB"},
      {"NVIDIA A100-PCIE-40GB", "A100-40GB"},
      {"NVIDIA-NVIDIA A100-PCIE-40GB", "A100-40GB"},
      {"NVIDIA H100 80GB HBM3", "H100-80GB"},
      {"NVIDIA-H100-SXM5-80GB", "H100-80GB"},
      {"NVIDIA H100 PCIe", "H100-PCIe-80GB"},
      {"NVIDIA H100 NVL", "H100-NVL-94GB"},
      {"NVIDIA-NVIDIA H100 NVL", "H100-NVL-94GB"},
      {"NVIDIA H200", "H200-141GB"},
      {"NVIDIA H200 NVL", "H200-141GB"},
      {"NVIDIA GH200 480GB", "H100-96GB"},
      {"NVIDIA A30", "A30-24GB"},
      {"NVIDIA-NVIDIA A30", "A30-24GB"},
      {"NVIDIA A10", "<none>"},  // not A100, not A30
      {"NVIDIA L4", "<none>"},
      {"NVIDIA B200", "<none>"},
      {"", "<none>"},
  };
  for (const auto& [model, want] : cases) {
    EXPECT_EQ(MatchName(GpuNamed(model)), want) << model;
  }
}

TEST(MigCatalogTest, PciDeviceIdWinsOverTheName) {
  EXPECT_EQ(MatchName(GpuNamed("NVIDIA H100 PCIe", 0x2330)), "H100-80GB");
  // mig-parted's form: device << 16 | NVIDIA's vendor id.
  EXPECT_EQ(MatchName(GpuNamed("", 0x233010DE)), "H100-80GB");
  EXPECT_EQ(MatchName(GpuNamed("", 0x20B7)), "A30-24GB");
  // An unknown id falls back to the name.
  EXPECT_EQ(MatchName(GpuNamed("NVIDIA A30", 0x1234)), "A30-24GB");
}

TEST(MigCatalogTest, MostSpecificPatternWins) {
  MigModel generic;
  generic.name = "Generic";
  generic.model_names = {"H100"};
  generic.memory_slices = 1;
  generic.compute_slices = 1;
  MigProfile p;
  p.name = "1g.1gb";
  p.memory_slices = 1;
  p.compute_slices = 1;
  p.memory_mib = 1024;
  p.legal_starts = 1;
  p.max_instances = 1;
  generic.profiles = {p};
  MigModel nvl = generic;
  nvl.name = "Nvl";
  nvl.model_names = {"H100 NVL"};
  MigModel tie = generic;
  tie.name = "Tie";
  tie.model_names = {"X100"};
  absl::StatusOr<MigCatalog> catalog =
      MigCatalog::FromModels({generic, nvl, tie});
  ASSERT_OK(catalog);
  EXPECT_EQ(catalog->Match(GpuNamed("NVIDIA H100 NVL"))->name, "Nvl");
  EXPECT_EQ(catalog->Match(GpuNamed("NVIDIA H100 PCIe"))->name, "Generic");
  // Equal words and characters: the earlier model.
  EXPECT_EQ(catalog->Match(GpuNamed("H100 X100"))->name, "Generic");
}

TEST(MigCatalogTest, ToYamlRoundTrips) {
  const MigCatalog& builtin = MigCatalog::Builtin();
  const std::string yaml = builtin.ToYaml();
  absl::StatusOr<MigCatalog> back = MigCatalog::FromText(yaml);
  ASSERT_OK(back);
  EXPECT_EQ(*back, builtin);
  EXPECT_EQ(back->ToYaml(), yaml);
  EXPECT_THAT(yaml, HasSubstr("pciDeviceIds: [\"0x2330\"]"));
}

constexpr char kSmallJson[] = R"({"models": [{
  "name": "Small", "pciDeviceIds": ["0x233010DE", 8496],
  "modelNames": ["Small GPU"], "memorySlices": 4, "computeSlices": 4,
  "profiles": [
    {"name": "MIG 2g.12gb", "id": 5, "memorySlices": 2, "computeSlices": 2,
     "memoryMiB": 11968, "starts": [2, 0], "maxInstances": 2},
    {"name": "1g.6gb+me", "id": 21, "memorySlices": 1, "computeSlices": 1,
     "memoryMiB": 5952, "smCount": 14, "starts": [0, 1, 2, 3],
     "maxInstances": 1},
    {"name": "1g.6gb", "id": 14, "memorySlices": 1, "computeSlices": 1,
     "memoryMiB": 5952, "smCount": 14, "starts": [0, 1, 2, 3],
     "maxInstances": 4}
  ]}]})";

TEST(MigCatalogTest, FromTextReadsJsonSortsAndCanonicalises) {
  absl::StatusOr<MigCatalog> catalog = MigCatalog::FromText(kSmallJson);
  ASSERT_OK(catalog);
  const MigModel& m = catalog->models()[0];
  EXPECT_THAT(m.pci_device_ids, ElementsAre(0x2330u, 0x2130u));
  ASSERT_EQ(m.profiles.size(), 3u);
  EXPECT_EQ(m.profiles[0].name, "1g.6gb");
  EXPECT_FALSE(m.profiles[0].variant);
  EXPECT_EQ(m.profiles[1].name, "1g.6gb+me");
  EXPECT_TRUE(m.profiles[1].variant);
  EXPECT_EQ(m.profiles[2].name, "2g.12gb");
  EXPECT_EQ(m.profiles[2].legal_starts, 0x5u);
  EXPECT_EQ(m.profiles[2].sm_count, 0);  // omitted = unknown
  EXPECT_EQ(catalog->Match(GpuNamed("ACME Small GPU"))->name, "Small");
}

std::string ProfileYaml(const std::string& extra_or_override) {
  return R"(models:
- name: T
  memorySlices: 8
  computeSlices: 7
  profiles:
  - )" + extra_or_override +
         "\n";
}

TEST(MigCatalogTest, FromTextErrorsNameThePathAndValue) {
  const std::string ok_profile =
      "{name: 1g.10gb, id: 19, memorySlices: 1, computeSlices: 1, "
      "memoryMiB: 9984, starts: [0, 1], maxInstances: 7}";
  ASSERT_OK(MigCatalog::FromText(ProfileYaml(ok_profile)));

  const std::pair<std::string, std::string> cases[] = {
      {ProfileYaml("{name: 1g.10gb, id: 19, memorySlices: 1, computeSlices: "
                   "1, memoryMiB: 9984, starts: [0, 9], maxInstances: 7}"),
       "models[0].profiles[0].starts[1]: 9 is outside 0..7"},
      {ProfileYaml("{name: 3g.40gb, id: 9, memorySlices: 4, computeSlices: "
                   "3, memoryMiB: 40448, starts: [0, 5], maxInstances: 2}"),
       "models[0].profiles[0].starts[1]: 5 is outside 0..4"},
      {ProfileYaml("{name: 1g.10gb, id: 19, memorySlices: 1, computeSlices: "
                   "1, memoryMiB: 9984, starts: [1, 1], maxInstances: 7}"),
       "models[0].profiles[0].starts[1]: 1 appears twice"},
      {ProfileYaml("{name: 1g.10gb, id: 19, memorySlices: 0, computeSlices: "
                   "1, memoryMiB: 9984, starts: [0], maxInstances: 7}"),
       "models[0].profiles[0].memorySlices: 0 is outside 1..8"},
      {ProfileYaml("{name: 1g.10gb, id: 19, memorySlices: 1, computeSlices: "
                   "1, starts: [0], maxInstances: 7}"),
       "models[0].profiles[0].memoryMiB: missing"},
      {ProfileYaml("{name: 1g.10gb, id: 19, memorySlices: 1, computeSlices: "
                   "1, memoryMiB: 9984, starts: [], maxInstances: 7}"),
       "models[0].profiles[0].starts: is empty"},
      {ProfileYaml(ok_profile.substr(0, ok_profile.size() - 1) +
                   ", color: red}"),
       "models[0].profiles[0].color: unknown key"},
      {ProfileYaml("{name: big, id: 19, memorySlices: 1, computeSlices: 1, "
                   "memoryMiB: 9984, starts: [0], maxInstances: 7}"),
       "models[0].profiles[0].name: \"big\" is not a MIG profile name"},
      {ProfileYaml("{name: 2g.10gb, id: 19, memorySlices: 1, computeSlices: "
                   "1, memoryMiB: 9984, starts: [0], maxInstances: 7}"),
       "models[0].profiles[0].computeSlices: 1 does not match the name "
       "\"2g.10gb\" (2g)"},
      {ProfileYaml("{name: 1g.10gb, id: 19, memorySlices: 1, computeSlices: "
                   "1, memoryMiB: \"9984\", starts: [0], maxInstances: 7}"),
       "models[0].profiles[0].memoryMiB: \"9984\" is not a number"},
      {ProfileYaml(ok_profile + "\n  - " + ok_profile),
       "models[0].profiles[1].name: \"1g.10gb\" repeats "
       "models[0].profiles[0]"},
      {ProfileYaml(ok_profile +
                   "\n  - {name: 2g.20gb, id: 19, memorySlices: 2, "
                   "computeSlices: 2, memoryMiB: 20096, starts: [0], "
                   "maxInstances: 3}"),
       "models[0].profiles[1].id: 19 repeats the id of models[0].profiles[0]"},
      {"models:\n- {name: T, memorySlices: 8, computeSlices: 7, profiles: "
       "[]}\n",
       "models[0].profiles: is empty"},
      {"models:\n- {name: T, pciDeviceIds: [\"2330\"], memorySlices: 8, "
       "computeSlices: 7, profiles: [" +
           ok_profile + "]}\n",
       "models[0].pciDeviceIds[0]: \"2330\" is not hexadecimal"},
      {"models:\n- {name: T, memorySlices: 8, computeSlices: 7, profiles: [" +
           ok_profile +
           "]}\n- {name: t, memorySlices: 8, computeSlices: 7, "
           "profiles: [" +
           ok_profile + "]}\n",
       "models[1].name: \"t\" repeats models[0]"},
      {"models:\n- {name: T, pciDeviceIds: [\"0x2330\"], memorySlices: 8, "
       "computeSlices: 7, profiles: [" +
           ok_profile +
           "]}\n- {name: U, pciDeviceIds: [\"0x233010de\"], memorySlices: 8, "
           "computeSlices: 7, profiles: [" +
           ok_profile + "]}\n",
       "models[1].pciDeviceIds[0]: 0x2330 is also an id of T"},
      {"models:\n- {name: T, modelNames: [\"A100 80GB\"], memorySlices: 8, "
       "computeSlices: 7, profiles: [" +
           ok_profile +
           "]}\n- {name: U, modelNames: [\"a100-80gb\"], memorySlices: 8, "
           "computeSlices: 7, profiles: [" +
           ok_profile + "]}\n",
       "models[1].modelNames[0]: \"a100-80gb\" also names T"},
      {"models: []\nextra: 1\n", "extra: unknown key"},
      {"models: {}\n", "models: a mapping is not a list"},
      {"models:\n- {name: T, memorySlices: 40, computeSlices: 7, profiles: "
       "[]}\n",
       "models[0].memorySlices: 40 is outside 1..32"},
  };
  for (const auto& [text, want] : cases) {
    EXPECT_THAT(MigCatalog::FromText(text),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(want)))
        << text;
  }
}

TEST(MigCatalogTest, FromFileReadsAndReportsMissingFiles) {
  const std::string path =
      ::testing::TempDir() + "/mig_catalog_test_catalog.yaml";
  {
    std::ofstream out(path);
    out << MigCatalog::Builtin().ToYaml();
  }
  absl::StatusOr<MigCatalog> catalog = MigCatalog::FromFile(path);
  ASSERT_OK(catalog);
  EXPECT_EQ(*catalog, MigCatalog::Builtin());
  std::remove(path.c_str());
  EXPECT_THAT(MigCatalog::FromFile(path),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr(path)));
}

TEST(MigCatalogTest, FromModelsValidatesLikeFromText) {
  MigModel m;
  m.name = "Bad";
  m.memory_slices = 8;
  m.compute_slices = 7;
  MigProfile p;
  p.name = "3g.40gb";
  p.memory_slices = 4;
  p.compute_slices = 3;
  p.memory_mib = 40448;
  p.legal_starts = 1u << 6;
  p.max_instances = 2;
  m.profiles = {p};
  EXPECT_THAT(MigCatalog::FromModels({m}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("models[0].profiles[0].starts: 6 is outside "
                                 "0..4")));
}

}  // namespace
}  // namespace deviceshare::mig
