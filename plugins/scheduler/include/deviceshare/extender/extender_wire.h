// File: extender/extender_wire.h
//
// The wire types of a kube-scheduler HTTP extender
// (k8s.io/kube-scheduler/extender/v1), decoded from and encoded to JSON.
//
// Those Go types carry no json tags, so kube-scheduler marshals the field
// names as written (`Pod`, `NodeNames`, `PodUID`, ...) and Go's decoder
// matches a key to a field case-insensitively (bytes.EqualFold: ASCII case
// plus U+212A KELVIN SIGN for k and U+017F LONG S for s). The decoders here
// do the same, including Go's handling of repeated keys: when several keys
// fold to one field, the last one in the body wins, and for a string field
// a null value leaves the field as it was. Unknown keys are ignored. The
// Kubernetes objects inside (Pod, NodeList) have json tags, so their keys
// (`metadata`, `name`, `items`) are matched exactly, as kube-scheduler
// writes them. The encoders write Go's names and emit every field, as Go
// does.
//
// Decoding never throws and never crashes on any input: a body that is not
// JSON, nests deeper than kMaxJsonDepth, or has a field of the wrong shape
// is an InvalidArgument error naming the field and the value, e.g.
// `ExtenderArgs.NodeNames[3]: 42 is not a string`.
//
// Both directions avoid a JSON value per node name, since a filter call
// carries thousands of them on every scheduling cycle: the decoder reads
// kube-scheduler's plain NodeNames bodies with a scanner of its own (other
// bodies take the general path, with the same result), and the encoders
// write the JSON text directly. Strings are escaped per RFC 8259; bytes that
// are not valid UTF-8 become U+FFFD, as Go's encoder does, so the output is
// always valid JSON.
//
// Thread safety: every function is pure and may be called concurrently.
#ifndef DEVICESHARE_EXTENDER_EXTENDER_WIRE_H_
#define DEVICESHARE_EXTENDER_EXTENDER_WIRE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "deviceshare/extender/name_list.h"
#include "nlohmann/json.hpp"

namespace deviceshare::extender {

// Deeper bodies are rejected before parsing: no Kubernetes object comes
// close, and it keeps every later recursive walk of the tree (dump, copy,
// compare) far from the stack's end.
inline constexpr int kMaxJsonDepth = 256;

// More node names (or NodeList items) than this in one request is an
// error: kube-scheduler supports clusters of 5000 nodes.
inline constexpr size_t kMaxNodes = 100000;

// The body of a filter or prioritize call. kube-scheduler sends NodeNames
// when the extender is nodeCacheCapable, else the full Nodes list; it always
// sends one of them, so a body with neither (both absent or null) is an
// error.
struct ExtenderArgs {
  // The Pod object as sent; metadata.name is known to be a string.
  nlohmann::json pod;
  std::optional<NameList> node_names;
  // The NodeList object as sent (nodeCacheCapable: false); every item is an
  // object whose metadata.name is a string. `items` may be absent or null.
  std::optional<nlohmann::json> nodes;

