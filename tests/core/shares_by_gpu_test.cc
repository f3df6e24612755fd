// NodeState::SharesByGpu: an allocation's grants grouped per GPU position,
// in position order, each GPU found by its uuid; the grant's gpu_index is
// only a hint (a decoded record has -1, and an index may name another GPU
// than the uuid does). Scores and commits read the charge from it.
#include <string>
#include <utility>
#include <vector>

#include "deviceshare/model/node_state.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/builders.h"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::Container;
using ::deviceshare::testing::Grant;
using ::deviceshare::testing::MakeNode;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

// The MiB of each share, per position.
std::vector<std::pair<size_t, std::vector<int64_t>>> MemoryByGpu(
    const std::vector<std::pair<size_t, std::vector<ContainerShare>>>& shares) {
  std::vector<std::pair<size_t, std::vector<int64_t>>> out;
  for (const auto& [position, list] : shares) {
    std::vector<int64_t> memory;
    for (const ContainerShare& share : list) memory.push_back(share.memory_mib);
    out.emplace_back(position, std::move(memory));
  }
  return out;
}

DeviceGrant IndexedGrant(const std::string& uuid, int32_t index,
                         int64_t memory_mib) {
  DeviceGrant grant = Grant(uuid, memory_mib, 10);
  grant.gpu_index = index;
  return grant;
}

TEST(SharesByGpuTest, GroupsPerGpuInPositionOrder) {
  const NodeState node(MakeNode("n", 4));
  PodAllocation allocation;
  allocation.containers = {
      Container(
          0, false,
          {IndexedGrant("GPU-n-3", 3, 100), IndexedGrant("GPU-n-1", 1, 200)}),
      Container(1, false, {IndexedGrant("GPU-n-3", 3, 300)})};
  auto shares = node.SharesByGpu(allocation);
  ASSERT_OK(shares);
  EXPECT_THAT(
      MemoryByGpu(*shares),
      ElementsAre(Pair(1, ElementsAre(200)), Pair(3, ElementsAre(100, 300))));
  EXPECT_EQ((*shares)[1].second[1].container_index, 1);
}

TEST(SharesByGpuTest, TheUuidDecidesWhateverTheIndexSays) {
  // GPU indices that are not positions: position 0 has index 5.
  NodeInventory inventory = MakeNode("n", 3);
  inventory.gpus[0].index = 5;
  inventory.gpus[1].index = 0;
  inventory.gpus[2].index = 1;
  const NodeState node(std::move(inventory));
  PodAllocation allocation;
  allocation.containers = {
      Container(0, false,
                {IndexedGrant("GPU-n-0", 0, 100),  // index 0 is position 1's
                 IndexedGrant("GPU-n-2", 2, 200),  // index 2 is nobody's
                 IndexedGrant("GPU-n-1", -1, 300)})};  // unresolved, as decoded
  auto shares = node.SharesByGpu(allocation);
  ASSERT_OK(shares);
  EXPECT_THAT(MemoryByGpu(*shares),
              ElementsAre(Pair(0, ElementsAre(100)), Pair(1, ElementsAre(300)),
                          Pair(2, ElementsAre(200))));
}

TEST(SharesByGpuTest, AGpuTheNodeLacksIsNotFound) {
  const NodeState node(MakeNode("n", 2));
  PodAllocation allocation;
  allocation.pod_key = "default/p";
  // The index names a GPU of the node, the uuid none.
  allocation.containers = {
      Container(0, false, {IndexedGrant("GPU-other-0", 0, 100)})};
  auto shares = node.SharesByGpu(allocation);
  EXPECT_EQ(shares.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(shares.status().message(),
              HasSubstr("pod default/p container 0: node n has no gpu "
                        "GPU-other-0"));
}

}  // namespace
}  // namespace deviceshare
