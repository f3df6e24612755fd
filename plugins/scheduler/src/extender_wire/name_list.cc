#include "deviceshare/extender/name_list.h"

namespace deviceshare::extender {

NameList::NameList(std::initializer_list<absl::string_view> names) {
  for (absl::string_view name : names) push_back(name);
}

NameList::NameList(const std::vector<std::string>& names) {
  size_t bytes = 0;
  for (const std::string& name : names) bytes += name.size();
  reserve(names.size(), bytes);
  for (const std::string& name : names) push_back(name);
}

void NameList::reserve(size_t names, size_t bytes) {
  ends_.reserve(names);
  names_.reserve(bytes);
}

void NameList::push_back(absl::string_view name) {
  names_.append(name.data(), name.size());
  ends_.push_back(static_cast<uint32_t>(names_.size()));
}

std::vector<absl::string_view> NameList::Views() const {
  std::vector<absl::string_view> views;
  views.reserve(size());
  for (absl::string_view name : *this) views.push_back(name);
  return views;
}

std::vector<std::string> NameList::ToStrings() const {
  std::vector<std::string> names;
  names.reserve(size());
  for (absl::string_view name : *this) names.emplace_back(name);
  return names;
}

}  // namespace deviceshare::extender
