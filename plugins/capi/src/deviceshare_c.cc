// The entry points of deviceshare.h: each checks its arguments (a NULL one
// is InvalidArgument naming it), finds its scheduler in the registry, and
// hands the work to the files beside this one, inside Guarded() so that no
// exception crosses into C.
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "answer_json.h"
#include "c_status.h"
#include "deviceshare/c/deviceshare.h"
#include "deviceshare/json_text.h"
#include "deviceshare/k8s/pod_annotations.h"
#include "deviceshare/scheduler/scheduler.h"
#include "deviceshare/status_macros.h"
#include "dra_objects.h"
#include "handle_registry.h"
#include "node_input.h"
#include "scheduler_factory.h"
#include "text_input.h"
#include "verdict_array.h"

#ifndef DEVICESHARE_VERSION
#error "DEVICESHARE_VERSION must be defined (PROJECT_VERSION)"
#endif

namespace {

using ::deviceshare::capi::CheckOptionalText;
using ::deviceshare::capi::Guarded;
using ::deviceshare::capi::PodHandles;
using ::deviceshare::capi::RequireArgument;
using ::deviceshare::capi::RequireText;
using ::deviceshare::capi::SchedulerHandles;
using ::deviceshare::capi::SetOutput;
using SchedulerRef = std::shared_ptr<deviceshare::Scheduler>;

absl::StatusOr<SchedulerRef> Find(const deviceshare_scheduler* scheduler) {
  DS_RETURN_IF_ERROR(RequireArgument(scheduler, "scheduler"));
  return SchedulerHandles().Find(scheduler);
}

// A decision of Schedule or Allocate as the answer; AlreadyExists and
// prefilter errors pass through.
absl::Status AnswerDecision(const deviceshare::Scheduler& scheduler,
                            const deviceshare::PodRequest& request,
                            const absl::StatusOr<deviceshare::Decision>& made,
                            char** decision_json) {
  if (!made.ok()) return made.status();
  DS_ASSIGN_OR_RETURN(std::string answer, deviceshare::capi::DecisionJson(
                                              scheduler, request, *made));
  return SetOutput(decision_json, answer);
}

}  // namespace

