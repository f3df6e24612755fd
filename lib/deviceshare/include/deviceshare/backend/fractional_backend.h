// File: backend/fractional_backend.h
//
// FractionalBackend: the part common to the backends that hand out a
// fraction of a whole GPU (memory MiB and SM percent): placement, scores,
// bounds, commit and release are those of backend/fractional_share.h for
// the backend's mode, with the backend's cap on tenants. A subclass names
// its mode and says how its shares are enforced (Edits), starting from
// VisibleGpuEdits().
//
// Thread safety: immutable; see SharingBackend.
#ifndef DEVICESHARE_BACKEND_FRACTIONAL_BACKEND_H_
#define DEVICESHARE_BACKEND_FRACTIONAL_BACKEND_H_

#include "deviceshare/backend/fractional_share.h"
#include "deviceshare/backend/sharing_backend.h"
#include "deviceshare/config/device_config.h"

namespace deviceshare {

class FractionalBackend : public SharingBackend {
 public:
  // `limit`: a cap on a GPU's tenants below its split count, if the
  // mode has one (mps: the server's clients).
  FractionalBackend(SharingMode mode, const DeviceConfig& config,
                    TenantLimit limit = {})
      : mode_(mode), config_(config), limit_(limit) {}

  SharingMode mode() const final { return mode_; }

  NodeFit Filter(const PodRequest& request, const NodeState& node,
                 const PlacementOptions& options) const final;
  ReasonCode FilterCode(const PodRequest& request, const NodeState& node,
                        const PlacementOptions& options) const final;
  ReasonCode BlockedCode(const NodeState& node) const final;
  bool BlockedCodeApplies(const PodRequest& request) const final;
  int Score(const NodeState& node, const PodAllocation& placement,
            const PlacementOptions& options) const final;
  bool MayFit(const PodRequest& request, const NodeState& node) const final;
  int ScoreUpperBound(const PodRequest& request, const NodeState& node,
                      const PlacementOptions& options) const final;
  // A share charges its container's cores and its memory on the card.
  GrantCharges grant_charges() const final { return GrantCharges::kAsAsked; }
  bool MayFitHeadroom(const PodRequest& request, const NodeShape& shape,
                      const GpuHeadroom& headroom) const final;
  int ShapeScoreBound(const PodRequest& request, const NodeShape& shape,
                      int utilisation_percent,
                      const PlacementOptions& options) const final;
  absl::Status Commit(const PodRequest& request,
                      const PodAllocation& allocation,
                      NodeState& node) const final;
  void Release(absl::string_view pod_uid, NodeState& node) const final;
  // One device per GPU that many claims share (see backend/fractional_dra.cc).
  absl::StatusOr<dra::GpuDevices> DraDevices(
      const Gpu& gpu, const dra::DeviceNaming& naming) const final;

 protected:
  const DeviceConfig& config() const { return config_; }

  // The edits every whole-GPU share starts from: the granted GPUs as device
  // ids and NVIDIA_VISIBLE_DEVICES; for a container without GPUs,
  // GpulessContainerEdits (backend/container_edits.h).
  ContainerEdits VisibleGpuEdits(const ContainerAllocation& container) const;

 private:
  SharingMode mode_;
  DeviceConfig config_;
  TenantLimit limit_;
};

}  // namespace deviceshare

#endif  // DEVICESHARE_BACKEND_FRACTIONAL_BACKEND_H_
