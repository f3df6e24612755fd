#include <string>
#include <utility>
#include <vector>

#include "deviceshare/mig/geometry_layout.h"
#include "deviceshare/mig/mig_catalog.h"
#include "deviceshare/mig/mig_layout.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace deviceshare::mig {
namespace {

using ::deviceshare::testing::StatusIs;
using ::testing::HasSubstr;

const MigModel& Model(absl::string_view name) {
  return *MigCatalog::Builtin().FindModel(name);
}

MigGeometry Group(std::string name, std::vector<MigGeometryInstance> items) {
  return MigGeometry{std::move(name), std::move(items)};
}

// (profile name, start) per position.
std::vector<std::pair<std::string, int>> Laid(const MigModel& model,
                                              const MigGeometry& geometry) {
  absl::StatusOr<std::vector<GeometrySlot>> slots =
      LayGeometry(model, geometry);
  EXPECT_OK(slots);
  std::vector<std::pair<std::string, int>> out;
  if (!slots.ok()) return out;
  std::vector<MigInstance> layout;
  for (size_t i = 0; i < slots->size(); ++i) {
    const GeometrySlot& s = (*slots)[i];
    EXPECT_EQ(s.position, static_cast<int32_t>(i));
    out.push_back({model.profiles[s.profile].name, s.start});
    layout.push_back({s.profile, s.start});
  }
  EXPECT_OK(ValidateLayout(model, layout));
  return out;
}

using Slots = std::vector<std::pair<std::string, int>>;

// Volcano's default knownMigGeometries for A100-80GB
// (docs/reference/upstream-volcano.md §11).
TEST(MigGeometryLayoutTest, VolcanoA100_80GbDefaults) {
  const MigModel& m = Model("A100-80GB");
  EXPECT_EQ(Laid(m, Group("group1", {{"1g.10gb", 9728, 0, 7}})),
            (Slots{{"1g.10gb", 0},
                   {"1g.10gb", 1},
                   {"1g.10gb", 2},
                   {"1g.10gb", 3},
                   {"1g.10gb", 4},
                   {"1g.10gb", 5},
                   {"1g.10gb", 6}}));
  EXPECT_EQ(
      Laid(m, Group("group2",
                    {{"2g.20gb", 19968, 0, 3}, {"1g.10gb", 9728, 0, 1}})),
      (Slots{{"2g.20gb", 0}, {"2g.20gb", 2}, {"2g.20gb", 4}, {"1g.10gb", 6}}));
  EXPECT_EQ(Laid(m, Group("group3", {{"3g.40gb", 40192, 0, 2}})),
            (Slots{{"3g.40gb", 0}, {"3g.40gb", 4}}));
  EXPECT_EQ(Laid(m, Group("group4", {{"7g.80gb", 80896, 0, 1}})),
            (Slots{{"7g.80gb", 0}}));
}

TEST(MigGeometryLayoutTest, SlotsCarryTheConfigMemory) {
  absl::StatusOr<std::vector<GeometrySlot>> slots = LayGeometry(
      Model("A100-80GB"),
      Group("group2", {{"2g.20gb", 19968, 0, 3}, {"1g.10gb", 0, 0, 1}}));
  ASSERT_OK(slots);
  ASSERT_EQ(slots->size(), 4u);
  EXPECT_EQ((*slots)[0].memory_mib, 19968);
  EXPECT_EQ((*slots)[3].memory_mib, 9728);  // none in config: the profile's
}

TEST(MigGeometryLayoutTest, VolcanoA100_40GbAndA30Defaults) {
  const MigModel& a100 = Model("A100-40GB");
  EXPECT_EQ(Laid(a100, Group("group1", {{"1g.5gb", 5120, 0, 7}})).size(), 7u);
  EXPECT_EQ(
      Laid(a100,
           Group("group2", {{"2g.10gb", 10240, 0, 3}, {"1g.5gb", 5120, 0, 1}})),
      (Slots{{"2g.10gb", 0}, {"2g.10gb", 2}, {"2g.10gb", 4}, {"1g.5gb", 6}}));
  EXPECT_EQ(Laid(a100, Group("group3", {{"3g.20gb", 20480, 0, 2}})),
            (Slots{{"3g.20gb", 0}, {"3g.20gb", 4}}));
  EXPECT_EQ(Laid(a100, Group("group4", {{"7g.40gb", 40960, 0, 1}})),
            (Slots{{"7g.40gb", 0}}));

  const MigModel& a30 = Model("A30-24GB");
  EXPECT_EQ(
      Laid(a30, Group("group1", {{"1g.6gb", 6144, 0, 4}})),
      (Slots{{"1g.6gb", 0}, {"1g.6gb", 1}, {"1g.6gb", 2}, {"1g.6gb", 3}}));
  EXPECT_EQ(Laid(a30, Group("group2", {{"2g.12gb", 12288, 0, 2}})),
            (Slots{{"2g.12gb", 0}, {"2g.12gb", 2}}));
  EXPECT_EQ(Laid(a30, Group("group3", {{"4g.24gb", 24576, 0, 1}})),
            (Slots{{"4g.24gb", 0}}));
}

TEST(MigGeometryLayoutTest, SmallProfilesListedFirstStillFitAroundLargeOnes) {
  // HAMi lists the 1g before the 2g; positions follow the config order.
  const MigModel& m = Model("H100-80GB");
  EXPECT_EQ(
      Laid(m,
           Group("", {{"1g.10gb", 10240, 14, 1}, {"2g.20gb", 20480, 28, 3}})),
      (Slots{{"1g.10gb", 6}, {"2g.20gb", 0}, {"2g.20gb", 2}, {"2g.20gb", 4}}));
  // 3g@0 would strand the fourth 1g (slice 7 is no 1g start): backtrack.
  EXPECT_EQ(Laid(m, Group("", {{"1g.10gb", 0, 0, 4}, {"3g.40gb", 0, 0, 1}})),
            (Slots{{"1g.10gb", 0},
                   {"1g.10gb", 1},
                   {"1g.10gb", 2},
                   {"1g.10gb", 3},
                   {"3g.40gb", 4}}));
}

TEST(MigGeometryLayoutTest, LegacyNamesMapByComputeSizeAndMemory) {
  const MigModel& a100 = Model("A100-80GB");
  // HAMi's legacy full-GPU name.
  EXPECT_EQ(ResolveGeometryProfile(a100, {"7g.79gb", 80896, 98, 1}).value(),
            a100.ProfileIndex("7g.80gb"));
  EXPECT_EQ(ResolveGeometryProfile(a100, {"3g.39gb", 40192, 0, 1}).value(),
            a100.ProfileIndex("3g.40gb"));
  // Nearest memory picks between the two 1g sizes.
  EXPECT_EQ(ResolveGeometryProfile(a100, {"1g.19gb", 19968, 0, 1}).value(),
            a100.ProfileIndex("1g.20gb"));
  EXPECT_EQ(ResolveGeometryProfile(a100, {"1g.9gb", 0, 0, 1}).value(),
            a100.ProfileIndex("1g.10gb"));
  // Suffixes must agree.
  EXPECT_EQ(ResolveGeometryProfile(a100, {"1g.9gb+me", 0, 0, 1}).value(),
            a100.ProfileIndex("1g.10gb+me"));
  EXPECT_THAT(ResolveGeometryProfile(a100, {"5g.50gb", 0, 0, 1}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("A100-80GB has no 5g profile")));
  EXPECT_THAT(ResolveGeometryProfile(a100, {"big", 0, 0, 1}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("\"big\" is not a MIG profile name")));
}

TEST(MigGeometryLayoutTest, ImpossibleGeometriesNameGroupAndInstance) {
  const MigModel& h100 = Model("H100-80GB");
  EXPECT_THAT(LayGeometry(h100, Group("bad", {{"1g.10gb", 9984, 0, 8}})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "geometry group \"bad\", instance 0 (1g.10gb): 8 "
                       "instances of 1g.10gb, but H100-80GB allows 7"));
  EXPECT_THAT(
      LayGeometry(h100,
                  Group("", {{"4g.40gb", 0, 0, 1}, {"2g.20gb", 0, 0, 2}})),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("geometry (unnamed group), instance 1 (2g.20gb): "
                         "the group needs 8 compute")));
  EXPECT_THAT(LayGeometry(h100, Group("g", {{"9g.90gb", 0, 0, 1}})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("geometry group \"g\", instance 0 "
                                 "(9g.90gb): \"9g.90gb\": H100-80GB has no "
                                 "9g profile")));
  EXPECT_THAT(LayGeometry(h100, Group("g", {{"1g.10gb", 0, 0, -1}})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("count -1 is negative")));
}

