// File: dra/allocated_claim.h
//
// AllocatedClaim: what a DRA driver needs of a resource.k8s.io/v1
// ResourceClaim to prepare it -- its identity and the devices the scheduler
// allocated (status.allocation.devices.results), with the share id and the
// capacity each share consumes. DecodeAllocatedClaim reads it from the
// claim's JSON as the API server returns it.
//
// Decoding is strict about what it uses and ignores the rest: every error
// is InvalidArgument and names the field path and the value, e.g.
// `status.allocation.devices.results[1].consumedCapacity[memory]: "10x" is
// not a quantity`. A claim that is not allocated yet is FailedPrecondition.
// The decoder never throws, whatever the input (fuzzed:
// fuzz/allocated_claim_fuzz.cc).
//
// Thread safety: value types and pure functions.
#ifndef DEVICESHARE_DRA_ALLOCATED_CLAIM_H_
#define DEVICESHARE_DRA_ALLOCATED_CLAIM_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace deviceshare::dra {

struct AllocatedDevice {
  std::string request;  // "gpu", or "<request>/<subrequest>"
  std::string driver;
  std::string pool;
  std::string device;
  std::string share_id;  // empty: the device is allocated whole
  // Capacity name -> amount, in the capacity's unit (bytes for memory).
  // Empty for a device allocated whole.
  std::map<std::string, int64_t> consumed;
  bool admin_access = false;

  bool operator==(const AllocatedDevice& other) const = default;
};

struct AllocatedClaim {
  std::string ns;
  std::string name;
  std::string uid;
  std::vector<AllocatedDevice> results;

  bool operator==(const AllocatedClaim& other) const = default;
};

absl::StatusOr<AllocatedClaim> DecodeAllocatedClaim(
    const nlohmann::json& claim);

}  // namespace deviceshare::dra

#endif  // DEVICESHARE_DRA_ALLOCATED_CLAIM_H_
