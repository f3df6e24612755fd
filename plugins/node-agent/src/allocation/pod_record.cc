#include "deviceshare/agent/pod_record.h"

#include <map>

#include "absl/strings/numbers.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/k8s/pod_annotations.h"
#include "deviceshare/k8s/pod_parser.h"
#include "deviceshare/kube/object_fields.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::agent {
namespace {

using ::deviceshare::kube::Text;

const std::string* Find(const std::map<std::string, std::string>& map,
                        const char* key) {
  auto found = map.find(key);
  return found == map.end() ? nullptr : &found->second;
}

int64_t Seconds(const std::string* text) {
  int64_t seconds = 0;
  if (text == nullptr || !absl::SimpleAtoi(*text, &seconds)) return 0;
  return seconds;
}

}  // namespace

absl::StatusOr<std::optional<PodRecord>> ParsePodRecord(
    const nlohmann::json& pod, const std::string& node_name,
    const DeviceConfig& config) {
  const std::map<std::string, std::string> annotations = PodAnnotationMap(pod);
  const std::optional<Dialect> dialect = RecordDialect(annotations);
  if (!dialect) return std::optional<PodRecord>();
  const bool hami = *dialect == Dialect::kHami;
  const std::string node = RecordNode(pod, annotations, *dialect);
  if (node != node_name) return std::optional<PodRecord>();

  DS_ASSIGN_OR_RETURN(PodRequest request, ParsePodRequest(pod, config));
  DS_ASSIGN_OR_RETURN(std::optional<PodAllocation> allocation,
                      AllocationFromAnnotations(request, annotations, node,
                                                config.memory_factor));
  if (!allocation.has_value()) return std::optional<PodRecord>();

  PodRecord record;
  for (const ContainerRequest& container : request.containers) {
    record.task_priorities.push_back(container.task_priority);
  }
  record.uid = request.uid;
  record.key = request.Key();
  record.phase = Text(pod, {"status", "phase"});
  record.dialect = hami ? Dialect::kHami : Dialect::kVolcano;
  const std::string* phase =
      Find(annotations, hami ? keys::kHamiBindPhase : keys::kVolcanoBindPhase);
  if (phase != nullptr) record.bind_phase = *phase;
  record.decided_at =
      Seconds(Find(annotations, hami ? keys::kHamiTime : keys::kVolcanoTime));
  if (record.decided_at == 0) {
    record.decided_at = Seconds(
        Find(annotations, hami ? keys::kHamiBindTime : keys::kVolcanoBindTime));
  }
  record.allocation = *std::move(allocation);
  return std::optional<PodRecord>(std::move(record));
}

}  // namespace deviceshare::agent
