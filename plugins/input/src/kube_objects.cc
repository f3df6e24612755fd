#include "deviceshare/input/kube_objects.h"

#include "absl/strings/str_cat.h"

namespace deviceshare::input {

std::string KindOf(const nlohmann::json& object) {
  auto it = object.find("kind");
  if (it == object.end() || !it->is_string()) return "";
  return it->get<std::string>();
}

bool IsListOf(absl::string_view kind, absl::string_view item_kind) {
  return kind == "List" || kind == absl::StrCat(item_kind, "List");
}

absl::Status ListWithoutItems(absl::string_view kind) {
  return absl::InvalidArgumentError(
      absl::StrCat("kind ", kind, ": items is missing or not a list"));
}

std::string ItemWhere(size_t index) {
  return absl::StrCat("items[", index, "]: ");
}

absl::StatusOr<std::vector<DocumentObject>> DocumentObjects(
    const nlohmann::json& document, absl::string_view item_kind) {
  const std::string kind = KindOf(document);
  if (!IsListOf(kind, item_kind)) {
    return std::vector<DocumentObject>{{&document, ""}};
  }
  auto items = document.find("items");
  if (items == document.end() || !items->is_array()) {
    return ListWithoutItems(kind);
  }
  std::vector<DocumentObject> objects;
  objects.reserve(items->size());
  for (size_t i = 0; i < items->size(); ++i) {
    objects.push_back({&(*items)[i], ItemWhere(i)});
  }
  return objects;
}

}  // namespace deviceshare::input
