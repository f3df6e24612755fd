// File: extender/in_flight.h
//
// InFlightIndex: per node, the pods bound there whose node agent has not
// handed out their GPUs yet (bind-phase "allocating"), with the share of
// each of their GPU containers. /bind consults it so that it never leaves
// two pods on one node that the node agent could confuse.
//
// Why: kubelet's Allocate call names devices, not the pod. The node agent
// (agent/allocation_matcher.h) serves containers in admission order and
// checks at PreStartContainer; it can only go wrong while two pods are in
// flight on one node with a container of each asking the same number of
// devices but for different shares. Identical shares are interchangeable.
//
// An entry counts until its deadline (a dead node agent must not block a
// node forever; its PreStart check still protects after that). Lookups are
// per node: a bind never scans the pods of other nodes.
//
// Not thread-safe: the Extender guards it with its own lock.
#ifndef DEVICESHARE_EXTENDER_IN_FLIGHT_H_
#define DEVICESHARE_EXTENDER_IN_FLIGHT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "deviceshare/model/pod_allocation.h"

namespace deviceshare::extender {

// The devices of each container that has any, in container order: what the
// node agent matches an Allocate call against.
using ContainerShares = std::vector<std::vector<DeviceGrant>>;

ContainerShares GpuShares(const PodAllocation& allocation);

// Whether some container of `a` and some container of `b` ask for the same
// number of devices with different shares (SameShare in
// model/pod_allocation.h).
bool Confusable(const ContainerShares& a, const ContainerShares& b);

struct InFlightPod {
  std::string key;  // "namespace/name"
  std::string node;
  absl::Time deadline = absl::InfiniteFuture();  // counts until then
  ContainerShares shares;
};

class InFlightIndex {
 public:
  // Adds `uid`, or updates it (its node may change). An entry already there
  // keeps the earlier of the two deadlines: the pod has been in flight
  // since then. A pod with no GPU container is not tracked.
  void Upsert(const std::string& uid, InFlightPod pod);
  // Moves the deadline of `uid`, if it is tracked, to `deadline`.
  void SetDeadline(const std::string& uid, absl::Time deadline);
  void Remove(const std::string& uid);
  bool Contains(const std::string& uid) const { return node_of_.contains(uid); }

  // The first pod in flight on `node`, other than `uid`, confusable with
  // `shares`. Entries of `node` past their deadline at `now` are dropped on
  // the way.
  std::optional<InFlightPod> FindConfusable(const std::string& node,
                                            const std::string& uid,
                                            const ContainerShares& shares,
                                            absl::Time now);

  // Drops every entry past its deadline at `now`; returns how many.
  int Expire(absl::Time now);

  size_t size() const { return node_of_.size(); }
  // Every tracked uid, in no particular order.
  std::vector<std::string> Uids() const;

 private:
  using NodePods = absl::flat_hash_map<std::string, InFlightPod>;

  absl::flat_hash_map<std::string, NodePods> by_node_;
  absl::flat_hash_map<std::string, std::string> node_of_;  // uid -> node
};

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_IN_FLIGHT_H_
