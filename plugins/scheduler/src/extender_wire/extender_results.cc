// The encoders of extender_wire.h: JSON text written directly, since a
// filter answer is produced on every scheduling cycle.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/extender/extender_wire.h"
#include "deviceshare/json_text.h"
#include "json_text.h"

namespace deviceshare::extender {
namespace {

using internal::AppendJsonString;

// Room for a string once quoted, assuming it needs no escapes.
size_t QuotedSize(absl::string_view text) { return text.size() + 3; }

void AppendNames(const std::vector<std::string>& names, std::string* out) {
  out->push_back('[');
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out->push_back(',');
    AppendJsonString(names[i], out);
  }
  out->push_back(']');
}

// A NodeList whose items carry only their names: kube-scheduler looks each
// answered node up by metadata.name and reads nothing else.
void AppendStubNodeList(const std::vector<std::string>& names,
                        std::string* out) {
  out->append(R"({"metadata":{},"items":[)");
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out->push_back(',');
    out->append(R"({"metadata":{"name":)");
    AppendJsonString(names[i], out);
    out->append("}}");
  }
  out->append("]}");
}

void AppendReasons(const std::map<std::string, std::string>& reasons,
                   std::string* out) {
  out->push_back('{');
  bool first = true;
  for (const auto& [node, reason] : reasons) {
    if (!first) out->push_back(',');
    first = false;
    AppendJsonString(node, out);
    out->push_back(':');
    AppendJsonString(reason, out);
  }
  out->push_back('}');
}

size_t ReasonsSize(const std::map<std::string, std::string>& reasons) {
  size_t size = 2;
  for (const auto& [node, reason] : reasons) {
    size += QuotedSize(node) + QuotedSize(reason);
  }
  return size;
}

}  // namespace

std::string EncodeFilterResult(const FilterResult& result, bool nodes_form) {
  size_t names_size = 2;
  for (const std::string& name : result.node_names) {
    names_size += QuotedSize(name);
  }
  std::string out;
  out.reserve(128 + names_size * (nodes_form ? 3 : 1) +
              ReasonsSize(result.failed_nodes) +
              ReasonsSize(result.failed_and_unresolvable_nodes) +
              QuotedSize(result.error));
  out.append(R"({"Nodes":)");
  if (!nodes_form) {
    out.append("null");
  } else if (result.nodes.has_value()) {
    out.append(JsonText(*result.nodes));
  } else {
    AppendStubNodeList(result.node_names, &out);
  }
  out.append(R"(,"NodeNames":)");
  AppendNames(result.node_names, &out);
  out.append(R"(,"FailedNodes":)");
  AppendReasons(result.failed_nodes, &out);
  out.append(R"(,"FailedAndUnresolvableNodes":)");
  AppendReasons(result.failed_and_unresolvable_nodes, &out);
  out.append(R"(,"Error":)");
  AppendJsonString(result.error, &out);
  out.push_back('}');
  return out;
}

namespace {

// `{"Host":"<host>","Score":<score>}`.
void AppendPriority(absl::string_view host, int64_t score, std::string* out) {
  out->append(R"({"Host":)");
  AppendJsonString(host, out);
  absl::StrAppend(out, R"(,"Score":)", score, "}");
}

}  // namespace

std::string EncodePriorityList(const std::vector<HostPriority>& priorities) {
  std::string out;
  out.reserve(2 + priorities.size() * 48);
  out.push_back('[');
  for (size_t i = 0; i < priorities.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendPriority(priorities[i].host, priorities[i].score, &out);
  }
  out.push_back(']');
  return out;
}

std::string EncodePriorityList(const NameList& names,
                               absl::Span<const int> scores) {
  std::string out;
  out.reserve(2 + names.size() * 48);
  out.push_back('[');
  for (size_t i = 0; i < names.size() && i < scores.size(); ++i) {
    if (i > 0) out.push_back(',');
    AppendPriority(names[i], scores[i], &out);
  }
  out.push_back(']');
  return out;
}

std::string EncodeBindingResult(absl::string_view error) {
  std::string out = R"({"Error":)";
  AppendJsonString(error, &out);
  out.push_back('}');
  return out;
}

}  // namespace deviceshare::extender
