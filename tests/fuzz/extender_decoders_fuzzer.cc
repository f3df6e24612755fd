// libFuzzer target: arbitrary bytes as the body of an extender call.
//
// Decoding must never crash, throw or trip a sanitizer, whatever the bytes;
// what decodes is pushed on through everything the extender does with a
// request (the pod and node parsers, the allocation record reader) and
// through the encoders, whose output must parse back to the same names.
// The fast scanner for kube-scheduler's plain bodies must agree with the
// general reader wherever it answers. A broken invariant traps, so
// libFuzzer saves the input. The same bytes are an AdmissionReview for the
// admission webhook's decision: it must answer or refuse, never throw, and
// a patch it sends must apply to the pod it was made for.
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/string_view.h"
#include "deviceshare/admission/admission_review.h"
#include "deviceshare/config/device_config.h"
#include "deviceshare/extender/extender_wire.h"
#include "deviceshare/k8s/node_parser.h"
#include "deviceshare/k8s/pod_annotations.h"
#include "deviceshare/k8s/pod_parser.h"
#include "extender_args_fields.h"  // plugins/scheduler/src/extender_wire
#include "nlohmann/json.hpp"

namespace {

using ::nlohmann::json;
namespace ext = ::deviceshare::extender;

void Check(bool invariant) {
  if (!invariant) __builtin_trap();
}

// The encoders' text must be JSON that nlohmann reads back (it throws, so
// libFuzzer reports, if it is not).
json Reparse(const std::string& text) { return json::parse(text); }

void FuzzBinding(absl::string_view body) {
  auto args = ext::DecodeBindingArgs(body);
  if (!args.ok()) return;
  Check(!args->pod_name.empty() && !args->pod_namespace.empty() &&
        !args->node.empty());
  // Decoded strings are valid UTF-8, so they must survive the encoder.
  Check(Reparse(ext::EncodeBindingResult(args->pod_uid))["Error"] ==
        args->pod_uid);
}

void FuzzPlainScanner(absl::string_view body) {
  std::optional<ext::ExtenderArgs> plain =
      ext::internal::ScanPlainExtenderArgs(body);
  if (!plain.has_value()) return;
  auto general = ext::internal::ReadExtenderArgsFields(body);
  Check(general.ok());
  Check(plain->pod == general->pod);
  Check(plain->node_names == general->node_names);
  Check(plain->nodes == general->nodes);
}

void FuzzExtenderArgs(absl::string_view body) {
  auto args = ext::DecodeExtenderArgs(body);
  if (!args.ok()) return;
  const std::vector<std::string> names =
      args->NodeNamesOrFromList().ToStrings();
  Check(names.size() <= ext::kMaxNodes);

  ext::FilterResult result;
  result.node_names = names;
  std::vector<ext::HostPriority> priorities;
  for (const std::string& name : names) {
    result.failed_nodes[name] = name;
    priorities.push_back({name, static_cast<int64_t>(name.size())});
  }
  if (args->nodes.has_value()) {
    result.nodes = ext::NodeListWith(*args->nodes, names);
  }
  const json filter =
      Reparse(ext::EncodeFilterResult(result, args->nodes.has_value()));
  Check(filter["NodeNames"] == json(names));
  Check(filter["FailedNodes"].size() == result.failed_nodes.size());
  const json priority_list = Reparse(ext::EncodePriorityList(priorities));
  Check(priority_list.size() == priorities.size());
  for (size_t i = 0; i < priorities.size(); ++i) {
    Check(priority_list[i]["Host"] == priorities[i].host);
  }

  auto request =
      deviceshare::ParsePodRequest(args->pod, deviceshare::DeviceConfig{});
  if (request.ok()) {
    auto allocation = deviceshare::AllocationFromAnnotations(
        *request, ::deviceshare::PodAnnotationMap(args->pod), "n", 1);
    (void)allocation;
  }
  if (args->nodes.has_value()) {
    auto items = args->nodes->find("items");
    if (items != args->nodes->end() && items->is_array()) {
      for (const json& node : *items) {
        auto inventory = deviceshare::ParseNodeInventory(node, 1);
        (void)inventory;
      }
    }
  }
}

// The preempt verb's body; what decodes must survive the result encoder.
void FuzzPreemption(absl::string_view body) {
  auto args = ext::DecodePreemptionArgs(body);
  if (!args.ok()) return;
  Check(args->node_victims.size() <= ext::kMaxNodes);
  const json answer = Reparse(ext::EncodePreemptionResult(
      ext::PreemptionResult{args->node_victims}))["NodeNameToMetaVictims"];
  Check(answer.size() == args->node_victims.size());
  for (const auto& entry : args->node_victims) {
    const json& pods = answer[entry.first]["Pods"];
    Check(pods.size() == entry.second.pod_uids.size());
    for (size_t i = 0; i < pods.size(); ++i) {
      Check(pods[i]["UID"] == entry.second.pod_uids[i]);
    }
  }
}

void FuzzAdmissionReview(absl::string_view body) {
  auto answer = deviceshare::admission::AnswerAdmissionReview(
      body, deviceshare::admission::AdmissionSettings{});
  if (!answer.ok()) return;
  const json response = Reparse(answer->body)["response"];
  Check(response["uid"] == answer->uid);
  Check(response["allowed"] == answer->allowed);
  if (!response.contains("patch")) return;
  std::string patch;
  Check(absl::Base64Unescape(response["patch"].get<std::string>(), &patch));
  // Throws, so libFuzzer reports, if the patch does not apply.
  const json pod = json::parse(body)["request"]["object"];
  const json mutated = pod.patch(json::parse(patch));
  Check(mutated["spec"]["schedulerName"] == "deviceshare-scheduler");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view body(reinterpret_cast<const char*>(data), size);
  FuzzBinding(body);
  FuzzPlainScanner(body);
  FuzzExtenderArgs(body);
  FuzzPreemption(body);
  FuzzAdmissionReview(body);
  return 0;
}
