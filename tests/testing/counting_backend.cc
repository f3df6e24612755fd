#include "testing/counting_backend.h"

#include <utility>

#include "deviceshare/builtin_backends.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::testing {
namespace {

class CountingBackend final : public SharingBackend {
 public:
  CountingBackend(std::unique_ptr<SharingBackend> inner, FilterCounts* counts)
      : inner_(std::move(inner)), counts_(counts) {}

  absl::string_view name() const override { return inner_->name(); }
  SharingMode mode() const override { return inner_->mode(); }
  NodeFit Filter(const PodRequest& request, const NodeState& node,
                 const PlacementOptions& options) const override {
    counts_->Add(node.name());
    return inner_->Filter(request, node, options);
  }
  int Score(const NodeState& node, const PodAllocation& placement,
            const PlacementOptions& options) const override {
    return inner_->Score(node, placement, options);
  }
  bool MayFit(const PodRequest& request, const NodeState& node) const override {
    return inner_->MayFit(request, node);
  }
  int ScoreUpperBound(const PodRequest& request, const NodeState& node,
                      const PlacementOptions& options) const override {
    return inner_->ScoreUpperBound(request, node, options);
  }
  int ShapeScoreBound(const PodRequest& request, const NodeShape& shape,
                      int utilisation_percent,
                      const PlacementOptions& options) const override {
    return inner_->ShapeScoreBound(request, shape, utilisation_percent,
                                   options);
  }
  bool MayFitHeadroom(const PodRequest& request, const NodeShape& shape,
                      const GpuHeadroom& headroom) const override {
    return inner_->MayFitHeadroom(request, shape, headroom);
  }
  absl::Status Commit(const PodRequest& request,
                      const PodAllocation& allocation,
                      NodeState& node) const override {
    return inner_->Commit(request, allocation, node);
  }
  void Release(absl::string_view pod_uid, NodeState& node) const override {
    inner_->Release(pod_uid, node);
  }
  ContainerEdits Edits(const ContainerAllocation& container,
                       const EditOptions& options) const override {
    return inner_->Edits(container, options);
  }

 private:
  std::unique_ptr<SharingBackend> inner_;
  FilterCounts* counts_;
};

}  // namespace

void FilterCounts::Add(const std::string& node) {
  absl::MutexLock lock(&mu_);
  ++counts_[node];
}

std::map<std::string, int> FilterCounts::Take() {
  absl::MutexLock lock(&mu_);
  return std::exchange(counts_, {});
}

absl::Status RegisterCountingBuiltins(BackendRegistry& registry,
                                      FilterCounts* counts) {
  BackendRegistry builtins;
  DS_RETURN_IF_ERROR(RegisterBuiltinBackends(builtins));
  for (const std::string& name : builtins.RegisteredNames()) {
    DS_RETURN_IF_ERROR(registry.Register(
        name,
        [name, counts](const Config& config)
            -> absl::StatusOr<std::unique_ptr<SharingBackend>> {
          BackendRegistry real;
          DS_RETURN_IF_ERROR(RegisterBuiltinBackends(real));
          DS_ASSIGN_OR_RETURN(std::unique_ptr<SharingBackend> inner,
                              real.Create(name, config));
          return std::make_unique<CountingBackend>(std::move(inner), counts);
        }));
  }
  return absl::OkStatus();
}

}  // namespace deviceshare::testing
