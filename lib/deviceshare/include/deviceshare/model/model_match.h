// File: model/model_match.h
//
// How HAMi and Volcano match a GPU's registered type against the model
// names a pod or the config lists (nvidia.com/use-gputype,
// nvidia.com/nouse-gputype, knownMigGeometries models): a case-insensitive
// substring, so "A100" names "NVIDIA-NVIDIA A100-SXM4-80GB". One rule for
// every caller, so a model a pod names and one the config lists can never
// be matched two ways.
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_MODEL_MODEL_MATCH_H_
#define DEVICESHARE_MODEL_MODEL_MATCH_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace deviceshare {

// True when `name` occurs in `model`, ignoring ASCII case; an empty name
// occurs in every model.
bool ModelNames(absl::string_view model, absl::string_view name);

// True when any of `names` occurs in `model` (false for none).
bool ModelNamesAny(absl::string_view model,
                   const std::vector<std::string>& names);

}  // namespace deviceshare

#endif  // DEVICESHARE_MODEL_MODEL_MATCH_H_
