// File: policy/stranded_capacity.h
//
// The cost by which the scheduler chooses a sharing mode for a pod that
// names none: the capacity a placement strands, i.e. grants beyond what the
// pod asked. A hami-core or mps share is exactly the request, so it strands
// nothing; a MIG instance is a fixed profile, so a 9 GiB pod on a 1g.10gb
// instance strands the rest of its memory and its whole SM slice when the
// pod asked no SM share.
//
// Per granted GPU: the mean of the memory and the SM share given beyond the
// request, each in percent of that GPU; summed over the pod's grants. A
// container that names its MIG profile asked for exactly that instance and
// strands nothing.
#ifndef DEVICESHARE_POLICY_STRANDED_CAPACITY_H_
#define DEVICESHARE_POLICY_STRANDED_CAPACITY_H_

#include "deviceshare/model/node_state.h"
#include "deviceshare/model/pod_allocation.h"
#include "deviceshare/model/pod_request.h"

namespace deviceshare {

// One grant of `memory_mib` and `cores` on `gpu` to a container that asked
// `asked`: the mean of the memory and SM share beyond the ask, in percent.
int GrantStrandedPercent(const ContainerRequest& asked, int64_t memory_mib,
                         int32_t cores, const Gpu& gpu);

// Pure; grants on GPUs `node` lacks count as stranding nothing.
int StrandedPercent(const PodRequest& request, const PodAllocation& placement,
                    const NodeState& node);

}  // namespace deviceshare

#endif  // DEVICESHARE_POLICY_STRANDED_CAPACITY_H_
