// The mig backend's settings in the config file (mig/mig_config.h): the
// core's parser keeps its keys as written, ReadMigConfig reads them, and
// the extension's check runs once the file is read.
#include "deviceshare/mig/mig_config.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/config/config_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace deviceshare::mig {
namespace {

using ::deviceshare::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr absl::StatusCode kInvalid = absl::StatusCode::kInvalidArgument;

absl::StatusOr<Config> ParseWithBuiltins(const std::string& text) {
  return ParseConfigYaml(text, BuiltinConfigExtensions());
}

Config MustParse(const std::string& text) {
  absl::StatusOr<Config> config = ParseWithBuiltins(text);
  EXPECT_TRUE(config.ok()) << config.status() << "\n" << text;
  return config.ok() ? *config : Config{};
}

MigConfig MigOf(const Config& config) {
  absl::StatusOr<MigConfig> mig = ReadMigConfig(config);
  EXPECT_TRUE(mig.ok()) << mig.status();
  return mig.ok() ? *mig : MigConfig{};
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
  EXPECT_EQ(MigOf(config).known_geometries, want);
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
  EXPECT_EQ(MigOf(config).known_geometries, want);
}

TEST(MigConfigTest, GeometryErrorsNameTheFullPath) {
  auto error = [](const std::string& allowed) {
    return ParseWithBuiltins(
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
  EXPECT_THAT(ParseWithBuiltins("nvidia:\n  knownMigGeometries:\n"
                                "  - models: []\n" +
                                geometries),
              StatusIs(kInvalid, HasSubstr("nvidia.knownMigGeometries[0]."
                                           "models: is empty")));
  EXPECT_THAT(ParseWithBuiltins("nvidia:\n  knownMigGeometries:\n  - " +
                                geometries.substr(4)),
              StatusIs(kInvalid, HasSubstr("nvidia.knownMigGeometries[0]."
                                           "models: missing")));
  EXPECT_THAT(ParseWithBuiltins("nvidia:\n  knownMigGeometries:\n"
                                "  - models: [A30, \"\"]\n" +
                                geometries),
              StatusIs(kInvalid, HasSubstr("nvidia.knownMigGeometries[0]."
                                           "models[1]: is empty")));
  EXPECT_THAT(ParseWithBuiltins("nvidia:\n  knownMigGeometries:\n"
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
  EXPECT_EQ(MigOf(config).profile_allowlist, want);
  EXPECT_THAT(ParseWithBuiltins("nvidia:\n  migProfileAllowlist:\n"
                                "  - {models: [A30], profiles: []}\n"),
              StatusIs(kInvalid, HasSubstr("nvidia.migProfileAllowlist[0]."
                                           "profiles: is empty")));
  EXPECT_THAT(
      ParseWithBuiltins("nvidia:\n  migProfileAllowlist:\n"
                        "  - {models: [A30], profiles: [1g.6gb, big]}\n"),
      StatusIs(kInvalid, AllOf(HasSubstr("nvidia.migProfileAllowlist[0]."
                                         "profiles[1]: \"big\""),
                               HasSubstr("not a MIG profile name"))));
  EXPECT_THAT(ParseWithBuiltins("nvidia:\n  migProfileAllowlist:\n"
                                "  - {profiles: [1g.6gb]}\n"),
              StatusIs(kInvalid, HasSubstr("nvidia.migProfileAllowlist[0]."
                                           "models: missing")));
}

TEST(MigConfigTest, ProfileNames) {
  auto accepts = [](const std::string& name) {
    return ParseWithBuiltins(
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

// Group names travel in Volcano ids, GPU-x[group-position].
TEST(ConfigMigTest, GroupNamesThatBreakAllocationIdsAreRejected) {
  for (const char* name : {"g-", "1g.10gb", "a[b", "x:y"}) {
    const std::string yaml = absl::StrCat(
        "nvidia:\n  knownMigGeometries:\n  - models: [A30]\n"
        "    allowedGeometries:\n    - group: \"",
        name,
        "\"\n      geometries: [{name: 1g.6gb, memory: 6144, count: 4}]\n");
    EXPECT_THAT(ParseWithBuiltins(yaml),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("allowedGeometries[0].group")))
        << name;
  }
}

TEST(ConfigMigTest, ConfigMapSearchNeedsGeometriesAndUnusedKeysAreSaid) {
  EXPECT_THAT(
      ParseWithBuiltins("scheduler: {modes: [mig], migSearch: configmap}\n"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("scheduler.migSearch")));
  EXPECT_THAT(ParseWithBuiltins("scheduler: {migSearch: everywhere}\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("\"everywhere\" is not a MIG search")));
  auto placement = ParseWithBuiltins(
      "scheduler: {modes: [mig]}\nnvidia:\n  knownMigGeometries:\n"
      "  - models: [A30]\n    allowedGeometries:\n    - group: g1\n"
      "      geometries: [{name: 1g.6gb, memory: 6144, count: 4}]\n");
  ASSERT_TRUE(placement.ok()) << placement.status();
  EXPECT_EQ(MigOf(*placement).search, MigSearch::kPlacement);
  ASSERT_EQ(placement->notices.size(), 1u);
  EXPECT_THAT(placement->notices[0],
              HasSubstr("knownMigGeometries: not used: scheduler.migSearch is "
                        "placement"));
}

// Volcano's decodeNodeDevices reads a `mig` device whose type no
// knownMigGeometries entry lists as hami-core (upstream-cases.md row G9):
// the configmap search tells the registration reader every listed model;
// the placement search (HAMi's, which has no such fallback) tells nothing.
TEST(ConfigMigTest, ConfigMapSearchListsTheModelsThatKeepMig) {
  const std::string geometries =
      "nvidia:\n  knownMigGeometries:\n"
      "  - models: [A30]\n    allowedGeometries:\n    - group: g1\n"
      "      geometries: [{name: 1g.6gb, memory: 6144, count: 4}]\n"
      "  - models: [A100-SXM4-80GB, A100-PCIE-80GB]\n"
      "    allowedGeometries:\n    - group: g1\n"
      "      geometries: [{name: 1g.10gb, memory: 9728, count: 7}]\n";
  Config configmap =
      MustParse("scheduler: {modes: [hami-core, mig], migSearch: configmap}\n" +
                geometries);
  EXPECT_THAT(
      configmap.device.volcano_mode_models,
      ElementsAre(RegisteredModeModels{
          SharingMode("mig"), {"A30", "A100-SXM4-80GB", "A100-PCIE-80GB"}}));
  Config placement =
      MustParse("scheduler: {modes: [hami-core, mig]}\n" + geometries);
  EXPECT_THAT(placement.device.volcano_mode_models, IsEmpty());
}

// Without the mig backend's extension its keys are unknown, as any other.
TEST(MigConfigTest, KeysAreUnknownWithoutTheExtension) {
  EXPECT_THAT(
      ParseConfigYaml("scheduler: {migSearch: configmap}\n"),
      StatusIs(kInvalid, HasSubstr("scheduler.migSearch: unknown key")));
  EXPECT_THAT(
      ParseConfigYaml("nvidia: {knownMigGeometries: []}\n"),
      StatusIs(kInvalid, HasSubstr("nvidia.knownMigGeometries: unknown key")));
}

// A MigConfig built in code reads back from the Config it is put in.
TEST(MigConfigTest, WithMigConfigRoundTrips) {
  MigConfig mig;
  mig.search = MigSearch::kConfigMap;
  mig.known_geometries = {{{"A100"},
                           {{"group1", {{"1g.10gb", 9728, 0, 7}}},
                            {"group2", {{"3g.40gb", 40192, 42, 2}}}}},
                          {{"A30"}, {{"", {{"4g.24gb", 24576, 0, 1}}}}}};
  mig.profile_allowlist = {{{"H100"}, {"1g.10gb", "3g.40gb"}}};
  EXPECT_EQ(MigOf(WithMigConfig(Config{}, mig)), mig);
  EXPECT_EQ(MigOf(WithMigConfig(WithMigConfig(Config{}, mig), MigConfig{})),
            MigConfig{});
}

}  // namespace
}  // namespace deviceshare::mig
