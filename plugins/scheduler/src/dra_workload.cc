#include "deviceshare/simulate/dra_workload.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deviceshare/agent/discovered_gpu.h"
#include "deviceshare/agent/resource_slices.h"
#include "deviceshare/backend/backend_set.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::simulate {
namespace {

dra::DeviceClass ClassOf(std::string name, std::string expression) {
  dra::DeviceClass cls;
  cls.name = std::move(name);
  cls.selectors.push_back(std::move(expression));
  return cls;
}

}  // namespace

absl::Status PublishDraNodes(const std::vector<std::string>& dra_nodes,
                             const Config& config, Workload& workload) {
  if (dra_nodes.empty()) return absl::OkStatus();
  BackendRegistry registry;
  DS_RETURN_IF_ERROR(RegisterBuiltinBackends(registry));
  DS_ASSIGN_OR_RETURN(BackendSet backends,
                      BackendSet::Create(registry, config));
  const std::set<std::string> wanted(dra_nodes.begin(), dra_nodes.end());
  for (NodeInventory& node : workload.nodes) {
    if (!wanted.contains(node.name)) continue;
    std::vector<agent::DiscoveredGpu> discovered;
    for (const Gpu& gpu : node.gpus) {
      discovered.push_back(agent::FromPhysicalGpu(gpu));
    }
    agent::SliceOptions options;
    options.node_name = node.name;
    absl::StatusOr<agent::NodeSlices> slices =
        agent::BuildResourceSlices(discovered, node.gpus, backends, options);
    if (!slices.ok()) {
      return absl::Status(slices.status().code(),
                          absl::StrFormat("node %s (dra: true): %s", node.name,
                                          slices.status().message()));
    }
    for (dra::ResourceSlice& slice : slices->slices) {
      workload.slices.push_back(std::move(slice));
    }
    for (const std::string& why : slices->withdrawn) {
      workload.notes.push_back(
          absl::StrFormat("node %s: %s, not published", node.name, why));
    }
    node.gpus.clear();  // served as DRA devices, not from an annotation
  }
  return absl::OkStatus();
}

std::vector<dra::DeviceClass> DefaultDeviceClasses() {
  const std::string driver = agent::kDefaultDraDriver;
  const std::string is_driver =
      absl::StrCat("device.driver == \"", driver, "\"");
  auto mode_is = [&](const std::string& mode) {
    return absl::StrCat(is_driver, " && device.attributes[\"", driver,
                        "\"].mode == \"", mode, "\"");
  };
  return {ClassOf(driver, is_driver),
          ClassOf(absl::StrCat("hami-core.", driver), mode_is("hami-core")),
          ClassOf(absl::StrCat("mps.", driver), mode_is("mps")),
          ClassOf(absl::StrCat("mig.", driver), mode_is("mig"))};
}

void CreateTemplateClaims(
    const std::vector<dra::ResourceClaimTemplate>& templates,
    Workload& workload) {
  std::map<std::string, const dra::ResourceClaimTemplate*> by_key;
  for (const dra::ResourceClaimTemplate& t : templates) {
    by_key[absl::StrCat(t.ns, "/", t.name)] = &t;
  }
  for (PodRequest& pod : workload.pods) {
    for (PodClaim& claim : pod.claims) {
      if (claim.template_name.empty() || !claim.claim_name.empty()) continue;
      auto it = by_key.find(
          absl::StrCat(pod.namespace_name, "/", claim.template_name));
      if (it == by_key.end()) {
        workload.notes.push_back(absl::StrFormat(
            "pod %s: ResourceClaimTemplate %s/%s is not in the pods file; "
            "its claim %s is never created",
            pod.Key(), pod.namespace_name, claim.template_name, claim.name));
        continue;
      }
      dra::ResourceClaim generated;
      generated.ns = pod.namespace_name;
      generated.name = absl::StrCat(pod.name, "-", claim.name);
      generated.uid = absl::StrCat("claim-", pod.uid, "-", claim.name);
      generated.spec = it->second->spec;
      claim.claim_name = generated.name;
      workload.claims.push_back(std::move(generated));
    }
  }
}

namespace {

// The claim of one container's annotated GPU request.
absl::StatusOr<dra::ResourceClaim> ContainerClaim(const PodRequest& pod,
                                                  const ContainerRequest& c) {
  dra::ExactRequest request;
  request.device_class = agent::kDefaultDraDriver;
  request.count = c.gpu_count;
  if (c.memory_mib > 0) {
    request.capacity["memory"] = c.memory_mib << 20;
  } else if (c.memory_percent != 0 && c.memory_percent != 100) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--dra: pod %s container %s asks %d%% of a GPU's memory, which a "
        "DRA claim cannot say (capacity requests are amounts)",
        pod.Key(), c.name, c.memory_percent));
  }
  request.capacity["cores"] = std::max(c.cores, 1);
  dra::DeviceRequest gpu;
  gpu.name = "gpu";
  gpu.exactly = std::move(request);
  dra::ResourceClaim claim;
  claim.ns = pod.namespace_name;
  claim.name = absl::StrCat(pod.name, "-", c.name);
  claim.uid = absl::StrCat("claim-", pod.uid, "-", c.name);
  claim.spec.requests.push_back(std::move(gpu));
  if (c.gpu_count > 1) {
    claim.spec.constraints.push_back(dra::DeviceConstraint{
        {}, "", absl::StrCat(agent::kDefaultDraDriver, "/uuid")});
  }
  return claim;
}

}  // namespace

absl::Status ConvertToDra(const Config& config, Workload& workload) {
  std::vector<std::string> names;
  for (const NodeInventory& node : workload.nodes) {
    if (!node.gpus.empty()) names.push_back(node.name);
  }
  DS_RETURN_IF_ERROR(PublishDraNodes(names, config, workload));
  for (PodRequest& pod : workload.pods) {
    for (ContainerRequest& container : pod.containers) {
      if (!container.wants_gpu()) continue;
      DS_ASSIGN_OR_RETURN(dra::ResourceClaim claim,
                          ContainerClaim(pod, container));
      pod.claims.push_back(PodClaim{container.name, claim.name, ""});
      workload.claims.push_back(std::move(claim));
      container.gpu_count = 0;
      container.memory_mib = 0;
      container.memory_percent = 0;
      container.cores = 0;
      container.mig_profile.clear();
    }
  }
  if (workload.classes.empty()) workload.classes = DefaultDeviceClasses();
  workload.notes.push_back(
      "--dra: every node's GPUs are published as DRA devices and each "
      "container's GPU request is a ResourceClaim (class gpu.deviceshare.io, "
      "memory and cores as capacity requests)");
  return absl::OkStatus();
}

std::string SimulatedShareId(uint64_t n) {
  return absl::StrFormat("00000000-0000-4000-8000-%012x", n);
}

}  // namespace deviceshare::simulate
