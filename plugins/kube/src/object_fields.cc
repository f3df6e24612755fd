#include "deviceshare/kube/object_fields.h"

#include "absl/strings/str_cat.h"

namespace deviceshare::kube {

std::string Text(const nlohmann::json& object,
                 std::initializer_list<const char*> path) {
  const nlohmann::json* at = &object;
  for (const char* key : path) {
    if (!at->is_object()) return "";
    auto it = at->find(key);
    if (it == at->end()) return "";
    at = &*it;
  }
  return at->is_string() ? at->get<std::string>() : "";
}

std::string PodKey(const nlohmann::json& pod) {
  std::string ns = Text(pod, {"metadata", "namespace"});
  return absl::StrCat(ns.empty() ? "default" : ns, "/",
                      Text(pod, {"metadata", "name"}));
}

std::string PodUid(const nlohmann::json& pod) {
  std::string uid = Text(pod, {"metadata", "uid"});
  return uid.empty() ? PodKey(pod) : uid;
}

std::string BoundNode(const nlohmann::json& pod) {
  return Text(pod, {"spec", "nodeName"});
}

}  // namespace deviceshare::kube
