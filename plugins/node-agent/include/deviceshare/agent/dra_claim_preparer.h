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
// <state_dir>/dra-claims/<uid>.json. A claim for MIG partitions has each
// instance created, or adopted, at its allocated placement through a
// MigRealizer, which sees every journaled claim's instances on that GPU;
// unpreparing the last claim on a GPU removes the instances.
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
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/agent/claim_preparer.h"
#include "deviceshare/agent/mig_control.h"
#include "deviceshare/agent/mig_realizer.h"
#include "deviceshare/agent/resource_slices.h"
#include "deviceshare/backend/backend_set.h"
#include "deviceshare/backend/container_edits.h"
#include "deviceshare/dra/allocated_claim.h"
#include "deviceshare/kube/api_client.h"
#include "deviceshare/model/gpu.h"
#include "deviceshare/model/pod_allocation.h"
#include "deviceshare/trust/record_keys.h"
#include "deviceshare/trust/record_signature.h"
#include "nlohmann/json.hpp"

namespace deviceshare::agent {

struct DraPreparerOptions {
  std::string driver = kDefaultDraDriver;
  std::string node_name;  // the pool
  std::string cdi_dir = "/var/run/cdi";
  std::string state_dir = "/run/deviceshare";
  // hook_path and mps_root; pod_uid and container_name are the claim's.
  EditOptions edits;
  // Creates and adopts MIG instances at the allocated placements; null
  // where there is no NVML (claims for MIG partitions then fail).
  MigControl* mig_control = nullptr;
  // Set: prepare only claims whose allocation a key of it signed
  // (trust/record_signature.h); a refused claim fails with the reason, and
  // its pods get an AllocationRecordRefused Event. Not owned.
  trust::RecordKeySource* record_keys = nullptr;
  trust::RecordPolicy record_policy;
};

struct CdiGpuDevice;

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

  // A result of this driver and pool, with the device it names.
  struct OurResult {
    std::string path;  // "status.allocation.devices.results[i]"
    const dra::AllocatedDevice* result = nullptr;
    const Published* published = nullptr;
  };
  struct HeldMigJournal {
    std::string gpu_uuid;
    HeldMigSlot slot;
  };

  absl::StatusOr<ClaimPrepareResult> PrepareOne(const ClaimRef& ref)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // OK when the claim's allocation signature is one the options accept;
  // else PermissionDenied with the reason, after Events on its pods.
  absl::Status CheckSignature(const nlohmann::json& object,
                              const dra::AllocatedClaim& claim)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::vector<OurResult>> OursOf(
      const dra::AllocatedClaim& claim) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<ClaimPrepareResult> PrepareShares(
      const ClaimRef& ref, const std::vector<OurResult>& ours)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<ClaimPrepareResult> PrepareMig(
      const ClaimRef& ref, const std::vector<OurResult>& ours)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The CDI spec, then the journal entry (with the MIG slots held).
  absl::Status WriteClaim(const ClaimRef& ref,
                          const ContainerAllocation& container,
                          const std::vector<CdiGpuDevice>& cdi_devices,
                          const ClaimPrepareResult& result,
                          const std::vector<HeldMigJournal>& mig);
  std::optional<nlohmann::json> ReadJournal(const std::string& uid) const;
  // The MIG slots the journaled claims but `except_uid` hold on the GPU.
  std::vector<HeldMigSlot> HeldOn(const std::string& gpu_uuid,
                                  const std::string& except_uid) const;
  std::string JournalPath(const std::string& uid) const;
  std::string CacheDir(const std::string& uid) const;

  const DraPreparerOptions options_;
  kube::ApiClient* const api_;
  const BackendSet* const backends_;
  std::unique_ptr<MigRealizer> realizer_;  // null without MIG control

  absl::Mutex mu_;
  NodeSlices slices_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Published> devices_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_DRA_CLAIM_PREPARER_H_
