// File: dra/node_allocator.h
//
// NodeAllocator: allocates ResourceClaims on one node's devices with the
// semantics of Kubernetes 1.34's structured allocator -- ExactCount and All
// requests, firstAvailable subrequests tried in order, DeviceClass and
// request CEL selectors, matchAttribute / distinctAttribute constraints,
// consumable capacity with request policies and share ids, shared counters,
// admin access -- and better where 1.34 is weak:
//   - deterministic: pools, slices and devices in a fixed order;
//   - scored: among the devices that fit, the one the policy's order
//     prefers -- kBestFit (binpack: the shared device left with the least
//     capacity, the smallest dedicated device) or kSpread (the one left
//     with the most) -- not the first one found (kFirstFit reproduces
//     1.34's choice for comparisons);
//   - bounded: combinations, never permutations, of the devices of one
//     request; necessary conditions checked before any search (enough
//     distinct devices for the dedicated requests, a value every
//     matchAttribute request can share); symmetry: a device alike one that
//     already failed at the same depth (same capacities, usage, the
//     alternatives that take it and the constrained attributes) is not
//     tried again; and a step budget that ends an unfinished search with a
//     verdict, never a 10 s timeout;
//   - incremental: usage is a PoolUsage per pool, charged and freed per
//     allocation, never rebuilt from every claim.
//
// A node's utilisation (what binpack and spread score) is the mean over
// its physical units of the fraction in use: a counter set (one
// partitionable GPU) by its counters, a shared device by its capacities,
// a dedicated device 0 or 1.
//
// "Does not fit" is a verdict with a reason. Errors are for bad input (an
// unknown DeviceClass, a selector outside the CEL subset).
//
// Thread safety: Try(), UtilisationPercent() and the accessors may run on
// many threads at once; Allocate(), Commit(), Charge() and Release() need
// the caller's exclusive access.
#ifndef DEVICESHARE_DRA_NODE_ALLOCATOR_H_
#define DEVICESHARE_DRA_NODE_ALLOCATOR_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "deviceshare/dra/allocation_json.h"
#include "deviceshare/dra/cel.h"
#include "deviceshare/dra/claim_spec.h"
#include "deviceshare/dra/device_class.h"
#include "deviceshare/dra/node_pools.h"
#include "deviceshare/dra/pool_usage.h"

namespace deviceshare::dra {

struct SelectorMemo;

// The order the devices of a request are tried in.
enum class DeviceOrder { kBestFit, kSpread, kFirstFit };

struct AllocatorOptions {
  // Allocate()'s order; Try() is told its own.
  DeviceOrder order = DeviceOrder::kBestFit;
  // Candidate tries per Allocate call before the search gives up.
  int64_t max_steps = 100000;
  // A new share id (a UID) per allocation of a multi-allocatable device.
  std::function<std::string()> new_share_id;
};

struct ClaimsVerdict {
  bool fits = false;
  std::string reason;
  std::vector<AllocationResult> allocations;  // one per claim, in order
  int64_t steps = 0;
  // The node's utilisation percent once the allocations are charged.
  int utilisation_after = 0;
};

// What a node's whole GPUs (devices that consume no counters) have and
// have given out, for reports: memory in bytes, cores in percent (a device
// without a `cores` capacity counts 100).
struct GpuTotals {
  int64_t devices = 0;
  int64_t idle = 0;  // no allocation at all
  int64_t memory_capacity = 0;
  int64_t memory_used = 0;
  int64_t core_capacity = 0;
  int64_t cores_used = 0;

  GpuTotals& operator+=(const GpuTotals& other);
};

class NodeAllocator {
 public:
  // `slices` reach the node; `classes` by name; all must outlive the
  // allocator, as must `cel`. InvalidArgument for a pool whose counters are
  // defined twice.
  static absl::StatusOr<std::unique_ptr<NodeAllocator>> Create(
      std::string node_name, const std::vector<const ResourceSlice*>& slices,
      const std::map<std::string, DeviceClass>* classes, CelCache* cel,
      AllocatorOptions options);

  ~NodeAllocator();

  // Allocates all `claims` together. With `commit` the devices are charged
  // (Release gives them back); without, the node is left as it was.
  absl::StatusOr<ClaimsVerdict> Allocate(
      const std::vector<const ResourceClaim*>& claims, bool commit);

  // What Allocate(claims, false) would answer in `order`, computed on a
  // copy of the usage: the node is not touched. Shares get no id yet.
  // Thread-safe.
  absl::StatusOr<ClaimsVerdict> Try(
      const std::vector<const ResourceClaim*>& claims, DeviceOrder order) const;

  // Charges allocations that Try() found, checking that each device still
  // has the room, and gives each share without an id a new one: all or
  // nothing. FailedPrecondition (naming the device) when one no longer
  // fits, NotFound for a device this node lacks.
  absl::Status Commit(std::vector<AllocationResult>& allocations);

  // Charges an allocation made elsewhere (a claim already allocated)
  // without checking room: the API server's word is what is in use.
  // NotFound for a device this node does not have.
  absl::Status Charge(const AllocationResult& allocation);
  // Gives back an allocation charged by Allocate or Charge.
  void Release(const AllocationResult& allocation);

  // The node's utilisation now, 0..100 (see the top of this file).
  int UtilisationPercent() const;
  GpuTotals Totals() const;

  const NodePools& pools() const { return pools_; }
  // What each pool has given out, parallel to pools().pools.
  const std::vector<PoolUsage>& usage() const { return usage_; }

 private:
  NodeAllocator() = default;
  // The device of `driver`/`pool`/`name`, or nullptr.
  const PoolDevice* Find(const std::string& driver, const std::string& pool,
                         const std::string& name, size_t* pool_index) const;
  int Utilisation(const std::vector<PoolUsage>& usage) const;

  std::string node_name_;
  NodePools pools_;
  std::vector<PoolUsage> usage_;  // parallel to pools_.pools
  const std::map<std::string, DeviceClass>* classes_ = nullptr;
  CelCache* cel_ = nullptr;
  // Selector answers per device: a selector is evaluated once per device
  // for the allocator's life (its slices do not change).
  std::unique_ptr<SelectorMemo> memo_;
  AllocatorOptions options_;
};

}  // namespace deviceshare::dra

#endif  // DEVICESHARE_DRA_NODE_ALLOCATOR_H_
