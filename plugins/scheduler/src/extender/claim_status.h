// The edits a bind makes to a ResourceClaim's status (resource.k8s.io/v1),
// on the claim's JSON as the API server returns it: status.allocation and
// status.reservedFor entries {resource: pods, name, uid}. Everything else
// in the object is left as it was, so a PUT of the result changes only
// what the bind means to change.
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_EXTENDER_CLAIM_STATUS_H_
#define DEVICESHARE_EXTENDER_CLAIM_STATUS_H_

#include <string>

#include "deviceshare/dra/allocation_json.h"
#include "nlohmann/json.hpp"

namespace deviceshare::extender {

// Whether status.allocation is set (by anyone).
bool IsAllocated(const nlohmann::json& claim);

// The node that status.allocation.nodeSelector pins the claim to, as
// schedulers write it (one matchFields term on metadata.name); "" when it
// names none (a network-attached device, or no allocation).
std::string AllocatedNode(const nlohmann::json& claim);

// Sets status.allocation.
void SetAllocation(nlohmann::json& claim,
                   const dra::AllocationResult& allocation);
// Removes status.allocation.
void ClearAllocation(nlohmann::json& claim);

// Adds pod `name` (`uid`) to status.reservedFor unless an entry has its
// uid; returns whether the claim changed.
bool AddConsumer(nlohmann::json& claim, const std::string& name,
                 const std::string& uid);
// Removes the entries with `uid` (and reservedFor itself when it ends up
// empty, as the API server omits it); returns whether the claim changed.
bool RemoveConsumer(nlohmann::json& claim, const std::string& uid);
bool HasConsumers(const nlohmann::json& claim);

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_CLAIM_STATUS_H_
