// The glue between the allocation matcher and MIG realization: a
// MigPreparer that creates or adopts the instances of a container's MIG
// grants through a MigRealizer over `control`, and fills the grants'
// runtime identity (MIG uuid, GPU and compute instance ids).
#ifndef DEVICESHARE_AGENT_SERVICE_MIG_PREPARER_H_
#define DEVICESHARE_AGENT_SERVICE_MIG_PREPARER_H_

#include <vector>

#include "absl/status/status.h"
#include "deviceshare/agent/allocation_matcher.h"
#include "deviceshare/agent/mig_control.h"

namespace deviceshare::agent {

// `control` must outlive the preparer.
MigPreparer MakeMigPreparer(MigControl* control);

// Removes MIG instances no live pod holds, on GPUs where no live pod holds
// one (the realizer's rule); logs what it did.
void SweepOrphanMigInstances(MigControl* control,
                             const std::vector<std::string>& gpu_uuids,
                             const std::vector<PodRecord>& live);

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_SERVICE_MIG_PREPARER_H_
