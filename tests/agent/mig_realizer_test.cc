// MigRealizer over an in-memory MigControl (the NVML path is covered in
// nvml_source_test.cc).
#include "deviceshare/agent/mig_realizer.h"

#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace deviceshare::agent {
namespace {

using ::deviceshare::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

// One 8-slice GPU "GPU-0" with the H100-80GB sizes; checks placement and
// overlap as NVML does and counts what it is asked to do.
class InMemoryMigControl final : public MigControl {
 public:
  absl::StatusOr<std::vector<MigInstanceInfo>> ListInstances(
      const std::string& gpu_uuid) override {
    if (gpu_uuid != "GPU-0") return absl::NotFoundError(gpu_uuid);
    std::vector<MigInstanceInfo> out;
    for (const auto& [start, instance] : instances_) out.push_back(instance);
    return out;
  }

  absl::StatusOr<MigInstanceInfo> CreateInstance(const std::string& gpu_uuid,
                                                 const std::string& profile,
                                                 int32_t start) override {
    if (gpu_uuid != "GPU-0") return absl::NotFoundError(gpu_uuid);
    auto size = kSizes.find(profile);
    if (size == kSizes.end() || start % size->second != 0 ||
        start + size->second > 8) {
      return absl::InvalidArgumentError(profile);
    }
    MigSlot slot{profile, start, size->second};
    for (const auto& [other_start, other] : instances_) {
      if (slot.mask() & other.slot.mask()) {
        return absl::FailedPreconditionError("slices taken");
      }
    }
    ++creates;
    MigInstanceInfo instance;
    instance.slot = slot;
    instance.gpu_instance_id = 8 / slot.size - 1 + start / slot.size;
    instance.compute_instance_id = 0;
    instance.mig_uuid = "MIG-" + std::to_string(instance.gpu_instance_id);
    instances_[start] = instance;
    return instance;
  }

  absl::Status DestroyInstance(const std::string& gpu_uuid,
                               int32_t gpu_instance_id) override {
    for (auto it = instances_.begin(); it != instances_.end(); ++it) {
      if (it->second.gpu_instance_id == gpu_instance_id) {
        instances_.erase(it);
        ++destroys;
        return absl::OkStatus();
      }
    }
    return absl::NotFoundError("no such instance");
  }

  // An instance made outside the realizer (by hand, or a previous pod).
  void Make(const std::string& profile, int32_t start, bool with_ci = true) {
    ASSERT_OK(CreateInstance("GPU-0", profile, start));
    --creates;
    if (!with_ci) {
      instances_[start].compute_instance_id = -1;
      instances_[start].mig_uuid = "";
    }
  }

  int creates = 0;
  int destroys = 0;

