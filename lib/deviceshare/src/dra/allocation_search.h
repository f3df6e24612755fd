// File: dra/allocation_search.h (private to the core's dra/ sources)
//
// AllocationSearch: one NodeAllocator::Allocate call. Plan() resolves every
// request of every claim to its candidate devices (class and request
// selectors, capacity keys) in the allocator's order; Run() checks the
// necessary conditions, then searches depth first -- claims, requests,
// the devices of a request as combinations -- charging PoolUsage and the
// claim's constraints as it goes and undoing them on the way back. Undo()
// gives back everything a successful Run() charged.
//
// Thread safety: one call, one thread.
#ifndef DEVICESHARE_DRA_SRC_ALLOCATION_SEARCH_H_
#define DEVICESHARE_DRA_SRC_ALLOCATION_SEARCH_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/dra/attribute_constraint.h"
#include "deviceshare/dra/node_allocator.h"

namespace deviceshare::dra {

// Whether one selector holds on one device; the slices a NodeAllocator
// reads do not change, so an answer holds for its life. Shared by the
// searches that run at once on one node.
struct SelectorMemo {
  absl::Mutex mu;
  absl::flat_hash_map<std::pair<std::string, const Device*>, bool> answers
      ABSL_GUARDED_BY(mu);
};

class AllocationSearch {
 public:
  AllocationSearch(const std::string& node_name, const NodePools& pools,
                   std::vector<PoolUsage>& usage,
                   const std::map<std::string, DeviceClass>& classes,
                   CelCache& cel, const AllocatorOptions& options,
                   DeviceOrder order, SelectorMemo& memo);

  absl::Status Plan(const std::vector<const ResourceClaim*>& claims);
  ClaimsVerdict Run();
  void Undo();

 private:
  struct Candidate {
    size_t pool = 0;
    const PoolDevice* device = nullptr;
  };
  // One way to satisfy a request: its exact form or one subrequest.
  struct Alternative {
    const ExactRequest* request = nullptr;
    std::string result_name;  // "gpu" or "gpu/share"
    // For allocationMode All, only the devices with room for the request
    // before the search (1.34 leaves the others out of "all").
    std::vector<Candidate> candidates;
    bool complete_pools = true;  // every candidate's pool is complete
    // The claim's constraints that name this request, this subrequest or
    // no request at all.
    std::vector<AttributeConstraint*> constraints;
  };
  struct RequestPlan {
    std::string name;
    std::vector<Alternative> alternatives;  // in firstAvailable order
  };
  struct ClaimPlan {
    const ResourceClaim* claim = nullptr;
    std::vector<RequestPlan> requests;
    std::vector<std::unique_ptr<AttributeConstraint>> constraints;
    // min_results_after[r]: the fewest devices requests r.. can take, to
    // keep a claim within the API's 32 results without searching.
    std::vector<int64_t> min_results_after;
  };
  // One device placed, to undo and to report.
  struct Placed {
    size_t claim = 0;
    size_t request = 0;
    const Alternative* alternative = nullptr;
    Candidate candidate;
    CapacityVerdict verdict;
    bool charged = false;
  };

  absl::StatusOr<Alternative> Resolve(const ExactRequest& request,
                                      std::string result_name);
  void Constrain(ClaimPlan& plan);
  absl::StatusOr<bool> Matches(const std::vector<std::string>& selectors,
                               const PoolDevice& device);
  void Order(const ExactRequest& request, std::vector<Candidate>& candidates);
  bool NecessaryConditionsHold();
  bool SomeValueServesAll(const ClaimPlan& plan,
                          const DeviceConstraint& constraint);
  bool PlaceClaim(size_t c, size_t r);
  bool Fill(size_t c, size_t r, const Alternative& a, int64_t k, int64_t count,
            size_t min_pos);
  bool TryDevice(size_t c, size_t r, const Alternative& a, size_t pos);
  bool HeldByClaim(size_t c, const PoolDevice* device) const;
  // Symmetry: whether candidate `pos` of `a` is alike one of `failed`
  // (positions that failed at the same depth), so it fails too. Devices
  // are alike when nothing the rest of the search reads tells them apart:
  // pool, capacities, whether shared, which alternatives take them, the
  // values of constrained attributes (a distinct attribute whose values
  // are all different counts only as present), and their usage now.
  bool AlikeFailed(const Alternative& a, size_t pos,
                   const std::vector<size_t>& failed);
  int ClassOf(const PoolDevice* device);
  void BuildClasses();
  void Unplace();
  ClaimsVerdict Report() const;
  // Claim c's configs: each class's (naming the requests it served) and
  // the claim's own that apply.
  void AddConfigs(
      size_t c, const std::map<std::string, std::vector<std::string>>& by_class,
      AllocationResult& allocation) const;

  const std::string& node_name_;
  const NodePools& pools_;
  std::vector<PoolUsage>& usage_;
  const std::map<std::string, DeviceClass>& classes_;
  CelCache& cel_;
  const AllocatorOptions& options_;
  const DeviceOrder order_;
  SelectorMemo& memo_;

  std::vector<ClaimPlan> plans_;
  std::vector<Placed> placed_;       // claim by claim, in order
  std::vector<int64_t> results_of_;  // per claim, devices placed
  // Built on the first backtrack (a search that succeeds at once needs
  // none): the symmetry class of every candidate device.
  absl::flat_hash_map<const PoolDevice*, int> class_of_;
  bool classes_built_ = false;
  int64_t steps_ = 0;
  bool out_of_steps_ = false;
  std::string last_reason_;
};

}  // namespace deviceshare::dra

#endif  // DEVICESHARE_DRA_SRC_ALLOCATION_SEARCH_H_