  // node_names when sent, else the metadata.name of each Nodes item, in the
  // order they came.
  NameList NodeNamesOrFromList() const;
};

absl::StatusOr<ExtenderArgs> DecodeExtenderArgs(absl::string_view body);

// The body of a bind call.
struct BindingArgs {
  std::string pod_name;       // required, non-empty
  std::string pod_namespace;  // required, non-empty
  std::string pod_uid;        // optional: empty when absent or null
  std::string node;           // required, non-empty
};

absl::StatusOr<BindingArgs> DecodeBindingArgs(absl::string_view body);

// The answer to a filter call (ExtenderFilterResult).
struct FilterResult {
  // The nodes that pass.
  std::vector<std::string> node_names;
  // Only for a request that sent Nodes: the NodeList to answer, normally
  // NodeListWith(request's nodes, node_names) so the passing Node objects
  // are echoed whole. When unset, the answer lists one stub item
  // {"metadata":{"name":...}} per node_names entry, which is all
  // kube-scheduler reads from it.
  std::optional<nlohmann::json> nodes;
  // Node name -> reason. failed_nodes may pass after preemption;
  // failed_and_unresolvable_nodes cannot.
  std::map<std::string, std::string> failed_nodes;
  std::map<std::string, std::string> failed_and_unresolvable_nodes;
  // Non-empty fails the whole call: kube-scheduler then ignores the rest.
  std::string error;
};

// `nodes_form`: the request sent Nodes (ExtenderArgs::nodes has a value).
// Then the answer carries `Nodes` (the NodeList) and also `NodeNames`, which
// kube-scheduler ignores in that mode; otherwise `NodeNames` and
// `"Nodes":null`. kube-scheduler reads NodeNames when nodeCacheCapable and
// Nodes otherwise, so answering in the request's form is always understood.
std::string EncodeFilterResult(const FilterResult& result, bool nodes_form);

// A copy of `node_list` whose items are those named in `names`, in the
// list's order. Items without a string metadata.name are dropped.
nlohmann::json NodeListWith(const nlohmann::json& node_list,
                            absl::Span<const std::string> names);

// One entry of the answer to a prioritize call (HostPriorityList).
struct HostPriority {
  std::string host;
  int64_t score = 0;
};

// `[{"Host":"a","Score":10},...]`; an empty list is `[]`.
std::string EncodePriorityList(const std::vector<HostPriority>& priorities);
// The same text for `names` with `scores[i]` for names[i] (the sizes must
// match), without a HostPriority, and its copy of the name, per node.
std::string EncodePriorityList(const NameList& names,
                               absl::Span<const int> scores);

// `{"Error":"..."}` (ExtenderBindingResult); success is `{"Error":""}`.
std::string EncodeBindingResult(absl::string_view error);

// ---- Preemption (the preempt verb) ---------------------------------------
//
// ExtenderPreemptionArgs and ExtenderPreemptionResult. Their nested types
// (Victims, MetaVictims, MetaPod) are untagged Go structs too, so their keys
// fold like the top-level ones. One difference from Go: a nested object in
// which several distinct keys fold to one field is refused (Go would take
// the last; kube-scheduler writes each field once).

// The victims on one node: pod uids and PodDisruptionBudget violations.
struct MetaVictims {
  std::vector<std::string> pod_uids;
  int64_t num_pdb_violations = 0;

  bool operator==(const MetaVictims& other) const = default;
};

// The body of a preempt call. kube-scheduler sends NodeNameToMetaVictims
// (uids) when the extender is nodeCacheCapable, else NodeNameToVictims
// (whole Pods); both are read into `node_victims` (a Pod's metadata.uid).
// When both are set, NodeNameToMetaVictims is used. A body with neither
// is an empty proposal (no node).
struct PreemptionArgs {
  // The Pod object as sent; metadata.name is known to be a string.
  nlohmann::json pod;
  // Node -> the victims kube-scheduler proposes there. A null entry reads
  // as no victims.
  std::map<std::string, MetaVictims> node_victims;
};

// Errors name the field and the value, e.g.
// `ExtenderPreemptionArgs.NodeNameToMetaVictims["n1"].Pods[0].UID: 7 is not
// a string`.
absl::StatusOr<PreemptionArgs> DecodePreemptionArgs(absl::string_view body);

// The answer to a preempt call (ExtenderPreemptionResult): node -> the
// victims to evict there. A node left out is one where preemption does not
// help. Always `{"NodeNameToMetaVictims":{...}}`, each entry
// `{"Pods":[{"UID":"..."}],"NumPDBViolations":0}`.
struct PreemptionResult {
  std::map<std::string, MetaVictims> node_victims;
};

std::string EncodePreemptionResult(const PreemptionResult& result);

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_EXTENDER_WIRE_H_