 private:
  // Memory slices per profile; legal starts are the multiples of the size.
  inline static const std::map<std::string, int32_t> kSizes = {{"1g.10gb", 1},
                                                               {"2g.20gb", 2},
                                                               {"3g.40gb", 4},
                                                               {"4g.40gb", 4},
                                                               {"7g.80gb", 8}};
  std::map<int32_t, MigInstanceInfo> instances_;  // by start
};

HeldMigSlot Held(const std::string& pod, const std::string& profile,
                 int32_t start, int32_t size, int32_t container = 0) {
  return HeldMigSlot{{pod, container, 0}, MigSlot{profile, start, size}};
}

std::vector<std::string> Places(InMemoryMigControl& control) {
  std::vector<std::string> out;
  auto listed = control.ListInstances("GPU-0");
  EXPECT_OK(listed);
  if (!listed.ok()) return out;
  for (const MigInstanceInfo& i : *listed) {
    out.push_back(i.slot.profile + "@" + std::to_string(i.slot.start));
  }
  return out;
}

TEST(MigRealizerTest, CreatesMissingInstancesAtTheirStarts) {
  InMemoryMigControl control;
  MigRealizer realizer(&control);
  auto realized = realizer.Realize(
      "GPU-0", {Held("a", "3g.40gb", 4, 4), Held("b", "1g.10gb", 0, 1, 2)});
  ASSERT_OK(realized);
  ASSERT_EQ(realized->size(), 2u);
  EXPECT_EQ((*realized)[0].holder, (MigHolder{"a", 0, 0}));
  EXPECT_EQ((*realized)[0].instance.slot, (MigSlot{"3g.40gb", 4, 4}));
  EXPECT_EQ((*realized)[0].instance.gpu_instance_id, 2);
  EXPECT_EQ((*realized)[0].instance.mig_uuid, "MIG-2");
  EXPECT_EQ((*realized)[1].holder, (MigHolder{"b", 2, 0}));
  EXPECT_EQ((*realized)[1].instance.slot, (MigSlot{"1g.10gb", 0, 1}));
  EXPECT_EQ(control.creates, 2);
  EXPECT_EQ(control.destroys, 0);
}

TEST(MigRealizerTest, RealizingTwiceCreatesNothing) {
  InMemoryMigControl control;
  MigRealizer realizer(&control);
  const std::vector<HeldMigSlot> held = {Held("a", "3g.40gb", 0, 4),
                                         Held("b", "2g.20gb", 4, 2)};
  auto first = realizer.Realize("GPU-0", held);
  ASSERT_OK(first);
  auto second = realizer.Realize("GPU-0", held);
  ASSERT_OK(second);
  EXPECT_EQ(*first, *second);
  EXPECT_EQ(control.creates, 2);
  EXPECT_EQ(control.destroys, 0);
}

TEST(MigRealizerTest, TwoHoldersOfOneSlotShareTheInstance) {
  InMemoryMigControl control;
  MigRealizer realizer(&control);
  auto realized = realizer.Realize(
      "GPU-0", {Held("a", "7g.80gb", 0, 8, 0), Held("a", "7g.80gb", 0, 8, 1)});
  ASSERT_OK(realized);
  EXPECT_EQ((*realized)[0].instance, (*realized)[1].instance);
  EXPECT_EQ(control.creates, 1);
}

TEST(MigRealizerTest, IdleGpuLosesItsOrphansFirst) {
  InMemoryMigControl control;
  control.Make("7g.80gb", 0);
  MigRealizer realizer(&control);
  auto realized = realizer.Realize("GPU-0", {Held("a", "3g.40gb", 4, 4)});
  ASSERT_OK(realized);
  EXPECT_EQ(control.destroys, 1);
  EXPECT_EQ(control.creates, 1);
  EXPECT_THAT(Places(control), ::testing::ElementsAre("3g.40gb@4"));
}

TEST(MigRealizerTest, IdleGpuOrphansGoEvenWhenTheyDoNotBlock) {
  InMemoryMigControl control;
  control.Make("1g.10gb", 0);
  control.Make("1g.10gb", 1);
  MigRealizer realizer(&control);
  ASSERT_OK(realizer.Realize("GPU-0", {Held("a", "3g.40gb", 4, 4)}));
  EXPECT_THAT(Places(control), ::testing::ElementsAre("3g.40gb@4"));
}

TEST(MigRealizerTest, BusyGpuOnlyAddsInFreeSlices) {
  InMemoryMigControl control;
  control.Make("3g.40gb", 0);  // held by pod a
  control.Make("1g.10gb", 4);  // nobody's
  MigRealizer realizer(&control);
  auto realized = realizer.Realize(
      "GPU-0", {Held("a", "3g.40gb", 0, 4), Held("b", "1g.10gb", 6, 1)});
  ASSERT_OK(realized);
  EXPECT_EQ(control.destroys, 0);
  EXPECT_EQ(control.creates, 1);
  EXPECT_THAT(Places(control),
              ::testing::ElementsAre("3g.40gb@0", "1g.10gb@4", "1g.10gb@6"));
}

TEST(MigRealizerTest, BusyGpuRefusesASlotOverAnUnheldInstance) {
  InMemoryMigControl control;
  control.Make("2g.20gb", 0);  // held by pod a
  control.Make("2g.20gb", 4);  // nobody's, in the way
  MigRealizer realizer(&control);
  auto realized = realizer.Realize(
      "GPU-0", {Held("a", "2g.20gb", 0, 2), Held("b", "1g.10gb", 2, 1),
                Held("c", "3g.40gb", 4, 4)});
  EXPECT_THAT(realized,
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("GPU GPU-0"),
                             HasSubstr("3g.40gb@4 (slices 4-7) for pod c"),
                             HasSubstr("2g.20gb@4 (slices 4-5) (GPU instance "
                                       "5)"),
                             HasSubstr("no live pod holds"))));
  // Refused before anything changed: 1g@2 was not made either.
  EXPECT_EQ(control.creates, 0);
  EXPECT_EQ(control.destroys, 0);
}

TEST(MigRealizerTest, InstanceWithoutComputeInstanceIsNotHeld) {
  InMemoryMigControl control;
  control.Make("3g.40gb", 0, /*with_ci=*/false);
  MigRealizer realizer(&control);
  auto realized = realizer.Realize("GPU-0", {Held("a", "3g.40gb", 0, 4)});
  ASSERT_OK(realized);
  EXPECT_EQ((*realized)[0].instance.compute_instance_id, 0);
  EXPECT_EQ(control.destroys, 1);
  EXPECT_EQ(control.creates, 1);
}

TEST(MigRealizerTest, BadRecordsAreInvalidArgument) {
  InMemoryMigControl control;
  MigRealizer realizer(&control);
  EXPECT_THAT(realizer.Realize("GPU-0", {Held("a", "3g.40gb", -1, 0)}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("pod a container 0 device 0 is not placed")));
  EXPECT_THAT(
      realizer.Realize(
          "GPU-0", {Held("a", "3g.40gb", 0, 4), Held("b", "2g.20gb", 2, 2)}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("overlap")));
  EXPECT_EQ(control.creates, 0);
}

TEST(MigRealizerTest, ControlErrorsNameTheSlot) {
  InMemoryMigControl control;
  MigRealizer realizer(&control);
  EXPECT_THAT(realizer.Realize("GPU-0", {Held("a", "3g.40gb", 2, 4)}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("creating MIG slot 3g.40gb@2")));
  EXPECT_THAT(realizer.Realize("GPU-9", {Held("a", "3g.40gb", 0, 4)}),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST(MigRealizerTest, CleanupOrphansFollowsTheSameRule) {
  InMemoryMigControl control;
  control.Make("3g.40gb", 0);
  control.Make("1g.10gb", 4);
  MigRealizer realizer(&control);
  auto swept = realizer.CleanupOrphans("GPU-0", {Held("a", "3g.40gb", 0, 4)});
  ASSERT_OK(swept);
  EXPECT_TRUE(swept->empty());
  EXPECT_EQ(control.destroys, 0);

  // A held slot that exists nowhere does not protect the GPU.
  swept = realizer.CleanupOrphans("GPU-0", {Held("a", "2g.20gb", 6, 2)});
  ASSERT_OK(swept);
  ASSERT_EQ(swept->size(), 2u);
  EXPECT_EQ((*swept)[0].slot, (MigSlot{"3g.40gb", 0, 4}));
  EXPECT_TRUE(Places(control).empty());
}

}  // namespace
}  // namespace deviceshare::agent
