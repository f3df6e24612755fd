#include "deviceshare/model/reason_code.h"

#include <map>
#include <string>
#include <vector>

#include "deviceshare/dra/dra_reasons.h"
#include "deviceshare/mig/mig_backend.h"
#include "deviceshare/mps/mps_backend.h"
#include "gtest/gtest.h"

namespace deviceshare {
namespace {

// A code's order is its identity (ReasonCode's operator==): two codes
// sharing one would be taken for each other, in tallies and comparisons.
// Every code defined in the tree, core and backends.
TEST(ReasonCodeTest, EveryOrderIsUnique) {
  const std::vector<ReasonCode> codes = {
      ReasonCode::kFits,
      ReasonCode::kGpuUnhealthy,
      ReasonCode::kModeMismatch,
      ReasonCode::kTypeMismatch,
      ReasonCode::kUuidMismatch,
      ReasonCode::kSplitExhausted,
      ReasonCode::kInsufficientMemory,
      ReasonCode::kInsufficientCores,
      ReasonCode::kExclusiveConflict,
      ReasonCode::kComputeExhausted,
      ReasonCode::kAlreadyOnGpu,
      ReasonCode::kPartitionTaken,
      ReasonCode::kGroupOnGpu,
      ReasonCode::kGpuCordoned,
      ReasonCode::kQuotaExceeded,
      ReasonCode::kNoGpus,
      ReasonCode::kInsufficientGpus,
      ReasonCode::kNumaNotFit,
      ReasonCode::kInsufficientCpu,
      ReasonCode::kInsufficientNodeMemory,
      ReasonCode::kNodeUnknown,
      ReasonCode::kResourceNotServed,
      dra::kClaimNotReady,
      dra::kClaimElsewhere,
      dra::kNoDraDevices,
      dra::kDevicesUnavailable,
      mig::kMigUnknownModel,
      mig::kMigNoProfile,
      mig::kMigNoSlot,
      mps::kMpsClientsExhausted,
  };
  std::map<int, std::string> names_by_order;
  for (ReasonCode code : codes) {
    auto [it, fresh] =
        names_by_order.emplace(code.order(), std::string(code.name()));
    EXPECT_TRUE(fresh) << code.name() << " has order " << code.order()
                       << ", as " << it->second << " has";
  }
  for (size_t i = 0; i < codes.size(); ++i) {
    for (size_t j = i + 1; j < codes.size(); ++j) {
      EXPECT_NE(codes[i], codes[j]) << codes[i].name() << codes[j].name();
    }
  }
}

}  // namespace
}  // namespace deviceshare
