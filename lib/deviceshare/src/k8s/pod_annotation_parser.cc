#include "pod_annotation_parser.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/config/policy_name.h"
#include "deviceshare/json_text.h"
#include "deviceshare/model/sharing_mode.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::internal {
namespace {

using nlohmann::json;

constexpr absl::string_view kVolcanoKeyPrefix = "volcano.sh/";

class AnnotationReader {
 public:
  AnnotationReader(const json& annotations, const PodRequest& pod)
      : annotations_(annotations), pod_(pod) {}

  // The trimmed value of `key`, or nullopt when the pod does not carry it.
  absl::StatusOr<std::optional<std::string>> Get(absl::string_view key) const {
    auto it = annotations_.find(std::string(key));
    if (it == annotations_.end() || it->is_null()) return std::nullopt;
    if (!it->is_string()) {
      return Error(key,
                   absl::StrCat(JsonText(*it),
                                " is not a string (annotation values must be "
                                "quoted)"));
    }
    return std::string(
        absl::StripAsciiWhitespace(it->get_ref<const std::string&>()));
  }

  absl::Status Error(absl::string_view key, absl::string_view message) const {
    return absl::InvalidArgumentError(
        absl::StrCat("pod ", pod_.Key(), ": ", key, ": ", message));
  }

  absl::Status Wrap(const absl::Status& status) const {
    return absl::Status(status.code(), absl::StrCat("pod ", pod_.Key(), ": ",
                                                    status.message()));
  }

