#include "deviceshare/k8s/pod_parser.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/codec/dialect_modes.h"
#include "deviceshare/codec/yaml_json.h"
#include "deviceshare/dra/claim_spec.h"
#include "deviceshare/json_text.h"
#include "deviceshare/model/units.h"
#include "deviceshare/status_macros.h"
#include "nlohmann/json.hpp"
#include "pod_annotation_parser.h"
#include "pod_container_parser.h"

namespace deviceshare {
namespace {

using internal::ContainerResources;
using nlohmann::json;

absl::Status Prefixed(absl::string_view prefix, const absl::Status& status) {
  return absl::Status(status.code(),
                      absl::StrCat(prefix, ": ", status.message()));
}

// An optional string field of a mapping; null counts as absent.
absl::StatusOr<std::string> OptionalString(const json& object,
                                           absl::string_view key,
                                           absl::string_view path) {
  auto it = object.find(std::string(key));
  if (it == object.end() || it->is_null()) return std::string();
  if (!it->is_string()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s.%s: %s is not a string", path, key, JsonText(*it)));
  }
  return it->get<std::string>();
}

// What one container needs of the node besides GPUs.
struct HostNeeds {
  int64_t cpu_milli = 0;
  int64_t memory_mib = 0;
};

absl::StatusOr<HostNeeds> ReadHostNeeds(const ContainerResources& resources) {
  HostNeeds needs;
  if (const json* cpu = resources.RequestValue("cpu")) {
    DS_ASSIGN_OR_RETURN(std::string text, internal::QuantityText(*cpu, "cpu"));
    DS_ASSIGN_OR_RETURN(needs.cpu_milli, ParseQuantityMilli(text, "cpu"));
  }
  if (const json* memory = resources.RequestValue("memory")) {
    DS_ASSIGN_OR_RETURN(std::string text,
                        internal::QuantityText(*memory, "memory"));
    DS_ASSIGN_OR_RETURN(needs.memory_mib,
                        ParseMemoryQuantityMiB(text, "memory"));
  }
  return needs;
}

absl::StatusOr<int64_t> CheckedAdd(int64_t a, int64_t b,
                                   absl::string_view what) {
  int64_t sum;
  if (__builtin_add_overflow(a, b, &sum)) {
    return absl::InvalidArgumentError(
        absl::StrCat("the pod's total ", what, " overflows int64"));
  }
  return sum;
}

// Kubernetes' effective pod request: init containers run one at a time,
// each beside the sidecars (restartable init containers) started before
// it; app containers run together with every sidecar.
class HostNeedsTotal {
 public:
  absl::Status AddInit(const HostNeeds& n, bool sidecar) {
    DS_ASSIGN_OR_RETURN(int64_t cpu,
                        CheckedAdd(sidecars_.cpu_milli, n.cpu_milli, "cpu"));
    DS_ASSIGN_OR_RETURN(
        int64_t mem, CheckedAdd(sidecars_.memory_mib, n.memory_mib, "memory"));
    init_peak_.cpu_milli = std::max(init_peak_.cpu_milli, cpu);
    init_peak_.memory_mib = std::max(init_peak_.memory_mib, mem);
    if (sidecar) sidecars_ = HostNeeds{cpu, mem};
    return absl::OkStatus();
  }
  absl::Status AddApp(const HostNeeds& n) {
    DS_ASSIGN_OR_RETURN(apps_.cpu_milli,
                        CheckedAdd(apps_.cpu_milli, n.cpu_milli, "cpu"));
    DS_ASSIGN_OR_RETURN(apps_.memory_mib,
                        CheckedAdd(apps_.memory_mib, n.memory_mib, "memory"));
    return absl::OkStatus();
  }
  absl::StatusOr<HostNeeds> Total() const {
    DS_ASSIGN_OR_RETURN(
        int64_t cpu, CheckedAdd(apps_.cpu_milli, sidecars_.cpu_milli, "cpu"));
    DS_ASSIGN_OR_RETURN(
        int64_t mem,
        CheckedAdd(apps_.memory_mib, sidecars_.memory_mib, "memory"));
    return HostNeeds{std::max(init_peak_.cpu_milli, cpu),
                     std::max(init_peak_.memory_mib, mem)};
  }

 private:
  HostNeeds init_peak_;
  HostNeeds sidecars_;
  HostNeeds apps_;
};

// Parses the containers of one list (`initContainers` or `containers`).
class ContainerWalker {
 public:
  ContainerWalker(const DeviceConfig& config, PodRequest& pod)
      : config_(config), pod_(pod) {}

