#include "deviceshare/admission/pod_admission.h"

#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "admission/container_rules.h"
#include "deviceshare/json_text.h"
#include "deviceshare/k8s/pod_parser.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::admission {
namespace {

using nlohmann::json;

constexpr char kKubeDefaultScheduler[] = "default-scheduler";
// Init containers first, as HAMi's webhook walks them.
constexpr const char* kContainerLists[] = {"initContainers", "containers"};

PodAdmission Refuse(std::string message) {
  return {.allowed = false, .patch = json::array(), .message = message};
}

PodAdmission Untouched(std::string note) {
  return {.allowed = true, .patch = json::array(), .message = note};
}

// Checks spec and each container list's shape, so the rules below can read
// them without further checks.
absl::Status CheckPodShape(const json& pod) {
  if (!pod.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("pod: ", JsonText(pod), " is not an object"));
  }
  auto spec = pod.find("spec");
  if (spec == pod.end() || !spec->is_object()) {
    return absl::InvalidArgumentError("spec: missing or not an object");
  }
  for (const char* list : kContainerLists) {
    auto containers = spec->find(list);
    if (containers == spec->end() || containers->is_null()) continue;
    if (!containers->is_array()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "spec.", list, ": ", containers->dump(), " is not a list"));
    }
    for (size_t i = 0; i < containers->size(); ++i) {
      DS_RETURN_IF_ERROR(internal::CheckContainerShape(
          (*containers)[i], absl::StrCat("spec.", list, "[", i, "]")));
    }
  }
  return absl::OkStatus();
}

const json& ContainersOf(const json& spec, const char* list) {
  static const json* const kNone = new json(json::array());
  auto found = spec.find(list);
  return found != spec.end() && found->is_array() ? *found : *kNone;
}

std::string StringAt(const json& object, const char* key) {
  auto found = object.find(key);
  return found != object.end() && found->is_string() ? found->get<std::string>()
                                                     : std::string();
}

bool NamesGpuResource(const json& spec, const DeviceConfig& config) {
  for (const char* list : kContainerLists) {
    for (const json& container : ContainersOf(spec, list)) {
      if (internal::NamesGpuResource(container, config)) return true;
    }
  }
  return false;
}

// Runs the container rules over every container of `spec` (a copy); true
// when one asks for a GPU afterwards.
absl::StatusOr<bool> MutateContainers(json& spec, const DeviceConfig& config) {
  bool has_gpu = false;
  for (const char* list : kContainerLists) {
    auto containers = spec.find(list);
    if (containers == spec.end() || !containers->is_array()) continue;
    for (size_t i = 0; i < containers->size(); ++i) {
      DS_ASSIGN_OR_RETURN(
          bool container_gpu,
          internal::MutateContainer((*containers)[i],
                                    absl::StrCat("spec.", list, "[", i, "]"),
                                    config));
      has_gpu = has_gpu || container_gpu;
    }
  }
  return has_gpu;
}

// A privileged container sees every GPU of its node, so no share holds.
absl::Status CheckNotPrivileged(const json& spec) {
  for (const char* list : kContainerLists) {
    const json& containers = ContainersOf(spec, list);
    for (size_t i = 0; i < containers.size(); ++i) {
      const json* context = nullptr;
      if (auto found = containers[i].find("securityContext");
          found != containers[i].end() && found->is_object()) {
        context = &*found;
      }
      if (context != nullptr && context->value("privileged", json()) == true) {
        return absl::InvalidArgumentError(absl::StrCat(
            "spec.", list, "[", i,
            "].securityContext.privileged: true is refused in a pod that asks "
            "for GPU shares (a privileged container sees every GPU of its "
            "node)"));
      }
    }
  }
  return absl::OkStatus();
}

// The scheduler's own reading of the mutated pod: what it would refuse at
// filter time is refused now. A pod being created may have no name yet
// (generateName); the parser wants one for its messages.
absl::Status CheckParses(json pod, const DeviceConfig& config) {
  json& metadata = pod["metadata"];
  if (!metadata.is_object()) metadata = json::object();
  if (StringAt(metadata, "name").empty()) {
    metadata["name"] = StringAt(metadata, "generateName") + "(new)";
  }
  return ParsePodRequest(pod, config).status();
}

PodAdmission AdmitGpuPod(const json& pod, const AdmissionSettings& settings) {
  json mutated = pod;
  json& spec = mutated["spec"];
  absl::StatusOr<bool> has_gpu = MutateContainers(spec, settings.device);
  if (!has_gpu.ok()) return Refuse(std::string(has_gpu.status().message()));
  if (absl::Status status = CheckNotPrivileged(spec); !status.ok()) {
    return Refuse(std::string(status.message()));
  }
  if (const std::string node = StringAt(spec, "nodeName"); !node.empty()) {
    return Refuse(absl::StrCat(
        "spec.nodeName: \"", node,
        "\" is set; a pod that asks for GPU shares must be placed by ",
        settings.scheduler_name, ", which accounts for its GPUs"));
  }
  spec["schedulerName"] = settings.scheduler_name;
  if (*has_gpu && !settings.device.runtime_class_name.empty() &&
      StringAt(spec, "runtimeClassName").empty()) {
    spec["runtimeClassName"] = settings.device.runtime_class_name;
  }
  if (absl::Status status = CheckParses(mutated, settings.device);
      !status.ok()) {
    return Refuse(std::string(status.message()));
  }
  return {.allowed = true,
          .patch = json::diff(pod, mutated),
          .message = absl::StrCat("scheduler ", settings.scheduler_name)};
}

}  // namespace

PodAdmission AdmitPod(const json& pod, const AdmissionSettings& settings) {
  if (absl::Status status = CheckPodShape(pod); !status.ok()) {
    return Refuse(std::string(status.message()));
  }
  const json& spec = pod["spec"];
  const std::string scheduler = StringAt(spec, "schedulerName");
  if (!scheduler.empty() && scheduler != kKubeDefaultScheduler &&
      scheduler != settings.scheduler_name) {
    return Untouched(absl::StrCat("spec.schedulerName names ", scheduler));
  }
  if (!NamesGpuResource(spec, settings.device)) {
    return Untouched("asks for no GPU resource");
  }
  return AdmitGpuPod(pod, settings);
}

}  // namespace deviceshare::admission
