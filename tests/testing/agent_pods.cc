#include "testing/agent_pods.h"

#include "absl/time/time.h"
#include "deviceshare/k8s/pod_annotations.h"

namespace deviceshare::testing {

DeviceGrant ShareOf(const std::string& uuid, int64_t memory_mib, int cores) {
  DeviceGrant grant;
  grant.uuid = uuid;
  grant.memory_mib = memory_mib;
  grant.cores = cores;
  return grant;
}

nlohmann::json BoundPod(const PodSpec& spec, Dialect dialect,
                        const std::string& node,
                        const std::vector<DeviceGrant>& grants,
                        int64_t decided_at) {
  nlohmann::json pod = dialect == Dialect::kVolcano ? VolcanoPodObject(spec)
                                                    : HamiPodObject(spec);
  PodAllocation allocation;
  allocation.pod_uid = pod["metadata"]["uid"];
  allocation.pod_key = spec.namespace_name + "/" + spec.name;
  allocation.node_name = node;
  ContainerAllocation container;
  container.container_index = 0;
  container.name = "main";
  container.devices = grants;
  allocation.containers.push_back(container);
  for (const auto& [key, value] : AllocationAnnotations(
           allocation, dialect, absl::FromUnixSeconds(decided_at), 1)) {
    pod["metadata"]["annotations"][key] = value;
  }
  pod["spec"]["nodeName"] = node;
  pod["status"]["phase"] = "Pending";
  return pod;
}

}  // namespace deviceshare::testing
