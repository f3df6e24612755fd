// File: src/builtin_catalog.h (internal)
//
// The built-in MIG tables, before validation (MigCatalog::Builtin()
// validates and sorts them once).
#ifndef DEVICESHARE_MIG_SRC_BUILTIN_CATALOG_H_
#define DEVICESHARE_MIG_SRC_BUILTIN_CATALOG_H_

#include <vector>

#include "deviceshare/mig/mig_catalog.h"

namespace deviceshare::mig::internal {

std::vector<MigModel> BuiltinModels();

}  // namespace deviceshare::mig::internal

#endif  // DEVICESHARE_MIG_SRC_BUILTIN_CATALOG_H_
