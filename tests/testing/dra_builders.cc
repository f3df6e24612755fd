#include "testing/dra_builders.h"

#include "absl/strings/str_cat.h"

namespace deviceshare::testing {

dra::Device SharedGpuDevice(const std::string& node, int index,
                            int64_t memory_gib, int shares) {
  dra::Device gpu;
  gpu.name = absl::StrCat("gpu-", index);
  gpu.allow_multiple_allocations = true;
  gpu.attributes["uuid"] =
      dra::DeviceAttribute::String(absl::StrCat("GPU-", node, "-", index));
  gpu.attributes["index"] = dra::DeviceAttribute::Int(index);
  gpu.attributes["mode"] = dra::DeviceAttribute::String("hami-core");
  gpu.attributes["resource.kubernetes.io/pcieRoot"] =
      dra::DeviceAttribute::String(absl::StrCat("pci000", index / 4, ":00"));
  const int64_t memory = memory_gib * kDraGiB;
  gpu.capacity["memory"] = {
      memory, dra::QuantityFormat::kBinary,
      dra::RequestPolicy{memory, kDraMiB, memory, kDraMiB, {}}};
  gpu.capacity["cores"] = {100, dra::QuantityFormat::kDecimal,
                           dra::RequestPolicy{100, 1, 100, 1, {}}};
  gpu.capacity["shares"] = {shares, dra::QuantityFormat::kDecimal,
                            dra::RequestPolicy{1, 0, 0, 0, {1}}};
  return gpu;
}

dra::ResourceSlice GpuSlice(const std::string& node, int gpus,
                            int64_t memory_gib, int shares) {
  dra::ResourceSlice slice;
  slice.name = absl::StrCat(node, "-gpus");
  slice.driver = kDraDriver;
  slice.node_name = node;
  slice.pool = {node, 1, 1};
  for (int i = 0; i < gpus; ++i) {
    slice.devices.push_back(SharedGpuDevice(node, i, memory_gib, shares));
  }
  return slice;
}

dra::DeviceClass GpuClass() {
  dra::DeviceClass cls;
  cls.name = "gpu.deviceshare.io";
  cls.selectors = {absl::StrCat("device.driver == \"", kDraDriver, "\"")};
  return cls;
}

dra::DeviceRequest ShareRequest(const std::string& name, int64_t memory,
                                int64_t cores, int64_t count) {
  dra::DeviceRequest request;
  request.name = name;
  dra::ExactRequest exactly;
  exactly.device_class = "gpu.deviceshare.io";
  exactly.count = count;
  exactly.capacity = {{"memory", memory}, {"cores", cores}};
  request.exactly = std::move(exactly);
  return request;
}

dra::ResourceClaim Claim(const std::string& ns, const std::string& name,
                         std::vector<dra::DeviceRequest> requests,
                         std::vector<dra::DeviceConstraint> constraints) {
  dra::ResourceClaim claim;
  claim.ns = ns;
  claim.name = name;
  claim.uid = absl::StrCat("uid-", name);
  claim.spec.requests = std::move(requests);
  claim.spec.constraints = std::move(constraints);
  return claim;
}

PodRequest ClaimPod(const std::string& ns, const std::string& name,
                    std::vector<std::string> claim_names) {
  PodRequest pod;
  pod.uid = absl::StrCat("uid-", name);
  pod.namespace_name = ns;
  pod.name = name;
  ContainerRequest container;
  container.name = "main";
  pod.containers.push_back(std::move(container));
  for (std::string& claim : claim_names) {
    pod.claims.push_back(PodClaim{claim, claim, ""});
  }
  return pod;
}

}  // namespace deviceshare::testing
