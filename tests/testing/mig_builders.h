// File: testing/mig_builders.h
//
// Builders shared by the mig and mps backend tests: GPUs in a sharing mode,
// a node of given GPUs, MIG pods, Volcano's default A100-80GB geometry
// groups, a mig backend over the built-in catalog, and a fixture that
// drives one.
#ifndef DEVICESHARE_TESTS_TESTING_MIG_BUILDERS_H_
#define DEVICESHARE_TESTS_TESTING_MIG_BUILDERS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/backend/sharing_backend.h"
#include "deviceshare/config/scheduler_config.h"
#include "deviceshare/mig/mig_config.h"
#include "deviceshare/model/gpu.h"
#include "deviceshare/model/node_state.h"
#include "deviceshare/model/pod_allocation.h"
#include "deviceshare/model/pod_request.h"
#include "gtest/gtest.h"

namespace deviceshare::testing {

// A MIG-mode GPU `index` of `model`, uuid "<uuid_prefix><index>", split 10.
Gpu MigGpu(int index, const std::string& model, int64_t memory_mib,
           const std::string& uuid_prefix = "GPU-mig-");

// A MIG instance the node reports (Gpu::mig_instances): `profile` at
// `start`, `size` memory slices, no configMap group.
MigSlot Slot(const std::string& profile, int32_t start, int32_t size);

// `gpu` with seven 1g.10gb instances already made, at slices 0..6 (an
// A100-80GB or H100-80GB cut into its smallest profile).
Gpu WithSevenOneG10gb(Gpu gpu);

// Node "n1" with `gpus`.
NodeState MakeNodeState(std::vector<Gpu> gpus);

// MakePod with mode mig.
PodRequest MigPod(const std::string& name,
                  std::vector<ContainerRequest> containers);

// The single grant of a one-container, one-device allocation (a test
// failure otherwise).
const DeviceGrant& OnlyGrant(const PodAllocation& allocation);

// Volcano's default knownMigGeometries groups for A100-80GB.
std::vector<mig::MigGeometry> VolcanoA100Groups();

// mig::NewMigBackend over the built-in catalog (a test failure and nullptr
// if it cannot be made).
std::unique_ptr<SharingBackend> MigBackend(const Config& config = Config{});

// A mig backend under test (the built-in catalog unless a test replaces
// backend_): Allocate checks the node's invariants after every call.
class MigBackendFixture : public ::testing::Test {
 protected:
  absl::StatusOr<PodAllocation> Allocate(const PodRequest& pod,
                                         NodeState& node);

  std::unique_ptr<SharingBackend> backend_ = MigBackend();
  PlacementOptions options_;
};

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_MIG_BUILDERS_H_
