// Pods as the node agent sees them: bound to a node, carrying the
// allocation record a scheduler wrote (k8s/pod_annotations.h), in either
// dialect.
#ifndef DEVICESHARE_TESTS_TESTING_AGENT_PODS_H_
#define DEVICESHARE_TESTS_TESTING_AGENT_PODS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "deviceshare/model/pod_allocation.h"
#include "deviceshare/model/pod_request.h"
#include "nlohmann/json.hpp"
#include "testing/kube_objects.h"

namespace deviceshare::testing {

// A hami-core grant of `memory_mib` and `cores` on `uuid`.
DeviceGrant ShareOf(const std::string& uuid, int64_t memory_mib, int cores);

// A pod of `spec` (container "main"; spec.gpus must equal grants.size())
// bound to `node`, phase Pending, whose record in `dialect` gives the
// container `grants`, decided at unix second `decided_at`.
nlohmann::json BoundPod(const PodSpec& spec, Dialect dialect,
                        const std::string& node,
                        const std::vector<DeviceGrant>& grants,
                        int64_t decided_at = 1'700'000'000);

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_AGENT_PODS_H_
