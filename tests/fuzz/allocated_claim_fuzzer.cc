// libFuzzer target: arbitrary bytes as a ResourceClaim the node agent reads
// from the API server before it prepares the claim.
//
// Decoding must never crash, throw or trip a sanitizer. What decodes must
// hold together: every result has its identifying fields, and a consumed
// amount is never negative. A broken invariant traps, so libFuzzer saves
// the input.
#include <cstddef>
#include <cstdint>

#include "deviceshare/dra/allocated_claim.h"
#include "nlohmann/json.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nlohmann::json claim = nlohmann::json::parse(
      data, data + size, /*cb=*/nullptr, /*allow_exceptions=*/false);
  if (claim.is_discarded()) return 0;
  auto decoded = deviceshare::dra::DecodeAllocatedClaim(claim);
  if (!decoded.ok()) {
    if (decoded.status().message().empty()) __builtin_trap();
    return 0;
  }
  if (decoded->uid.empty() || decoded->name.empty()) __builtin_trap();
  for (const auto& result : decoded->results) {
    if (result.request.empty() || result.driver.empty() ||
        result.pool.empty() || result.device.empty()) {
      __builtin_trap();
    }
    for (const auto& [name, amount] : result.consumed) {
      if (amount < 0) __builtin_trap();
    }
  }
  return 0;
}