TEST(MigGeometryLayoutTest, LayoutFailureNamesTheStuckPosition) {
  // A made-up part whose 2g has a single start: two of them pass the
  // count, compute and memory checks but cannot both be placed.
  MigModel m;
  m.name = "Narrow";
  m.memory_slices = 4;
  m.compute_slices = 4;
  MigProfile p;
  p.name = "2g.2gb";
  p.memory_slices = 2;
  p.compute_slices = 2;
  p.memory_mib = 2048;
  p.legal_starts = 0x1;
  p.max_instances = 2;
  m.profiles = {p};
  absl::StatusOr<MigCatalog> catalog = MigCatalog::FromModels({m});
  ASSERT_OK(catalog);
  EXPECT_THAT(LayGeometry(catalog->models()[0],
                          Group("pair", {{"2g.2gb", 2048, 0, 2}})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "geometry group \"pair\": cannot be laid out on "
                       "Narrow: no free legal start for position 1 (2g.2gb) "
                       "beside the larger instances"));
}

TEST(MigGeometryLayoutTest, EmptyGroupIsAnEmptyLayout) {
  absl::StatusOr<std::vector<GeometrySlot>> slots =
      LayGeometry(Model("H100-80GB"), Group("none", {}));
  ASSERT_OK(slots);
  EXPECT_TRUE(slots->empty());
}

}  // namespace
}  // namespace deviceshare::mig