 private:
  const json& annotations_;
  const PodRequest& pod_;
};

// Comma list, trimmed, empties dropped, first occurrence kept.
void AppendList(absl::string_view value, std::vector<std::string>& out) {
  for (absl::string_view part : absl::StrSplit(value, ',')) {
    std::string item(absl::StripAsciiWhitespace(part));
    if (item.empty()) continue;
    if (std::find(out.begin(), out.end(), item) == out.end()) {
      out.push_back(std::move(item));
    }
  }
}

absl::Status ReadListInto(const AnnotationReader& reader, absl::string_view key,
                          std::vector<std::string>& out) {
  DS_ASSIGN_OR_RETURN(std::optional<std::string> value, reader.Get(key));
  if (value) AppendList(*value, out);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<SharingMode>> ReadMode(
    const AnnotationReader& reader, absl::string_view key) {
  DS_ASSIGN_OR_RETURN(std::optional<std::string> value, reader.Get(key));
  if (!value) return std::nullopt;
  absl::StatusOr<SharingMode> mode = ParseSharingMode(*value, key);
  if (!mode.ok()) return reader.Wrap(mode.status());
  return *mode;
}

absl::Status ReadModes(const AnnotationReader& reader, PodRequest& pod) {
  DS_ASSIGN_OR_RETURN(std::optional<SharingMode> volcano,
                      ReadMode(reader, keys::kVolcanoMode));
  // HAMi takes a GPU whose mode occurs in the value (checkType), so a value
  // that is no single name ("hami-core,mig") still means something.
  DS_ASSIGN_OR_RETURN(std::optional<std::string> hami_text,
                      reader.Get(keys::kHamiMode));
  if (!volcano && hami_text && !IsModeName(*hami_text)) {
    pod.modes_text = *hami_text;
    return absl::OkStatus();
  }
  DS_ASSIGN_OR_RETURN(std::optional<SharingMode> hami,
                      ReadMode(reader, keys::kHamiMode));
  if (volcano && hami && *volcano != *hami) {
    return reader.Error(
        keys::kHamiMode,
        absl::StrFormat("\"%s\" disagrees with %s \"%s\"",
                        SharingModeName(*hami), keys::kVolcanoMode,
                        SharingModeName(*volcano)));
  }
  pod.mode = volcano ? volcano : hami;
  return absl::OkStatus();
}

absl::Status ReadNumaBind(const AnnotationReader& reader, PodRequest& pod) {
  DS_ASSIGN_OR_RETURN(std::optional<std::string> value,
                      reader.Get(keys::kHamiNumaBind));
  if (!value) return absl::OkStatus();
  // HAMi's assertNuma (device.go:482): Go's strconv.ParseBool, and a value
  // it cannot read is false.
  static constexpr absl::string_view kGoTrue[] = {"1",    "t",    "T",
                                                  "TRUE", "true", "True"};
  pod.numa_bind = std::find(std::begin(kGoTrue), std::end(kGoTrue), *value) !=
                  std::end(kGoTrue);
  return absl::OkStatus();
}

// utils.go getPodGroupKey: "namespace/group", the Kubernetes key first.
absl::Status ReadPodGroup(const AnnotationReader& reader, PodRequest& pod) {
  for (const char* key : {keys::kKubeGroupName, keys::kVolcanoGroupName}) {
    DS_ASSIGN_OR_RETURN(std::optional<std::string> group, reader.Get(key));
    if (group && !group->empty()) {
      pod.group_key = absl::StrCat(pod.namespace_name, "/", *group);
      break;
    }
  }
  DS_ASSIGN_OR_RETURN(std::optional<std::string> policy,
                      reader.Get(keys::kVolcanoPodGroupPolicy));
  pod.spread_group = policy == keys::kVolcanoPodGroupSpread;
  return absl::OkStatus();
}

absl::Status ReadPolicies(const AnnotationReader& reader, PodRequest& pod) {
  DS_ASSIGN_OR_RETURN(std::optional<std::string> node,
                      reader.Get(keys::kHamiNodePolicy));
  if (node) {
    // HAMi takes any value; one it does not know gives its default.
    absl::StatusOr<std::string> name =
        ParsePolicyName(*node, keys::kHamiNodePolicy);
    pod.node_policy = name.ok() ? *std::move(name) : "";
  }
  // Read by the scheduler (policy/scoring_weights.h): HAMi refuses a pod
  // whose weights do not read when it is filtered, not when it is made.
  DS_ASSIGN_OR_RETURN(pod.scoring_weights,
                      reader.Get(keys::kHamiDeviceScoringWeights));
  DS_ASSIGN_OR_RETURN(std::optional<std::string> gpu,
                      reader.Get(keys::kHamiGpuPolicy));
  if (!gpu) return absl::OkStatus();
  // Whether policies of those names exist is the scheduler's question: it
  // knows the registry.
  pod.gpu_policy = ReadPolicyWords(*gpu);
  return absl::OkStatus();
}

}  // namespace

absl::Status ParsePodAnnotations(const json& annotations, PodRequest& pod) {
  if (!annotations.is_object()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "pod ", pod.Key(), ": metadata.annotations is not a mapping"));
  }
  AnnotationReader reader(annotations, pod);
  DS_RETURN_IF_ERROR(ReadModes(reader, pod));
  DS_RETURN_IF_ERROR(ReadListInto(reader, keys::kUseGpuType, pod.use_models));
  DS_RETURN_IF_ERROR(
      ReadListInto(reader, keys::kNoUseGpuType, pod.avoid_models));
  DS_RETURN_IF_ERROR(
      ReadListInto(reader, keys::kVolcanoUseUuid, pod.use_uuids));
  DS_RETURN_IF_ERROR(ReadListInto(reader, keys::kHamiUseUuid, pod.use_uuids));
  DS_RETURN_IF_ERROR(
      ReadListInto(reader, keys::kVolcanoNoUseUuid, pod.avoid_uuids));
  DS_RETURN_IF_ERROR(
      ReadListInto(reader, keys::kHamiNoUseUuid, pod.avoid_uuids));
  DS_RETURN_IF_ERROR(ReadNumaBind(reader, pod));
  DS_RETURN_IF_ERROR(ReadPodGroup(reader, pod));
  DS_RETURN_IF_ERROR(ReadPolicies(reader, pod));
  return absl::OkStatus();
}

Dialect AnnotationDialect(const json& annotations) {
  for (auto it = annotations.begin(); it != annotations.end(); ++it) {
    if (absl::StartsWith(it.key(), kVolcanoKeyPrefix)) return Dialect::kVolcano;
  }
  return Dialect::kHami;
}

}  // namespace deviceshare::internal
