// GatherPools (dra/node_pools.h): generations, completeness, order.
#include <string>
#include <vector>

#include "deviceshare/dra/node_pools.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace deviceshare::dra {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

ResourceSlice Slice(std::string driver, std::string name, int64_t generation,
                    int64_t count, std::vector<std::string> devices) {
  ResourceSlice slice;
  slice.name = std::move(name);
  slice.driver = std::move(driver);
  slice.node_name = "node-a";
  slice.pool = {"node-a", generation, count};
  for (std::string& device : devices) {
    Device d;
    d.name = std::move(device);
    slice.devices.push_back(d);
  }
  return slice;
}

std::vector<std::string> Names(const NodePool& pool) {
  std::vector<std::string> names;
  for (const PoolDevice& d : pool.devices) names.push_back(d.device->name);
  return names;
}

TEST(NodePoolsTest, HighestGenerationWinsInADeterministicOrder) {
  const ResourceSlice old_slice = Slice("b.io", "s-old", 1, 1, {"gpu-9"});
  const ResourceSlice second = Slice("b.io", "s-2", 2, 2, {"gpu-2"});
  const ResourceSlice first = Slice("b.io", "s-1", 2, 2, {"gpu-0", "gpu-1"});
  const ResourceSlice other = Slice("a.io", "x", 5, 1, {"dev"});
  NodePools pools = GatherPools({&old_slice, &second, &first, &other});
  ASSERT_EQ(pools.pools.size(), 2u);
  EXPECT_EQ(pools.pools[0].driver, "a.io");
  EXPECT_EQ(pools.pools[1].generation, 2);
  EXPECT_TRUE(pools.pools[1].complete);
  EXPECT_THAT(Names(pools.pools[1]), ElementsAre("gpu-0", "gpu-1", "gpu-2"));
}

TEST(NodePoolsTest, MissingSlicesMakeThePoolIncomplete) {
  const ResourceSlice only = Slice("b.io", "s-1", 3, 2, {"gpu-0"});
  NodePools pools = GatherPools({&only});
  ASSERT_EQ(pools.pools.size(), 1u);
  EXPECT_FALSE(pools.pools[0].complete);
}

TEST(NodePoolsTest, DuplicateDevicesLeaveOnlyThatPoolOut) {
  const ResourceSlice a = Slice("b.io", "s-1", 1, 2, {"gpu-0"});
  const ResourceSlice b = Slice("b.io", "s-2", 1, 2, {"gpu-0"});
  const ResourceSlice other = Slice("a.io", "x", 1, 1, {"dev"});
  NodePools pools = GatherPools({&a, &b, &other});
  ASSERT_EQ(pools.pools.size(), 1u);
  EXPECT_EQ(pools.pools[0].driver, "a.io");
  ASSERT_EQ(pools.invalid.size(), 1u);
  EXPECT_THAT(pools.invalid[0], HasSubstr("gpu-0 is published twice"));
}

}  // namespace
}  // namespace deviceshare::dra
