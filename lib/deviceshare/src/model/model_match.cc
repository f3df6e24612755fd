#include "deviceshare/model/model_match.h"

#include <algorithm>

#include "absl/strings/ascii.h"

namespace deviceshare {

bool ModelNames(absl::string_view model, absl::string_view name) {
  return std::search(model.begin(), model.end(), name.begin(), name.end(),
                     [](char a, char b) {
                       return absl::ascii_tolower(a) == absl::ascii_tolower(b);
                     }) != model.end() ||
         name.empty();
}

bool ModelNamesAny(absl::string_view model,
                   const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(), [&](const std::string& name) {
    return ModelNames(model, name);
  });
}

}  // namespace deviceshare
