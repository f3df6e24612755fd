#include "deviceshare/backend/sharing_backend.h"

#include "absl/strings/str_cat.h"
#include "deviceshare/status_macros.h"

namespace deviceshare {

absl::StatusOr<PodAllocation> SharingBackend::Allocate(
    const PodRequest& request, NodeState& node,
    const PlacementOptions& options) const {
  NodeFit fit = Filter(request, node, options);
  if (!fit.fits()) {
    return absl::FailedPreconditionError(fit.message);
  }
  DS_RETURN_IF_ERROR(Commit(request, fit.allocation, node));
  return std::move(fit.allocation);
}

ReasonCode SharingBackend::BlockedCode(const NodeState& node) const {
  return ReasonCode::kFits;
}

ReasonCode SharingBackend::FilterCode(const PodRequest& request,
                                      const NodeState& node,
                                      const PlacementOptions& options) const {
  PlacementOptions quiet = options;
  quiet.explain = false;
  return Filter(request, node, quiet).code;
}

absl::StatusOr<dra::GpuDevices> SharingBackend::DraDevices(
    const Gpu& gpu, const dra::DeviceNaming& naming) const {
  return absl::UnimplementedError(absl::StrCat(
      "GPU ", gpu.uuid, ": mode ", mode().name(), " has no DRA devices"));
}

}  // namespace deviceshare
