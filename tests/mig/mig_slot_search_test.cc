#include <optional>
#include <set>
#include <vector>

#include "deviceshare/mig/mig_catalog.h"
#include "deviceshare/mig/mig_layout.h"
#include "deviceshare/mig/slot_search.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace deviceshare::mig {
namespace {

using ::deviceshare::testing::StatusIs;

const MigModel& Model(absl::string_view name) {
  return *MigCatalog::Builtin().FindModel(name);
}

// One GPU's state as the backend would keep it.
class Gpu {
 public:
  explicit Gpu(const MigModel& model)
      : model_(model),
        search_(*SlotSearch::Create(model)),
        counts_(model.profiles.size(), 0) {}

  std::optional<SlotChoice> Take(const MigDemand& demand,
                                 absl::Span<const int> allowed = {}) {
    std::optional<SlotChoice> choice =
        search_.Choose(mask_, counts_, demand, allowed);
    if (choice) {
      mask_ |= model_.profiles[choice->profile].MaskAt(choice->start);
      ++counts_[choice->profile];
      layout_.push_back({choice->profile, choice->start});
    }
    return choice;
  }

  const std::string& NameOf(const SlotChoice& c) const {
    return model_.profiles[c.profile].name;
  }
  const std::vector<MigInstance>& layout() const { return layout_; }
  const SlotSearch& search() const { return search_; }
  uint32_t mask() const { return mask_; }

