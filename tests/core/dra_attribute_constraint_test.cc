// matchAttribute / distinctAttribute (dra/attribute_constraint.h).
#include <string>

#include "deviceshare/dra/attribute_constraint.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deviceshare::dra {
namespace {

using ::testing::HasSubstr;

constexpr char kDriver[] = "gpu.deviceshare.io";

Device Gpu(const std::string& name, std::string uuid, std::string root) {
  Device device;
  device.name = name;
  device.attributes["uuid"] = DeviceAttribute::String(std::move(uuid));
  device.attributes["resource.kubernetes.io/pcieRoot"] =
      DeviceAttribute::String(std::move(root));
  return device;
}

TEST(AttributeConstraintTest, DistinctComparesValuesNotAddresses) {
  // Two equal strings stored apart: the 1.34 allocator let both through.
  const Device a = Gpu("gpu-0", std::string("GPU-1"), "pci0000:00");
  const Device b = Gpu("gpu-1", std::string("GPU-") + "1", "pci0000:00");
  AttributeConstraint distinct(AttributeConstraint::Kind::kDistinct,
                               "gpu.deviceshare.io/uuid");
  std::string why;
  ASSERT_TRUE(distinct.Add(a, kDriver, &why)) << why;
  EXPECT_FALSE(distinct.Add(b, kDriver, &why));
  EXPECT_THAT(why, HasSubstr("taken by another device"));
  distinct.Remove(a, kDriver);
  EXPECT_TRUE(distinct.Add(b, kDriver, &why)) << why;
}

TEST(AttributeConstraintTest, MatchKeepsTheFirstValueUntilAllAreRemoved) {
  const Device a = Gpu("gpu-0", "GPU-a", "pci0000:00");
  const Device b = Gpu("gpu-1", "GPU-b", "pci0000:00");
  const Device c = Gpu("gpu-2", "GPU-c", "pci0000:80");
  AttributeConstraint match(AttributeConstraint::Kind::kMatch,
                            "resource.kubernetes.io/pcieRoot");
  std::string why;
  ASSERT_TRUE(match.Add(a, kDriver, &why));
  ASSERT_TRUE(match.Add(b, kDriver, &why));
  EXPECT_FALSE(match.Add(c, kDriver, &why));
  EXPECT_THAT(why, HasSubstr("differs"));
  match.Remove(a, kDriver);
  EXPECT_FALSE(match.Add(c, kDriver, &why));  // b still holds pci0000:00
  match.Remove(b, kDriver);
  EXPECT_TRUE(match.Add(c, kDriver, &why)) << why;
}

TEST(AttributeConstraintTest, MissingAttributeAndForeignDomainDoNotMatch) {
  Device bare;
  bare.name = "gpu-9";
  AttributeConstraint match(AttributeConstraint::Kind::kMatch,
                            "gpu.deviceshare.io/uuid");
  std::string why;
  EXPECT_FALSE(match.Add(bare, kDriver, &why));
  EXPECT_THAT(why, HasSubstr("has no attribute"));
  // Another driver's domain is not our bare key.
  const Device a = Gpu("gpu-0", "GPU-a", "pci0000:00");
  AttributeConstraint other(AttributeConstraint::Kind::kMatch,
                            "gpu.nvidia.com/uuid");
  EXPECT_FALSE(other.Add(a, kDriver, &why));
  // Kinds differ: int 1 is not string "1".
  Device i = a, s = a;
  i.attributes["index"] = DeviceAttribute::Int(1);
  s.attributes["index"] = DeviceAttribute::String("1");
  AttributeConstraint index(AttributeConstraint::Kind::kMatch,
                            "gpu.deviceshare.io/index");
  ASSERT_TRUE(index.Add(i, kDriver, &why));
  EXPECT_FALSE(index.Add(s, kDriver, &why));
}

}  // namespace
}  // namespace deviceshare::dra
