// Lenient reads of a Pod object's identity, for the extender's bookkeeping:
// watch events and verbs must find a pod's key without parsing its whole
// request (ParsePodRequest does that, with errors, when it is needed).
#ifndef DEVICESHARE_EXTENDER_POD_FIELDS_H_
#define DEVICESHARE_EXTENDER_POD_FIELDS_H_

#include <initializer_list>
#include <string>

#include "nlohmann/json.hpp"

namespace deviceshare::extender {

// A string field by path; empty when absent or not a string.
std::string Text(const nlohmann::json& object,
                 std::initializer_list<const char*> path);

// "namespace/name" (namespace "default" when unset), as PodRequest::Key().
std::string PodKey(const nlohmann::json& pod);

// metadata.uid, else PodKey(): the rule ParsePodRequest uses for
// PodRequest::uid.
std::string PodUid(const nlohmann::json& pod);

// spec.nodeName; empty while the pod is unbound.
std::string BoundNode(const nlohmann::json& pod);

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_POD_FIELDS_H_
