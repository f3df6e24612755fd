#include "deviceshare/mig/mig_layout.h"

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "deviceshare/mig/mig_catalog.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace deviceshare::mig {
namespace {

using ::deviceshare::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAreArray;

const MigModel& Model(absl::string_view name) {
  return *MigCatalog::Builtin().FindModel(name);
}

std::vector<int> Indices(const MigModel& model,
                         const std::vector<std::string>& names) {
  std::vector<int> out;
  for (const std::string& n : names) {
    const int index = model.ProfileIndex(n);
    EXPECT_GE(index, 0) << n;
    out.push_back(index);
  }
  return out;
}

// The five base profiles (1-slice 1g, 2g, 3g, 4g, 7g) of an 8-slice part.
std::vector<int> BaseProfiles(const MigModel& model) {
  std::vector<int> out;
  for (size_t p = 0; p < model.profiles.size(); ++p) {
    const MigProfile& profile = model.profiles[p];
    const bool double_memory_1g =
        profile.compute_slices == 1 && profile.memory_slices == 2;
    if (!profile.variant && !double_memory_1g) out.push_back(p);
  }
  EXPECT_EQ(out.size(), 5u) << model.name;
  return out;
}

std::vector<int> WithDoubleMemory1g(const MigModel& model) {
  std::vector<int> out;
  for (size_t p = 0; p < model.profiles.size(); ++p) {
    if (!model.profiles[p].variant) out.push_back(p);
  }
  EXPECT_EQ(out.size(), 6u) << model.name;
  return out;
}

int CountMaximal(const MigModel& model,
                 const std::vector<std::vector<MigInstance>>& layouts,
                 const std::vector<int>& profiles) {
  return static_cast<int>(std::count_if(
      layouts.begin(), layouts.end(),
      [&](const auto& layout) { return IsMaximal(model, layout, profiles); }));
}

// The research note (§1.4) counts 297 layouts over the base profiles and 722
// with the double-memory 1g added; both counts leave out the empty layout
// (the GPU with no instance), which EnumerateLayouts returns first, so it
// returns 298 and 723.
TEST(MigLayoutTest, BaseProfilesGive297LayoutsAnd19Maximal) {
  for (const char* name :
       {"H100-80GB", "A100-40GB", "A100-80GB", "H200-141GB"}) {
    SCOPED_TRACE(name);
    const MigModel& model = Model(name);
    const std::vector<int> base = BaseProfiles(model);
    const auto layouts = EnumerateLayouts(model, base);
    EXPECT_EQ(layouts.size(), 297u + 1u);
    ASSERT_FALSE(layouts.empty());
    EXPECT_TRUE(layouts.front().empty());
    EXPECT_EQ(CountMaximal(model, layouts, base), 19);
  }
}

TEST(MigLayoutTest, DoubleMemory1gGives722LayoutsAnd78Maximal) {
  for (const char* name : {"H100-80GB", "A100-40GB"}) {
    SCOPED_TRACE(name);
    const MigModel& model = Model(name);
    const std::vector<int> profiles = WithDoubleMemory1g(model);
    const auto layouts = EnumerateLayouts(model, profiles);
    EXPECT_EQ(layouts.size(), 722u + 1u);  // + the empty layout
    EXPECT_EQ(CountMaximal(model, layouts, profiles), 78);
  }
}

TEST(MigLayoutTest, MaximalSlotMapsMatchTheReferenceTable) {
  const MigModel& model = Model("H100-80GB");
  const std::vector<int> base = BaseProfiles(model);
  std::vector<std::string> maps;
  for (const auto& layout : EnumerateLayouts(model, base)) {
    if (IsMaximal(model, layout, base)) maps.push_back(SlotMap(model, layout));
  }
  // docs/reference/mig-mps-nvml.md §1.4, rows 1-19.
  const std::vector<std::string> reference = {
      "1111111.", "1111221.", "11113333", "1122111.", "1122221.",
      "11223333", "2211111.", "2211221.", "22113333", "2222111.",
      "2222221.", "22223333", "3333111.", "3333221.", "33333333",
      "4444111.", "4444221.", "44443333", "77777777",
  };
  EXPECT_THAT(maps, UnorderedElementsAreArray(reference));
}

TEST(MigLayoutTest, EnumeratedLayoutsAreValidAndDistinct) {
  const MigModel& model = Model("H100-80GB");
  std::vector<int> all(model.profiles.size());
  for (size_t p = 0; p < all.size(); ++p) all[p] = static_cast<int>(p);
  const auto layouts = EnumerateLayouts(model, all);
  std::set<std::vector<std::pair<int, int>>> seen;
  for (const auto& layout : layouts) {
    ASSERT_OK(ValidateLayout(model, layout));
    std::vector<std::pair<int, int>> key;
    for (const MigInstance& i : layout) key.push_back({i.start, i.profile});
    EXPECT_TRUE(std::is_sorted(key.begin(), key.end()));
    EXPECT_TRUE(seen.insert(key).second);
  }
  // +me adds layouts beyond the 723: at most one +me instance each.
  EXPECT_GT(layouts.size(), 723u);
}

TEST(MigLayoutTest, EnumerateIgnoresBadAndDuplicateIndices) {
  const MigModel& model = Model("H100-80GB");
  const std::vector<int> seven = Indices(model, {"7g.80gb"});
  const auto layouts = EnumerateLayouts(model, {seven[0], seven[0], -1, 99});
  ASSERT_EQ(layouts.size(), 2u);
  EXPECT_EQ(layouts[1], (std::vector<MigInstance>{{seven[0], 0}}));
}

TEST(MigLayoutTest, ValidateLayoutNamesTheInstance) {
  const MigModel& model = Model("H100-80GB");
  const int g1 = model.ProfileIndex("1g.10gb");
  const int me = model.ProfileIndex("1g.10gb+me");
  const int g3 = model.ProfileIndex("3g.40gb");
  const int g4 = model.ProfileIndex("4g.40gb");
  EXPECT_OK(ValidateLayout(model, {{g4, 0}, {g3, 4}}));
  EXPECT_OK(ValidateLayout(model, {}));
  EXPECT_THAT(ValidateLayout(model, {{g4, 0}, {g3, 2}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "instance 1 (3g.40gb@2): 2 is not a legal start of "
                       "3g.40gb (legal: 0, 4)"));
  EXPECT_THAT(ValidateLayout(model, {{g1, 6}, {g4, 0}, {g3, 4}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "instance 2 (3g.40gb@4): overlaps instance 0 "
                       "(1g.10gb@6) at memory slice 6"));
  EXPECT_THAT(ValidateLayout(model, {{me, 0}, {me, 1}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("instance 1 (1g.10gb+me@1): more than 1 "
                                 "instances of 1g.10gb+me")));
  EXPECT_THAT(ValidateLayout(model, {{42, 0}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("instance 0 (profile #42@0)")));
}

TEST(MigLayoutTest, ValidateLayoutChecksComputeSlices) {
  // A made-up part with more memory slices than compute slices per 1g.
  MigModel tiny;
  tiny.name = "Tiny";
  tiny.memory_slices = 4;
  tiny.compute_slices = 2;
  MigProfile p;
  p.name = "1g.1gb";
  p.memory_slices = 1;
  p.compute_slices = 1;
  p.memory_mib = 1024;
  p.legal_starts = 0xF;
  p.max_instances = 4;
  tiny.profiles = {p};
  absl::StatusOr<MigCatalog> catalog = MigCatalog::FromModels({tiny});
  ASSERT_OK(catalog);
  const MigModel& model = catalog->models()[0];
  EXPECT_OK(ValidateLayout(model, {{0, 0}, {0, 3}}));
  EXPECT_THAT(ValidateLayout(model, {{0, 0}, {0, 1}, {0, 2}}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "instance 2 (1g.1gb@2): compute slices add up to 3, "
                       "more than the 2 of Tiny"));
  EXPECT_EQ(EnumerateLayouts(model, {0}).size(), 1u + 4u + 6u);
}

TEST(MigLayoutTest, IsMaximalAndHelpers) {
  const MigModel& model = Model("H100-80GB");
  const std::vector<int> base = BaseProfiles(model);
  const int g1 = model.ProfileIndex("1g.10gb");
  const int g2 = model.ProfileIndex("2g.20gb");
  const int g3 = model.ProfileIndex("3g.40gb");
  const std::vector<MigInstance> layout = {{g2, 0}, {g2, 2}, {g3, 4}};
  EXPECT_TRUE(IsMaximal(model, layout, base));
  EXPECT_FALSE(IsMaximal(model, {{g2, 0}, {g3, 4}}, base));
  EXPECT_FALSE(IsMaximal(model, {}, base));
  EXPECT_EQ(SlotMap(model, layout), "22223333");
  EXPECT_EQ(SlotMap(model, {{g1, 6}}), "......1.");
  EXPECT_EQ(OccupiedMask(model, layout), 0xFFu);
  EXPECT_EQ(OccupiedMask(model, {{g1, 6}}), 0x40u);
}

}  // namespace
}  // namespace deviceshare::mig
