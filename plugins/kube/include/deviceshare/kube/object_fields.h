// File: kube/object_fields.h
//
// Lenient reads of an object's identity: watch events and bookkeeping must
// find a pod's key without parsing its whole request (ParsePodRequest does
// that, with errors, when it is needed). Absent or mistyped fields read as
// empty.
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_KUBE_OBJECT_FIELDS_H_
#define DEVICESHARE_KUBE_OBJECT_FIELDS_H_

#include <initializer_list>
#include <string>

#include "nlohmann/json.hpp"

namespace deviceshare::kube {

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

}  // namespace deviceshare::kube

#endif  // DEVICESHARE_KUBE_OBJECT_FIELDS_H_