  absl::Status Walk(const json& spec, absl::string_view list_name,
                    bool is_init) {
    auto it = spec.find(std::string(list_name));
    if (it == spec.end() || it->is_null()) return absl::OkStatus();
    if (!it->is_array()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "pod %s: spec.%s: %s is not a list", pod_.Key(), list_name,
          it->is_object() ? "a mapping" : JsonText(*it)));
    }
    for (size_t i = 0; i < it->size(); ++i) {
      std::string path = absl::StrFormat("spec.%s[%d]", list_name, i);
      DS_RETURN_IF_ERROR(ParseContainer((*it)[i], path, is_init));
    }
    return absl::OkStatus();
  }

  std::optional<Dialect> dialect() const { return dialect_; }
  absl::StatusOr<HostNeeds> host_needs() const { return total_.Total(); }

 private:
  absl::Status ParseContainer(const json& c, absl::string_view path,
                              bool is_init) {
    std::string where = absl::StrCat("pod ", pod_.Key(), " ", path);
    if (!c.is_object()) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": is not a mapping"));
    }
    DS_ASSIGN_OR_RETURN(std::string name, OptionalString(c, "name", where));
    if (name.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": has no name"));
    }
    where = absl::StrCat("pod ", pod_.Key(), " container ", name);
    ContainerRequest request;
    request.name = name;
    request.is_init = is_init;
    absl::StatusOr<ContainerResources> resources = ContainerResources::Read(c);
    if (!resources.ok()) return Prefixed(where, resources.status());
    absl::StatusOr<std::optional<Dialect>> dialect =
        internal::ParseContainerGpu(*resources, config_, request);
    if (!dialect.ok()) return Prefixed(where, dialect.status());
    if (*dialect) DS_RETURN_IF_ERROR(NoteDialect(**dialect, name));
    if (!request.mig_profile.empty()) {
      DS_RETURN_IF_ERROR(NoteMig(where, request.mig_profile));
    }
    DS_ASSIGN_OR_RETURN(std::string restart,
                        OptionalString(c, "restartPolicy", where));
    bool sidecar = is_init && restart == "Always";
    if (sidecar && request.wants_gpu()) {
      // A sidecar runs beside the app containers, but both upstreams (and
      // ContainerRequest::is_init) treat init containers as transient, so
      // its GPU share would be counted wrongly. Refuse rather than guess.
      return absl::InvalidArgumentError(absl::StrCat(
          where,
          ": is a sidecar (init container with restartPolicy: Always) and "
          "asks for a GPU; GPUs for sidecars are not supported"));
    }
    absl::StatusOr<HostNeeds> needs = ReadHostNeeds(*resources);
    if (!needs.ok()) return Prefixed(where, needs.status());
    absl::Status added =
        is_init ? total_.AddInit(*needs, sidecar) : total_.AddApp(*needs);
    if (!added.ok()) return Prefixed(absl::StrCat("pod ", pod_.Key()), added);
    pod_.containers.push_back(std::move(request));
    return absl::OkStatus();
  }

  // A container asks for a MIG resource: the pod runs in mode mig.
  absl::Status NoteMig(absl::string_view where, absl::string_view profile) {
    if (!pod_.AcceptsMode(dialect::kMigMode)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: %s%s asks for a MIG instance, but the pod's vgpu-mode "
          "annotation says \"%s\"",
          where, keys::kMigResourcePrefix, profile,
          pod_.mode ? SharingModeName(*pod_.mode)
                    : absl::string_view(pod_.modes_text)));
    }
    pod_.mode = dialect::kMigMode;
    return absl::OkStatus();
  }

  absl::Status NoteDialect(Dialect dialect, absl::string_view container) {
    if (!dialect_) {
      dialect_ = dialect;
      dialect_container_ = std::string(container);
      return absl::OkStatus();
    }
    if (*dialect_ == dialect) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrFormat(
        "pod %s: container %s uses %s GPU resources but container %s uses %s "
        "ones; one pod must use one dialect",
        pod_.Key(), dialect_container_, DialectName(*dialect_), container,
        DialectName(dialect)));
  }

  const DeviceConfig& config_;
  PodRequest& pod_;
  std::optional<Dialect> dialect_;
  std::string dialect_container_;
  HostNeedsTotal total_;
};

