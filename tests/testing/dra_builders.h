// File: testing/dra_builders.h
//
// Builders for DRA objects as the node agent publishes them and as users
// write claims, so that scheduler tests read as the cluster they set up:
// GpuSlice("node-a", 8) is node-a's pool of eight shared 80 GiB GPUs.
#ifndef DEVICESHARE_TESTS_TESTING_DRA_BUILDERS_H_
#define DEVICESHARE_TESTS_TESTING_DRA_BUILDERS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "deviceshare/dra/claim_spec.h"
#include "deviceshare/dra/device_class.h"
#include "deviceshare/dra/resource_slice.h"
#include "deviceshare/model/pod_request.h"

namespace deviceshare::testing {

inline constexpr char kDraDriver[] = "gpu.deviceshare.io";
inline constexpr int64_t kDraMiB = int64_t{1} << 20;
inline constexpr int64_t kDraGiB = int64_t{1} << 30;

// A shared GPU "gpu-<index>" as the agent publishes a hami-core GPU:
// memory (bytes) and cores (percent) with request policies, at most
// `shares` shares; attribute uuid "GPU-<node>-<index>".
dra::Device SharedGpuDevice(const std::string& node, int index,
                            int64_t memory_gib = 80, int shares = 10);

// Node `node`'s pool (driver kDraDriver, pool = node) of `gpus` shared
// GPUs in one slice "<node>-gpus".
dra::ResourceSlice GpuSlice(const std::string& node, int gpus,
                            int64_t memory_gib = 80, int shares = 10);

// The DeviceClass "gpu.deviceshare.io": every device of kDraDriver.
dra::DeviceClass GpuClass();

// Request `name`: `count` shares of `memory` bytes and `cores` percent of
// class "gpu.deviceshare.io".
dra::DeviceRequest ShareRequest(const std::string& name, int64_t memory,
                                int64_t cores, int64_t count = 1);

// ResourceClaim `ns`/`name` with the requests (uid "uid-<name>").
dra::ResourceClaim Claim(const std::string& ns, const std::string& name,
                         std::vector<dra::DeviceRequest> requests,
                         std::vector<dra::DeviceConstraint> constraints = {});

// A pod uid "uid-<name>" in namespace `ns` whose one container uses the
// named claims (pod claim name = claim name).
PodRequest ClaimPod(const std::string& ns, const std::string& name,
                    std::vector<std::string> claim_names);

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_DRA_BUILDERS_H_
