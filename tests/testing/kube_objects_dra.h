// File: testing/kube_objects_dra.h
//
// resource.k8s.io/v1 objects and pods that use them (JSON, as the API
// server sends them), for the extender's DRA tests: node agents' slices of
// shared GPUs (testing/dra_builders.h), the DeviceClass of their driver,
// claims asking a share of memory and cores, and pods that name claims.
#ifndef DEVICESHARE_TESTS_TESTING_KUBE_OBJECTS_DRA_H_
#define DEVICESHARE_TESTS_TESTING_KUBE_OBJECTS_DRA_H_

#include <cstdint>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"

namespace deviceshare::testing {

// Node `node`'s slice "<node>-gpus" of `gpus` shared GPUs ("gpu-<i>", pool
// `node`, driver gpu.deviceshare.io): `memory_gib` GiB, 100 cores and at
// most `shares` shares each.
nlohmann::json GpuSliceObject(const std::string& node, int gpus,
                              int64_t memory_gib = 80, int shares = 10);

// DeviceClass "gpu.deviceshare.io": every device of that driver.
nlohmann::json GpuClassObject();

// ResourceClaim `ns`/`name` with one request "gpu" of the GPU class for
// `memory_gib` GiB and `cores` percent of one shared GPU.
nlohmann::json ShareClaimObject(const std::string& ns, const std::string& name,
                                int64_t memory_gib, int cores);

struct ClaimPodSpec {
  std::string namespace_name = "default";
  std::string name;
  std::string uid;  // default: "uid-" + name
  // resourceClaimName of each spec.resourceClaims entry (pod claim names
  // "claim-0", "claim-1", ...), all used by container "main".
  std::vector<std::string> claims;
};

// A pending pod whose container "main" uses the claims and asks no
// annotated GPU.
nlohmann::json ClaimPodObject(const ClaimPodSpec& spec);

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_KUBE_OBJECTS_DRA_H_