// spec.resourceClaims, each resolved to its ResourceClaim: the named one,
// or the claim Kubernetes generated from the template for this pod
// (status.resourceClaimStatuses; "" until it exists).
absl::StatusOr<std::vector<PodClaim>> ReadPodClaims(const json& pod,
                                                    const PodRequest& request) {
  absl::StatusOr<std::vector<dra::PodClaimRef>> refs =
      dra::DecodePodClaimRefs(pod);
  if (!refs.ok()) {
    return Prefixed(absl::StrCat("pod ", request.Key()), refs.status());
  }
  std::map<std::string, std::string> generated;
  auto status = pod.find("status");
  if (status != pod.end() && status->is_object()) {
    auto statuses = status->find("resourceClaimStatuses");
    if (statuses != status->end() && statuses->is_array()) {
      for (const json& entry : *statuses) {
        if (!entry.is_object()) continue;
        auto name = entry.find("name");
        auto claim = entry.find("resourceClaimName");
        if (name != entry.end() && name->is_string() && claim != entry.end() &&
            claim->is_string()) {
          generated[name->get<std::string>()] = claim->get<std::string>();
        }
      }
    }
  }
  std::vector<PodClaim> claims;
  for (dra::PodClaimRef& ref : *refs) {
    PodClaim claim;
    claim.name = std::move(ref.name);
    claim.template_name = std::move(ref.template_name);
    claim.claim_name = claim.template_name.empty() ? std::move(ref.claim_name)
                                                   : generated[claim.name];
    claims.push_back(std::move(claim));
  }
  return claims;
}

}  // namespace

absl::StatusOr<PodRequest> ParsePodRequest(const nlohmann::json& pod,
                                           const DeviceConfig& config) {
  if (!pod.is_object()) {
    return absl::InvalidArgumentError(
        absl::StrCat("pod: ", pod.is_array() ? "a list" : JsonText(pod),
                     " is not a Pod object"));
  }
  DS_ASSIGN_OR_RETURN(std::string kind, OptionalString(pod, "kind", "pod"));
  if (!kind.empty() && kind != "Pod") {
    return absl::InvalidArgumentError(
        absl::StrFormat("pod: kind \"%s\" is not Pod", kind));
  }
  auto metadata = pod.find("metadata");
  if (metadata == pod.end() || !metadata->is_object()) {
    return absl::InvalidArgumentError("pod: metadata is missing");
  }
  PodRequest request;
  DS_ASSIGN_OR_RETURN(request.name,
                      OptionalString(*metadata, "name", "pod metadata"));
  if (request.name.empty()) {
    return absl::InvalidArgumentError("pod: metadata.name is missing");
  }
  DS_ASSIGN_OR_RETURN(std::string ns,
                      OptionalString(*metadata, "namespace", "pod metadata"));
  if (!ns.empty()) request.namespace_name = ns;
  DS_ASSIGN_OR_RETURN(request.uid,
                      OptionalString(*metadata, "uid", "pod metadata"));
  if (request.uid.empty()) request.uid = request.Key();

  Dialect annotation_dialect = Dialect::kHami;
  auto annotations = metadata->find("annotations");
  if (annotations != metadata->end() && !annotations->is_null()) {
    DS_RETURN_IF_ERROR(internal::ParsePodAnnotations(*annotations, request));
    annotation_dialect = internal::AnnotationDialect(*annotations);
  }

  auto spec = pod.find("spec");
  if (spec != pod.end() && !spec->is_null()) {
    if (!spec->is_object()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("pod %s: spec is not a mapping", request.Key()));
    }
    ContainerWalker walker(config, request);
    DS_RETURN_IF_ERROR(walker.Walk(*spec, "initContainers", /*is_init=*/true));
    DS_RETURN_IF_ERROR(walker.Walk(*spec, "containers", /*is_init=*/false));
    // A pod whose containers name no dialect's resources (none, or only
    // nvidia.com/mig-*) is in the dialect of its annotations.
    request.dialect = walker.dialect().value_or(annotation_dialect);
    DS_ASSIGN_OR_RETURN(HostNeeds needs, walker.host_needs());
    request.cpu_milli = needs.cpu_milli;
    request.memory_mib = needs.memory_mib;
    DS_ASSIGN_OR_RETURN(request.claims, ReadPodClaims(pod, request));
  }
  return request;
}

absl::StatusOr<PodRequest> ParsePodRequestText(absl::string_view text,
                                               const DeviceConfig& config) {
  DS_ASSIGN_OR_RETURN(json pod, ParseJsonOrYaml(text));
  return ParsePodRequest(pod, config);
}

}  // namespace deviceshare