 private:
  const MigModel& model_;
  SlotSearch search_;
  std::vector<int32_t> counts_;
  uint32_t mask_ = 0;
  std::vector<MigInstance> layout_;
};

MigDemand Memory(int64_t mib) { return MigDemand{mib, 0, ""}; }
MigDemand Cores(int32_t percent) { return MigDemand{0, percent, ""}; }
MigDemand Named(const char* profile) { return MigDemand{0, 0, profile}; }

TEST(MigSlotSearchTest, OneGOnAnIdleH100GoesToSlice6) {
  Gpu gpu(Model("H100-80GB"));
  std::optional<SlotChoice> c = gpu.Take(Memory(5000));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(gpu.NameOf(*c), "1g.10gb");
  // Slice 6 leaves 3g@0 and 4g@0 possible; slice 0 would block both.
  EXPECT_EQ(c->start, 6);
}

TEST(MigSlotSearchTest, SevenOneGsTakeSevenStartsAndTheEighthFails) {
  Gpu gpu(Model("H100-80GB"));
  std::set<int32_t> starts;
  for (int i = 0; i < 7; ++i) {
    std::optional<SlotChoice> c = gpu.Take(Memory(9000));
    ASSERT_TRUE(c.has_value()) << i;
    EXPECT_EQ(gpu.NameOf(*c), "1g.10gb");
    starts.insert(c->start);
  }
  EXPECT_EQ(starts, (std::set<int32_t>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(gpu.Take(Memory(9000)), std::nullopt);
  ASSERT_OK(ValidateLayout(Model("H100-80GB"), gpu.layout()));
}

TEST(MigSlotSearchTest, ThreeGThenFourGShareAnIdleH100) {
  for (const MigDemand& four : {Cores(50), Named("4g.40gb")}) {
    Gpu gpu(Model("H100-80GB"));
    std::optional<SlotChoice> three = gpu.Take(Memory(40448));
    ASSERT_TRUE(three.has_value());
    EXPECT_EQ(gpu.NameOf(*three), "3g.40gb");
    EXPECT_EQ(three->start, 4);
    std::optional<SlotChoice> c = gpu.Take(four);
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(gpu.NameOf(*c), "4g.40gb");
    EXPECT_EQ(c->start, 0);
    EXPECT_EQ(gpu.mask(), 0xFFu);
  }
}

// 1g.20gb and 2g.20gb both have 20096 MiB; the double-memory 1g comes first
// in the profile order (2 memory slices each, 1 compute slice < 2), so a
// by-size demand gets it and leaves the compute slice to someone else.
TEST(MigSlotSearchTest, TwentyGigabytesPicksTheDoubleMemory1g) {
  Gpu gpu(Model("H100-80GB"));
  std::optional<SlotChoice> c = gpu.Take(Memory(20000));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(gpu.NameOf(*c), "1g.20gb");
  // With two compute slices asked for, 2g.20gb.
  std::optional<SlotChoice> d = gpu.Take(MigDemand{20000, 25, ""});
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(gpu.NameOf(*d), "2g.20gb");
}

TEST(MigSlotSearchTest, CoresPickTheComputeSize) {
  Gpu gpu(Model("H100-80GB"));
  const SlotSearch& s = gpu.search();
  EXPECT_EQ(s.RequiredComputeSlices(0), 0);
  EXPECT_EQ(s.RequiredComputeSlices(14), 1);  // 0.98
  EXPECT_EQ(s.RequiredComputeSlices(15), 2);  // 1.05
  EXPECT_EQ(s.RequiredComputeSlices(50), 4);  // 3.5
  EXPECT_EQ(s.RequiredComputeSlices(100), 7);
  std::optional<SlotChoice> c = gpu.Take(Cores(50));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(gpu.NameOf(*c), "4g.40gb");
  Gpu fresh(Model("H100-80GB"));
  std::optional<SlotChoice> all = fresh.Take(Cores(100));
  ASSERT_TRUE(all.has_value());
  EXPECT_EQ(fresh.NameOf(*all), "7g.80gb");
  EXPECT_EQ(fresh.Take(Cores(101)), std::nullopt);
}

TEST(MigSlotSearchTest, MoreMemoryThanSevenGFitsNowhere) {
  Gpu gpu(Model("H100-80GB"));
  EXPECT_EQ(gpu.Take(Memory(81153)), std::nullopt);
  EXPECT_FALSE(gpu.search().MayPlace(0, Memory(81153)));
  EXPECT_TRUE(gpu.search().MayPlace(0, Memory(81152)));
}

TEST(MigSlotSearchTest, NamedVariantIsHonouredAndCapped) {
  Gpu gpu(Model("H100-80GB"));
  std::optional<SlotChoice> c = gpu.Take(Named("1g.10gb+me"));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(gpu.NameOf(*c), "1g.10gb+me");
  EXPECT_EQ(gpu.Take(Named("MIG 1g.10gb+me")), std::nullopt);  // max 1
  // A by-size demand never gets the variant.
  std::optional<SlotChoice> plain = gpu.Take(Memory(100));
  ASSERT_TRUE(plain.has_value());
  EXPECT_EQ(gpu.NameOf(*plain), "1g.10gb");
}

TEST(MigSlotSearchTest, NamedProfileMustExistAndBeAdequate) {
  Gpu gpu(Model("H100-80GB"));
  EXPECT_EQ(gpu.Take(Named("5g.50gb")), std::nullopt);
  EXPECT_EQ(gpu.Take(MigDemand{20000, 0, "1g.10gb"}), std::nullopt);
  EXPECT_EQ(gpu.Take(MigDemand{0, 50, "3g.40gb"}), std::nullopt);
  std::optional<SlotChoice> c = gpu.Take(Named("3g.40gb"));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->start, 4);
}

TEST(MigSlotSearchTest, FallsBackToTheNextLargerProfile) {
  Gpu gpu(Model("H100-80GB"));
  const MigModel& model = Model("H100-80GB");
  // 4g@0 and 1g.20gb@4: the 1g.10gb demand still finds slice 6 ...
  const int g4 = model.ProfileIndex("4g.40gb");
  const int g1x2 = model.ProfileIndex("1g.20gb");
  std::vector<int32_t> counts(model.profiles.size(), 0);
  counts[g4] = 1;
  counts[g1x2] = 1;
  const uint32_t mask =
      model.profiles[g4].MaskAt(0) | model.profiles[g1x2].MaskAt(4);
  std::optional<SlotChoice> c = gpu.search().Choose(mask, counts, Memory(5000));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(model.profiles[c->profile].name, "1g.10gb");
  EXPECT_EQ(c->start, 6);
  // ... and when 1g.10gb is at its cap, the next adequate profile serves.
  counts[model.ProfileIndex("1g.10gb")] = 7;
  c = gpu.search().Choose(mask, counts, Memory(5000));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(model.profiles[c->profile].name, "1g.20gb");
  EXPECT_EQ(c->start, 6);
}

TEST(MigSlotSearchTest, AllowedProfilesNarrowTheChoice) {
  const MigModel& model = Model("H100-80GB");
  Gpu gpu(model);
  // HAMi-style allowlist without 1g.20gb: 20000 MiB takes 2g.20gb.
  const std::vector<int> allowed = {
      model.ProfileIndex("1g.10gb"), model.ProfileIndex("2g.20gb"),
      model.ProfileIndex("3g.40gb"), model.ProfileIndex("7g.80gb")};
  std::optional<SlotChoice> c = gpu.Take(Memory(20000), allowed);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(gpu.NameOf(*c), "2g.20gb");
  EXPECT_EQ(gpu.Take(Named("4g.40gb"), allowed), std::nullopt);
}

TEST(MigSlotSearchTest, FreePlacementsCountsNonVariantPlacements) {
  Gpu gpu(Model("H100-80GB"));
  EXPECT_EQ(gpu.search().FreePlacements(0), 7 + 4 + 3 + 2 + 1 + 1);
  EXPECT_EQ(gpu.search().FreePlacements(0xFF), 0);
  // 1g@6 leaves 1g@0..5, 1g.20gb@0,2,4, 2g@0,2,4, 3g@0, 4g@0.
  EXPECT_EQ(gpu.search().FreePlacements(0x40), 6 + 3 + 3 + 1 + 1);
  // Bits above the model's slices are ignored.
  EXPECT_EQ(gpu.search().FreePlacements(0x100), gpu.search().FreePlacements(0));
}

TEST(MigSlotSearchTest, A30PlacesOnFourSlices) {
  Gpu gpu(Model("A30-24GB"));
  std::optional<SlotChoice> c = gpu.Take(Memory(5000));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(gpu.NameOf(*c), "1g.6gb");
  EXPECT_EQ(c->start, 3);
  c = gpu.Take(Memory(11000));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(gpu.NameOf(*c), "2g.12gb");
  EXPECT_EQ(c->start, 0);
  c = gpu.Take(Cores(25));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->start, 2);
  EXPECT_EQ(gpu.Take(Memory(1)), std::nullopt);
}

TEST(MigSlotSearchTest, EveryChoiceSequenceStaysValid) {
  const MigModel& model = Model("H100-80GB");
  const MigDemand demands[] = {Memory(9000),  Memory(20000), Cores(30),
                               Memory(40000), Cores(50),     Memory(1)};
  for (int seed = 0; seed < 64; ++seed) {
    Gpu gpu(model);
    for (int k = 0; k < 8; ++k) {
      gpu.Take(demands[(seed * 31 + k * 17) % 6]);
      ASSERT_OK(ValidateLayout(model, gpu.layout()));
    }
  }
}

TEST(MigSlotSearchTest, CreateRejectsModelsOverSixteenSlices) {
  MigModel big;
  big.name = "Big";
  big.memory_slices = 17;
  big.compute_slices = 17;
  MigProfile p;
  p.name = "1g.1gb";
  p.memory_slices = 1;
  p.compute_slices = 1;
  p.memory_mib = 1024;
  p.legal_starts = 1;
  p.max_instances = 1;
  big.profiles = {p};
  EXPECT_THAT(SlotSearch::Create(big),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::HasSubstr("memorySlices 17 is outside "
                                            "1..16")));
}

}  // namespace
}  // namespace deviceshare::mig
