// File: src/catalog_validate.h (internal)
//
// The one validation path of MigModel values, whether they come from the
// built-in tables, a file, or FromModels(): a catalog holds nothing that
// slipped past it.
#ifndef DEVICESHARE_MIG_SRC_CATALOG_VALIDATE_H_
#define DEVICESHARE_MIG_SRC_CATALOG_VALIDATE_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "deviceshare/mig/mig_catalog.h"

namespace deviceshare::mig::internal {

// Limits that keep occupancy in one uint32 mask and candidate sets in one
// uint32 bit set.
inline constexpr int32_t kMaxSlices = 32;
inline constexpr int32_t kMaxProfiles = 32;

// Canonicalises profile names (and derives `variant` from them), checks
// every field of `model` (errors start with `path`, e.g. "models[0]") and
// sorts its profiles.
absl::Status NormalizeModel(MigModel& model, absl::string_view path);

// What must hold between models: distinct names, PCI ids and model-name
// patterns, so that Match() is never ambiguous.
absl::Status CheckModelsDistinct(const std::vector<MigModel>& models);

}  // namespace deviceshare::mig::internal

#endif  // DEVICESHARE_MIG_SRC_CATALOG_VALIDATE_H_
