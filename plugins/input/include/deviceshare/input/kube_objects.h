// File: input/kube_objects.h
//
// The Kubernetes objects of one document of a manifest file: the document
// itself, or the items of a `kind: List` / `kind: <Kind>List` object, as
// `kubectl get -o yaml` prints them. The loaders (cluster_loader.h,
// pod_loader.h) then check each object's kind and read it.
//
// Thread safety: pure functions; results point into the document, which
// must outlive them.
#ifndef DEVICESHARE_INPUT_KUBE_OBJECTS_H_
#define DEVICESHARE_INPUT_KUBE_OBJECTS_H_

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace deviceshare::input {

// The object's `kind`; "" when it has none or it is not a string.
std::string KindOf(const nlohmann::json& object);

// Whether a document of `kind` holds its objects under `items`: List, or
// `item_kind`List.
bool IsListOf(absl::string_view kind, absl::string_view item_kind);

// The error of a List document without a list `items`.
absl::Status ListWithoutItems(absl::string_view kind);

// The error prefix of item `index` of a List: "items[3]: ".
std::string ItemWhere(size_t index);

// One object of a document and where it is, as an error prefix: "" for the
// document itself, ItemWhere(i) for an item of a List.
struct DocumentObject {
  const nlohmann::json* object = nullptr;
  std::string where;
};

// The items of a document of kind List or `item_kind`List (InvalidArgument
// "kind K: items is missing or not a list" when it has no list `items`);
// any other document is its own one object. `document` is an object.
absl::StatusOr<std::vector<DocumentObject>> DocumentObjects(
    const nlohmann::json& document, absl::string_view item_kind);

}  // namespace deviceshare::input

#endif  // DEVICESHARE_INPUT_KUBE_OBJECTS_H_
