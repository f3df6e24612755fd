#include "deviceshare/input/kube_objects.h"

#include "absl/strings/str_cat.h"

namespace deviceshare::input {

std::string KindOf(const nlohmann::json& object) {
  auto it = object.find("kind");
  if (it == object.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

absl::StatusOr<std::vector<DocumentObject>> DocumentObjects(
    const nlohmann::json& document, absl::string_view item_kind) {
  const std::string kind = KindOf(document);
  if (kind != "List" && kind != absl::StrCat(item_kind, "List")) {
    return std::vector<DocumentObject>{{&document, ""}};
  }
  auto items = document.find("items");
  if (items == document.end() || !items->is_array()) {
    return absl::InvalidArgumentError(
        absl::StrCat("kind ", kind, ": items is missing or not a list"));
  }
  std::vector<DocumentObject> objects;
  objects.reserve(items->size());
  for (size_t i = 0; i < items->size(); ++i) {
    objects.push_back({&(*items)[i], absl::StrCat("items[", i, "]: ")});
  }
  return objects;
}

}  // namespace deviceshare::input