extern "C" {

int deviceshare_abi_version(void) { return DEVICESHARE_ABI_VERSION; }

const char* deviceshare_version(void) { return DEVICESHARE_VERSION; }

void deviceshare_free(char* text) { std::free(text); }

deviceshare_code deviceshare_parse_documents(const char* text,
                                             char** objects_json,
                                             char** error) {
  return Guarded(error, [&]() -> absl::Status {
    DS_RETURN_IF_ERROR(RequireText(text, "text"));
    DS_RETURN_IF_ERROR(RequireArgument(objects_json, "objects_json"));
    DS_ASSIGN_OR_RETURN(nlohmann::json objects,
                        deviceshare::capi::DocumentObjectsJson(text));
    return SetOutput(objects_json, deviceshare::JsonText(objects));
  });
}

deviceshare_code deviceshare_scheduler_create(const char* config,
                                              deviceshare_scheduler** out,
                                              char** error) {
  return Guarded(error, [&]() -> absl::Status {
    DS_RETURN_IF_ERROR(RequireArgument(out, "out"));
    DS_RETURN_IF_ERROR(CheckOptionalText(config, "config"));
    DS_ASSIGN_OR_RETURN(
        std::unique_ptr<deviceshare::Scheduler> scheduler,
        deviceshare::capi::NewScheduler(config == nullptr ? "" : config));
    *out = SchedulerHandles().Add(std::move(scheduler));
    return absl::OkStatus();
  });
}

deviceshare_code deviceshare_scheduler_destroy(
    deviceshare_scheduler* scheduler) {
  return Guarded(nullptr, [&]() -> absl::Status {
    DS_RETURN_IF_ERROR(RequireArgument(scheduler, "scheduler"));
    return SchedulerHandles().Remove(scheduler);
  });
}

deviceshare_code deviceshare_upsert_nodes(deviceshare_scheduler* scheduler,
                                          const char* nodes, char** result_json,
                                          char** error) {
  return Guarded(error, [&]() -> absl::Status {
    DS_ASSIGN_OR_RETURN(SchedulerRef found, Find(scheduler));
    DS_RETURN_IF_ERROR(RequireText(nodes, "nodes"));
    DS_RETURN_IF_ERROR(RequireArgument(result_json, "result_json"));
    DS_ASSIGN_OR_RETURN(std::string answer,
                        deviceshare::capi::UpsertNodes(*found, nodes));
    return SetOutput(result_json, answer);
  });
}

deviceshare_code deviceshare_remove_node(deviceshare_scheduler* scheduler,
                                         const char* name, char** error) {
  return Guarded(error, [&]() -> absl::Status {
    DS_ASSIGN_OR_RETURN(SchedulerRef found, Find(scheduler));
    DS_RETURN_IF_ERROR(RequireText(name, "name"));
    if (*name == '\0') return absl::InvalidArgumentError("name is empty");
    found->RemoveNode(name);
    return absl::OkStatus();
  });
}

deviceshare_code deviceshare_upsert_object(deviceshare_scheduler* scheduler,
                                           const char* object, char** error) {
  return Guarded(error, [&]() -> absl::Status {
    DS_ASSIGN_OR_RETURN(SchedulerRef found, Find(scheduler));
    DS_RETURN_IF_ERROR(RequireText(object, "object"));
    return deviceshare::capi::UpsertObject(*found, object);
  });
}

deviceshare_code deviceshare_remove_object(deviceshare_scheduler* scheduler,
                                           const char* kind, const char* name,
                                           char** error) {
  return Guarded(error, [&]() -> absl::Status {
    DS_ASSIGN_OR_RETURN(SchedulerRef found, Find(scheduler));
    DS_RETURN_IF_ERROR(RequireText(kind, "kind"));
    DS_RETURN_IF_ERROR(RequireText(name, "name"));
    return deviceshare::capi::RemoveObject(*found, kind, name);
  });
}

deviceshare_code deviceshare_filter(deviceshare_scheduler* scheduler,
                                    const char* pod, const char* nodes_json,
                                    char** verdicts_json, char** error) {
  return Guarded(error, [&]() -> absl::Status {
    DS_ASSIGN_OR_RETURN(SchedulerRef found, Find(scheduler));
    DS_RETURN_IF_ERROR(RequireText(pod, "pod"));
    DS_RETURN_IF_ERROR(CheckOptionalText(nodes_json, "nodes_json"));
    DS_RETURN_IF_ERROR(RequireArgument(verdicts_json, "verdicts_json"));
    DS_ASSIGN_OR_RETURN(
        deviceshare::capi::ParsedPod parsed,
        deviceshare::capi::ParsePod(pod, found->config().device));
    DS_ASSIGN_OR_RETURN(std::vector<std::string> nodes,
                        deviceshare::capi::ParseNodeNames(nodes_json));
    DS_ASSIGN_OR_RETURN(std::vector<deviceshare::NodeVerdict> verdicts,
                        found->Filter(parsed.request, nodes));
    return SetOutput(verdicts_json, deviceshare::capi::VerdictsJson(verdicts));
  });
}

deviceshare_code deviceshare_score(deviceshare_scheduler* scheduler,
                                   const char* pod, const char* node,
                                   int* score, char** error) {
  return Guarded(error, [&]() -> absl::Status {
    DS_ASSIGN_OR_RETURN(SchedulerRef found, Find(scheduler));
    DS_RETURN_IF_ERROR(RequireText(pod, "pod"));
    DS_RETURN_IF_ERROR(RequireText(node, "node"));
    DS_RETURN_IF_ERROR(RequireArgument(score, "score"));
    DS_ASSIGN_OR_RETURN(
        deviceshare::capi::ParsedPod parsed,
        deviceshare::capi::ParsePod(pod, found->config().device));
    DS_ASSIGN_OR_RETURN(*score, found->ScoreNode(parsed.request, node));
    return absl::OkStatus();
  });
}

deviceshare_code deviceshare_pod_create(deviceshare_scheduler* scheduler,
                                        const char* pod, deviceshare_pod** out,
                                        char** error) {
  return Guarded(error, [&]() -> absl::Status {
    DS_ASSIGN_OR_RETURN(SchedulerRef found, Find(scheduler));
    DS_RETURN_IF_ERROR(RequireText(pod, "pod"));
    DS_RETURN_IF_ERROR(RequireArgument(out, "out"));
    DS_ASSIGN_OR_RETURN(
        deviceshare::capi::ParsedPod parsed,
        deviceshare::capi::ParsePod(pod, found->config().device));
    *out = PodHandles().Add(
        std::make_shared<deviceshare::capi::ParsedPod>(std::move(parsed)));
    return absl::OkStatus();
  });
}

deviceshare_code deviceshare_pod_destroy(deviceshare_pod* pod) {
  return Guarded(nullptr, [&]() -> absl::Status {
    DS_RETURN_IF_ERROR(RequireArgument(pod, "pod"));
    return PodHandles().Remove(pod);
  });
}

namespace {

// deviceshare_pod_filter_node(_without)'s body: `released` empty for the
// former.
deviceshare_code PodFilterNode(deviceshare_scheduler* scheduler,
                               const deviceshare_pod* pod, const char* node,
                               const char* const* released,
                               size_t released_count, int* fits, int* score,
                               const char** code, int* unresolvable,
                               char** reason, char** error) {
  return Guarded(error, [&]() -> absl::Status {
    DS_ASSIGN_OR_RETURN(SchedulerRef found, Find(scheduler));
    DS_RETURN_IF_ERROR(RequireArgument(pod, "pod"));
    DS_RETURN_IF_ERROR(RequireText(node, "node"));
    DS_RETURN_IF_ERROR(RequireArgument(fits, "fits"));
    DS_RETURN_IF_ERROR(RequireArgument(score, "score"));
    DS_RETURN_IF_ERROR(RequireArgument(code, "code"));
    DS_RETURN_IF_ERROR(RequireArgument(unresolvable, "unresolvable"));
    DS_RETURN_IF_ERROR(RequireArgument(reason, "reason"));
    if (released_count > 0) {
      DS_RETURN_IF_ERROR(RequireArgument(released, "released"));
    }
    std::vector<std::string> uids;
    uids.reserve(released_count);
    for (size_t i = 0; i < released_count; ++i) {
      const std::string field = absl::StrCat("released[", i, "]");
      DS_RETURN_IF_ERROR(RequireText(released[i], field.c_str()));
      uids.emplace_back(released[i]);
    }
    DS_ASSIGN_OR_RETURN(auto parsed, PodHandles().Find(pod));
    DS_ASSIGN_OR_RETURN(
        deviceshare::NodeVerdict verdict,
        uids.empty() ? found->FilterNode(parsed->request, node)
                     : found->FilterNodeWithout(parsed->request, node, uids));
    const deviceshare::capi::VerdictFields fields =
        deviceshare::capi::FieldsOf(verdict);
    const bool fitting = fields.fits != 0;
    if (!fitting) DS_RETURN_IF_ERROR(SetOutput(reason, verdict.fit.Reason()));
    *fits = fields.fits;
    *score = fields.score;
    *code = fields.code;
    *unresolvable = fields.unresolvable;
    if (fitting) *reason = nullptr;
    return absl::OkStatus();
  });
}

}  // namespace

deviceshare_code deviceshare_pod_filter_node(deviceshare_scheduler* scheduler,
                                             const deviceshare_pod* pod,
                                             const char* node, int* fits,
                                             int* score, const char** code,
                                             int* unresolvable, char** reason,
                                             char** error) {
  return PodFilterNode(scheduler, pod, node, nullptr, 0, fits, score, code,
                       unresolvable, reason, error);
}

deviceshare_code deviceshare_pod_filter_node_without(
    deviceshare_scheduler* scheduler, const deviceshare_pod* pod,
    const char* node, const char* const* released, size_t released_count,
    int* fits, int* score, const char** code, int* unresolvable, char** reason,
    char** error) {
  return PodFilterNode(scheduler, pod, node, released, released_count, fits,
                       score, code, unresolvable, reason, error);
}

deviceshare_code deviceshare_pod_wants_devices(const deviceshare_pod* pod,
                                               int* wants) {
  return Guarded(nullptr, [&]() -> absl::Status {
    DS_RETURN_IF_ERROR(RequireArgument(pod, "pod"));
    DS_RETURN_IF_ERROR(RequireArgument(wants, "wants"));
    DS_ASSIGN_OR_RETURN(auto parsed, PodHandles().Find(pod));
    *wants = parsed->request.HasGpuRequest() || parsed->request.HasClaims();
    return absl::OkStatus();
  });
}

deviceshare_code deviceshare_pod_filter_all(deviceshare_scheduler* scheduler,
                                            const deviceshare_pod* pod,
                                            deviceshare_node_verdict** verdicts,
                                            size_t* count, char** error) {
  return Guarded(error, [&]() -> absl::Status {
    DS_ASSIGN_OR_RETURN(SchedulerRef found, Find(scheduler));
    DS_RETURN_IF_ERROR(RequireArgument(pod, "pod"));
    DS_RETURN_IF_ERROR(RequireArgument(verdicts, "verdicts"));
    DS_RETURN_IF_ERROR(RequireArgument(count, "count"));
    DS_ASSIGN_OR_RETURN(auto parsed, PodHandles().Find(pod));
    DS_ASSIGN_OR_RETURN(std::vector<deviceshare::NodeVerdict> all,
                        found->FilterForReserve(parsed->request));
    DS_ASSIGN_OR_RETURN(*verdicts, deviceshare::capi::PackVerdicts(all));
    *count = all.size();
    return absl::OkStatus();
  });
}

void deviceshare_verdicts_free(deviceshare_node_verdict* verdicts) {
  std::free(verdicts);
}

deviceshare_code deviceshare_pod_allocate(deviceshare_scheduler* scheduler,
                                          const deviceshare_pod* pod,
                                          const char* node,
                                          char** decision_json, char** error) {
  return Guarded(error, [&]() -> absl::Status {
    DS_ASSIGN_OR_RETURN(SchedulerRef found, Find(scheduler));
    DS_RETURN_IF_ERROR(RequireArgument(pod, "pod"));
    DS_RETURN_IF_ERROR(RequireText(node, "node"));
    DS_RETURN_IF_ERROR(RequireArgument(decision_json, "decision_json"));
    DS_ASSIGN_OR_RETURN(auto parsed, PodHandles().Find(pod));
    return AnswerDecision(*found, parsed->request,
                          found->Allocate(parsed->request, node),
                          decision_json);
  });
}

deviceshare_code deviceshare_pod_score_node(deviceshare_scheduler* scheduler,
                                            const deviceshare_pod* pod,
                                            const char* node, int* score,
                                            char** error) {
  return Guarded(error, [&]() -> absl::Status {
    DS_ASSIGN_OR_RETURN(SchedulerRef found, Find(scheduler));
    DS_RETURN_IF_ERROR(RequireArgument(pod, "pod"));
    DS_RETURN_IF_ERROR(RequireText(node, "node"));
    DS_RETURN_IF_ERROR(RequireArgument(score, "score"));
    DS_ASSIGN_OR_RETURN(auto parsed, PodHandles().Find(pod));
    DS_ASSIGN_OR_RETURN(*score, found->ScoreNode(parsed->request, node));
    return absl::OkStatus();
  });
}

deviceshare_code deviceshare_schedule(deviceshare_scheduler* scheduler,
                                      const char* pod, const char* options_json,
                                      char** decision_json, char** error) {
  return Guarded(error, [&]() -> absl::Status {
    DS_ASSIGN_OR_RETURN(SchedulerRef found, Find(scheduler));
    DS_RETURN_IF_ERROR(RequireText(pod, "pod"));
    DS_RETURN_IF_ERROR(CheckOptionalText(options_json, "options_json"));
    DS_RETURN_IF_ERROR(RequireArgument(decision_json, "decision_json"));
    DS_ASSIGN_OR_RETURN(
        deviceshare::capi::ParsedPod parsed,
        deviceshare::capi::ParsePod(pod, found->config().device));
    DS_ASSIGN_OR_RETURN(deviceshare::ScheduleOptions options,
                        deviceshare::capi::ParseScheduleOptions(options_json));
    options.annotations = true;
    return AnswerDecision(*found, parsed.request,
                          found->Schedule(parsed.request, options),
                          decision_json);
  });
}

deviceshare_code deviceshare_allocate(deviceshare_scheduler* scheduler,
                                      const char* pod, const char* node,
                                      char** decision_json, char** error) {
  return Guarded(error, [&]() -> absl::Status {
    DS_ASSIGN_OR_RETURN(SchedulerRef found, Find(scheduler));
    DS_RETURN_IF_ERROR(RequireText(pod, "pod"));
    DS_RETURN_IF_ERROR(RequireText(node, "node"));
    DS_RETURN_IF_ERROR(RequireArgument(decision_json, "decision_json"));
    DS_ASSIGN_OR_RETURN(
        deviceshare::capi::ParsedPod parsed,
        deviceshare::capi::ParsePod(pod, found->config().device));
    return AnswerDecision(*found, parsed.request,
                          found->Allocate(parsed.request, node), decision_json);
  });
}

deviceshare_code deviceshare_bind(deviceshare_scheduler* scheduler,
                                  const char* pod, const char* node,
                                  char** error) {
  return Guarded(error, [&]() -> absl::Status {
    DS_ASSIGN_OR_RETURN(SchedulerRef found, Find(scheduler));
    DS_RETURN_IF_ERROR(RequireText(pod, "pod"));
    DS_RETURN_IF_ERROR(RequireText(node, "node"));
    DS_ASSIGN_OR_RETURN(
        deviceshare::capi::ParsedPod parsed,
        deviceshare::capi::ParsePod(pod, found->config().device));
    DS_ASSIGN_OR_RETURN(
        bool recorded,
        found->AddBoundPod(parsed.request,
                           deviceshare::PodAnnotationMap(parsed.object), node));
    if (recorded) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrFormat(
        "pod %s carries no allocation record (neither dialect's "
        "annotations)",
        parsed.request.Key()));
  });
}

deviceshare_code deviceshare_release(deviceshare_scheduler* scheduler,
                                     const char* pod_uid, char** error) {
  return Guarded(error, [&]() -> absl::Status {
    DS_ASSIGN_OR_RETURN(SchedulerRef found, Find(scheduler));
    DS_RETURN_IF_ERROR(RequireText(pod_uid, "pod_uid"));
    if (*pod_uid == '\0') return absl::InvalidArgumentError("pod_uid is empty");
    found->Release(pod_uid);
    return absl::OkStatus();
  });
}

deviceshare_code deviceshare_usage(deviceshare_scheduler* scheduler,
                                   char** usage_json, char** error) {
  return Guarded(error, [&]() -> absl::Status {
    DS_ASSIGN_OR_RETURN(SchedulerRef found, Find(scheduler));
    DS_RETURN_IF_ERROR(RequireArgument(usage_json, "usage_json"));
    return SetOutput(usage_json, deviceshare::capi::UsageJson(*found));
  });
}

}  // extern "C"
