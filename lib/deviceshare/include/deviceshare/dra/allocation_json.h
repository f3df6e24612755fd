// File: dra/allocation_json.h
//
// The allocation a scheduler writes into a resource.k8s.io/v1
// ResourceClaim's status.allocation: the device each request got (with the
// share id and the capacity a share consumes), the configs that apply, and
// the node the claim is bound to. AllocationResultToJson writes it as the
// API's JSON; DecodeAllocatedClaim (dra/allocated_claim.h) reads it back.
//
// Thread safety: value types and pure functions.
#ifndef DEVICESHARE_DRA_ALLOCATION_JSON_H_
#define DEVICESHARE_DRA_ALLOCATION_JSON_H_

#include <map>
#include <string>
#include <vector>

#include "deviceshare/dra/slice_decode.h"
#include "nlohmann/json.hpp"

namespace deviceshare::dra {

struct DeviceResult {
  std::string request;  // "gpu", or "<request>/<subrequest>"
  std::string driver;
  std::string pool;
  std::string device;
  std::string share_id;  // empty: the device is allocated whole
  // consumedCapacity: capacity name -> amount; empty for a whole device.
  std::map<std::string, CapacityAmount> consumed;
  bool admin_access = false;

  bool operator==(const DeviceResult& other) const = default;
};

struct AllocationResult {
  std::vector<DeviceResult> results;
  // devices.config entries, kept whole: {"source": "FromClass"|"FromClaim",
  // "requests": [...], "opaque": {"driver", "parameters"}}.
  std::vector<nlohmann::json> config;
  std::string node_name;  // "": no nodeSelector (a network-attached device)

  bool operator==(const AllocationResult& other) const = default;
};

// status.allocation: {"devices": {"results", "config"?}, "nodeSelector"?},
// the node selector a single matchFields term on metadata.name.
nlohmann::json AllocationResultToJson(const AllocationResult& allocation);

}  // namespace deviceshare::dra

#endif  // DEVICESHARE_DRA_ALLOCATION_JSON_H_
