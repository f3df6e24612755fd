// File: scheduler/pod_cycle.h
//
// PodCycle: what the prefilter step learnt about one pod, read by every
// later step of the same decision (kube-scheduler's CycleState): the
// pod's policies and the backends that may serve it. Made by
// DecisionPath::PreFilter; cheap to make and to copy.
#ifndef DEVICESHARE_SCHEDULER_POD_CYCLE_H_
#define DEVICESHARE_SCHEDULER_POD_CYCLE_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "deviceshare/backend/sharing_backend.h"
#include "deviceshare/dra/dra_cluster.h"
#include "deviceshare/model/pod_request.h"

namespace deviceshare {

struct PodCycle {
  // Not owned: the request the cycle was made for outlives it.
  const PodRequest* request = nullptr;
  // The pod's policies (its override, else the config's) and explain=true.
  PlacementOptions placement;
  // The GPU policy made for this pod alone (a chain of policies, or one
  // with the pod's weights), when placement.gpu_policy is one.
  std::shared_ptr<const PlacementPolicy> own_gpu_policy;
  // The enabled backends that may serve the pod, in config order: the one
  // of the pod's mode, or every one when it names none; of those, only the
  // ones whose mode some registered GPU runs, when any does. Empty when its
  // mode is not enabled: every node then says ModeMismatch.
  absl::InlinedVector<const SharingBackend*, 4> backends;
  // What their grants may charge: kAsAsked when every one of them says so.
  GrantCharges grant_charges = GrantCharges::kUpToWholeGpu;

  // DRA, for a pod with claims: the cluster's DRA state, the keys of the
  // pod's claims, and the device order its GPU policy asks for. When a
  // claim cannot be looked up yet (a template's claim not created), why:
  // every node then says ClaimNotReady.
  const dra::DraCluster* dra = nullptr;
  std::vector<std::string> claim_keys;
  std::string claims_unready;
  dra::DeviceOrder device_order = dra::DeviceOrder::kBestFit;

  const PodRequest& pod() const { return *request; }
};

}  // namespace deviceshare

#endif  // DEVICESHARE_SCHEDULER_POD_CYCLE_H_
