#include "testing/kube_objects_dra.h"

#include "absl/strings/str_cat.h"
#include "deviceshare/dra/slice_json.h"
#include "testing/dra_builders.h"

namespace deviceshare::testing {

nlohmann::json GpuSliceObject(const std::string& node, int gpus,
                              int64_t memory_gib, int shares) {
  return dra::ResourceSliceToJson(GpuSlice(node, gpus, memory_gib, shares));
}

nlohmann::json GpuClassObject() {
  using nlohmann::json;
  json selector = json::object();
  selector["cel"]["expression"] =
      absl::StrCat("device.driver == \"", kDraDriver, "\"");
  json device_class = json::object();
  device_class["apiVersion"] = dra::kResourceApiVersion;
  device_class["kind"] = "DeviceClass";
  device_class["metadata"]["name"] = "gpu.deviceshare.io";
  device_class["spec"]["selectors"] = json::array({selector});
  return device_class;
}

nlohmann::json ShareClaimObject(const std::string& ns, const std::string& name,
                                int64_t memory_gib, int cores) {
  using nlohmann::json;
  json request = json::object();
  request["name"] = "gpu";
  request["exactly"]["deviceClassName"] = "gpu.deviceshare.io";
  request["exactly"]["capacity"]["requests"]["memory"] =
      absl::StrCat(memory_gib, "Gi");
  request["exactly"]["capacity"]["requests"]["cores"] = absl::StrCat(cores);
  json claim = json::object();
  claim["apiVersion"] = dra::kResourceApiVersion;
  claim["kind"] = "ResourceClaim";
  claim["metadata"]["name"] = name;
  claim["metadata"]["namespace"] = ns;
  claim["spec"]["devices"]["requests"] = json::array({request});
  return claim;
}

nlohmann::json ClaimPodObject(const ClaimPodSpec& spec) {
  using nlohmann::json;
  json refs = json::array();
  json uses = json::array();
  for (size_t i = 0; i < spec.claims.size(); ++i) {
    const std::string name = absl::StrCat("claim-", i);
    json ref = json::object();
    ref["name"] = name;
    ref["resourceClaimName"] = spec.claims[i];
    refs.push_back(std::move(ref));
    json use = json::object();
    use["name"] = name;
    uses.push_back(std::move(use));
  }
  json container = json::object();
  container["name"] = "main";
  container["image"] = "cuda";
  container["resources"]["claims"] = std::move(uses);
  json pod = json::object();
  pod["apiVersion"] = "v1";
  pod["kind"] = "Pod";
  pod["metadata"]["name"] = spec.name;
  pod["metadata"]["namespace"] = spec.namespace_name;
  pod["metadata"]["uid"] = spec.uid.empty() ? "uid-" + spec.name : spec.uid;
  pod["spec"]["schedulerName"] = "deviceshare-scheduler";
  pod["spec"]["resourceClaims"] = std::move(refs);
  pod["spec"]["containers"] = json::array({container});
  pod["status"]["phase"] = "Pending";
  return pod;
}

}  // namespace deviceshare::testing
