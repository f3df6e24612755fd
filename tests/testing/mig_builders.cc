#include "testing/mig_builders.h"

#include "absl/strings/str_cat.h"
#include "deviceshare/mig/mig_backend.h"
#include "deviceshare/mig/mig_catalog.h"
#include "gtest/gtest.h"
#include "testing/builders.h"

namespace deviceshare::testing {

Gpu MigGpu(int index, const std::string& model, int64_t memory_mib,
           const std::string& uuid_prefix) {
  Gpu gpu;
  gpu.uuid = absl::StrCat(uuid_prefix, index);
  gpu.index = index;
  gpu.model = model;
  gpu.memory_mib = memory_mib;
  gpu.split_count = 10;
  gpu.mig_capable = true;
  gpu.mode = mig::kMode;
  return gpu;
}

MigSlot Slot(const std::string& profile, int32_t start, int32_t size) {
  return MigSlot{profile, start, size, "", -1};
}

Gpu WithSevenOneG10gb(Gpu gpu) {
  for (int s = 0; s < 7; ++s) {
    gpu.mig_instances.push_back(Slot("1g.10gb", s, 1));
  }
  return gpu;
}

NodeState MakeNodeState(std::vector<Gpu> gpus) {
  NodeInventory inventory;
  inventory.name = "n1";
  inventory.gpus = std::move(gpus);
  return NodeState(std::move(inventory));
}

PodRequest MigPod(const std::string& name,
                  std::vector<ContainerRequest> containers) {
  PodRequest pod = MakePod(name, std::move(containers));
  pod.mode = mig::kMode;
  return pod;
}

const DeviceGrant& OnlyGrant(const PodAllocation& allocation) {
  EXPECT_EQ(allocation.containers.size(), 1u);
  EXPECT_EQ(allocation.containers.at(0).devices.size(), 1u);
  return allocation.containers.at(0).devices.at(0);
}

std::vector<mig::MigGeometry> VolcanoA100Groups() {
  return {
      mig::MigGeometry{"group1", {{"1g.10gb", 9728, 0, 7}}},
      mig::MigGeometry{"group2",
                       {{"2g.20gb", 19968, 0, 3}, {"1g.10gb", 9728, 0, 1}}},
      mig::MigGeometry{"group3", {{"3g.40gb", 40192, 0, 2}}},
      mig::MigGeometry{"group4", {{"7g.80gb", 80896, 0, 1}}},
  };
}

std::unique_ptr<SharingBackend> MigBackend(const Config& config) {
  absl::StatusOr<std::unique_ptr<SharingBackend>> backend =
      mig::NewMigBackend(config, mig::MigCatalog::Builtin());
  EXPECT_TRUE(backend.ok()) << backend.status();
  return backend.ok() ? *std::move(backend) : nullptr;
}

absl::StatusOr<PodAllocation> MigBackendFixture::Allocate(const PodRequest& pod,
                                                          NodeState& node) {
  absl::StatusOr<PodAllocation> placed =
      backend_->Allocate(pod, node, options_);
  EXPECT_TRUE(node.CheckInvariants().ok()) << node.CheckInvariants();
  return placed;
}

}  // namespace deviceshare::testing
