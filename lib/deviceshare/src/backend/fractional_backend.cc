#include "deviceshare/backend/fractional_backend.h"

#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "deviceshare/backend/container_placement.h"
#include "deviceshare/backend/fractional_share.h"

namespace deviceshare {

NodeFit FractionalBackend::Filter(const PodRequest& request,
                                  const NodeState& node,
                                  const PlacementOptions& options) const {
  return PlaceShares(request, node, mode_, *options.gpu_policy, options.explain,
                     limit_);
}

ReasonCode FractionalBackend::FilterCode(
    const PodRequest& request, const NodeState& node,
    const PlacementOptions& options) const {
  return PlaceSharesCode(request, node, mode_, *options.gpu_policy, limit_);
}

ReasonCode FractionalBackend::BlockedCode(const NodeState& node) const {
  return SharesBlockedCode(node, mode_);
}

bool FractionalBackend::BlockedCodeApplies(const PodRequest& request) const {
  // The tenant limit is checked between a GPU's health and its ledger: the
  // GPUs' blocked codes leave it out.
  return limit_.max_tenants <= 0 && SharesBlockedCodeApplies(request, mode_);
}

int FractionalBackend::Score(const NodeState& node,
                             const PodAllocation& placement,
                             const PlacementOptions& options) const {
  return NodeScoreOf(options, node, placement);
}

bool FractionalBackend::MayFit(const PodRequest& request,
                               const NodeState& node) const {
  return MaySharesFit(request, node, mode_, limit_);
}

int FractionalBackend::ScoreUpperBound(const PodRequest& request,
                                       const NodeState& node,
                                       const PlacementOptions& options) const {
  return ShareScoreUpperBound(*options.node_policy, request, node);
}

bool FractionalBackend::MayFitHeadroom(const PodRequest& request,
                                       const NodeShape& shape,
                                       const GpuHeadroom& headroom) const {
  return MaySharesFitHeadroom(request, shape, headroom);
}

int FractionalBackend::ShapeScoreBound(const PodRequest& request,
                                       const NodeShape& shape,
                                       int utilisation_percent,
                                       const PlacementOptions& options) const {
  return ShareShapeScoreBound(*options.node_policy, request, shape,
                              utilisation_percent);
}

absl::Status FractionalBackend::Commit(const PodRequest& request,
                                       const PodAllocation& allocation,
                                       NodeState& node) const {
  if (limit_.max_tenants > 0) {
    auto by_gpu = node.SharesByGpu(allocation);
    if (!by_gpu.ok()) return by_gpu.status();
    for (const auto& [position, shares] : *by_gpu) {
      const DeviceLedger& ledger = node.ledger(position);
      const int32_t want = ChargeOf(shares).slots;
      if (TenantLimitCode(limit_, ledger, want) != ReasonCode::kFits) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "pod %s: %s gpu=%s %s=%d max=%d want=%d", allocation.pod_key,
            limit_.code.name(), ledger.gpu().uuid, limit_.noun,
            ledger.used_slots(), limit_.max_tenants, want));
      }
    }
  }
  return CommitShares(request, allocation, mode_, node);
}

void FractionalBackend::Release(absl::string_view pod_uid,
                                NodeState& node) const {
  ReleaseShares(pod_uid, mode_, node);
}

ContainerEdits FractionalBackend::VisibleGpuEdits(
    const ContainerAllocation& container) const {
  if (container.devices.empty()) {
    return GpulessContainerEdits(config_.overwrite_env);
  }
  ContainerEdits edits;
  for (const DeviceGrant& grant : container.devices) {
    edits.device_ids.push_back(grant.uuid);
  }
  edits.env.emplace_back("NVIDIA_VISIBLE_DEVICES",
                         absl::StrJoin(edits.device_ids, ","));
  return edits;
}

}  // namespace deviceshare
