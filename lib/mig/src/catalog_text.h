// File: src/catalog_text.h (internal)
//
// The catalog file format (see MigCatalog::FromText) in both directions.
// Parsing checks the shape and the per-value ranges that need the file's
// own paths (`starts[1]`); NormalizeModel() checks the rest.
#ifndef DEVICESHARE_MIG_SRC_CATALOG_TEXT_H_
#define DEVICESHARE_MIG_SRC_CATALOG_TEXT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/mig/mig_catalog.h"
#include "nlohmann/json.hpp"

namespace deviceshare::mig::internal {

absl::StatusOr<std::vector<MigModel>> ParseCatalogTree(
    const nlohmann::json& root);

std::string CatalogToYaml(const std::vector<MigModel>& models);

}  // namespace deviceshare::mig::internal

#endif  // DEVICESHARE_MIG_SRC_CATALOG_TEXT_H_
