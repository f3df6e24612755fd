// File: agent/dra_claim_preparer.h
//
// DraClaimPreparer: the node agent's ClaimPreparer (agent/claim_preparer.h).
// For each claim kubelet names it GETs the ResourceClaim, keeps the
// allocation results of this driver and this node's pool, checks each
// against the device published for it (known name, consumed capacity within
// the device's), sums the shares that land on one GPU (two requests of one
// claim may share a GPU; both are honoured, not the last one), asks the
// GPU's backend for the container edits, writes the claim's CDI spec
// (dra/cdi_spec.h) and journals the answer in
// <state_dir>/dra-claims/<uid>.json.
//
// Restarts: the journal is read back on every Prepare, so a prepared claim
// answers the same devices without touching the API server. Every file is
// written by rename and named after the claim, and the answer depends only
// on the claim, so a prepare killed half way and repeated writes the same
// files again, nothing twice. Unprepare removes the spec, the claim's
// cache folder and the journal entry; an unknown claim is already done.
//
// Thread safety: every method may be called from several threads at once;
// claims are prepared under one mutex (kubelet sends few at a time).
#ifndef DEVICESHARE_AGENT_DRA_CLAIM_PREPARER_H_
#define DEVICESHARE_AGENT_DRA_CLAIM_PREPARER_H_

#include <map>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/agent/claim_preparer.h"
#include "deviceshare/agent/resource_slices.h"
#include "deviceshare/backend/backend_set.h"
#include "deviceshare/backend/container_edits.h"
#include "deviceshare/kube/api_client.h"
#include "deviceshare/model/gpu.h"

namespace deviceshare::agent {

struct DraPreparerOptions {
  std::string driver = kDefaultDraDriver;
  std::string node_name;  // the pool
  std::string cdi_dir = "/var/run/cdi";
  std::string state_dir = "/run/deviceshare";
  // hook_path and mps_root; pod_uid and container_name are the claim's.
  EditOptions edits;
};

class DraClaimPreparer final : public ClaimPreparer {
 public:
  // `api` and `backends` must outlive the preparer.
  DraClaimPreparer(DraPreparerOptions options, kube::ApiClient* api,
                   const BackendSet* backends);

  // The devices this node publishes now and the GPUs behind them.
  void SetDevices(const NodeSlices& slices, const std::vector<Gpu>& gpus);

  std::map<std::string, ClaimPrepareResult> Prepare(
      const std::vector<ClaimRef>& claims) override;
  std::map<std::string, std::string> Unprepare(
      const std::vector<ClaimRef>& claims) override;

 private:
  struct Published {
    const dra::Device* device = nullptr;
    Gpu gpu;
  };

  absl::StatusOr<ClaimPrepareResult> PrepareOne(const ClaimRef& ref)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  std::string JournalPath(const std::string& uid) const;
  std::string CacheDir(const std::string& uid) const;

  const DraPreparerOptions options_;
  kube::ApiClient* const api_;
  const BackendSet* const backends_;

  absl::Mutex mu_;
  NodeSlices slices_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Published> devices_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_DRA_CLAIM_PREPARER_H_
