// libvgpu.so across fork(): a forked child that initialises CUDA afresh
// charges under its own slot against the same container limit, and its
// exit refunds its own charges, never its parent's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "testing/vgpu_env.h"

namespace deviceshare::testing {
namespace {

TEST(VgpuForkTest, AChildChargesItsOwnAndLeavesItsParentsAlone) {
  VgpuWorld world({{FakeGpuUuid(0), 4096}});
  const ProbeResult result = world.Run(
      {.args = {"init", "alloc", "memalloc", "300m",
                // Parent holds 300 MiB: 800 MiB more would pass 1 GiB.
                "fork-alloc", "memalloc", "800m",
                // 700 MiB fits; the child then exits and gives it back.
                "fork-alloc", "memalloc", "700m", "meminfo", "alloc",
                "memalloc", "724m", "alloc", "memalloc", "2m"},
       .env = {{"CUDA_DEVICE_MEMORY_LIMIT", "1g"}},
       .preload = true});
  ASSERT_EQ(result.exit_code, 0) << result.Describe();
  // The children's lines come between the parent's (init, alloc each).
  EXPECT_EQ(result.Op("alloc", 1)["code"], 2) << result.Describe();
  EXPECT_EQ(result.Op("fork-alloc", 0)["child_exit"], 0) << result.Describe();
  EXPECT_EQ(result.Op("alloc", 2)["code"], 0) << result.Describe();
  EXPECT_EQ(result.Op("alloc", 2)["obtained"], 700 * kMiB) << result.Describe();
  EXPECT_EQ(result.Op("fork-alloc", 1)["child_exit"], 0) << result.Describe();
  // The parent's 300 MiB are still charged, the child's 700 MiB are not.
  EXPECT_EQ(result.Op("meminfo")["free"], 724 * kMiB) << result.Describe();
  EXPECT_EQ(result.Op("alloc", 3)["code"], 0) << result.Describe();
  EXPECT_EQ(result.Op("alloc", 4)["code"], 2) << result.Describe();
}

}  // namespace
}  // namespace deviceshare::testing
