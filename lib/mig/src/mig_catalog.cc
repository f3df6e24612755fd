#include "deviceshare/mig/mig_catalog.h"

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "builtin_catalog.h"
#include "catalog_text.h"
#include "catalog_validate.h"
#include "deviceshare/codec/yaml_json.h"
#include "deviceshare/status_macros.h"
#include "json_fields.h"
#include "model_words.h"
#include "profile_name.h"

namespace deviceshare::mig {

uint32_t MigProfile::MaskAt(int32_t start) const {
  if (start < 0 || memory_slices <= 0 || start + memory_slices > 32) return 0;
  const uint32_t run = memory_slices >= 32 ? ~0u : ((1u << memory_slices) - 1u);
  return run << start;
}

const MigProfile* MigModel::FindProfile(absl::string_view name) const {
  const int index = ProfileIndex(name);
  return index < 0 ? nullptr : &profiles[index];
}

int MigModel::ProfileIndex(absl::string_view name) const {
  for (size_t i = 0; i < profiles.size(); ++i) {
    if (internal::SameProfileName(profiles[i].name, name)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

uint32_t MigModel::FullMask() const {
  if (memory_slices <= 0) return 0;
  return memory_slices >= 32 ? ~0u : ((1u << memory_slices) - 1u);
}

MigCatalog::MigCatalog(std::vector<MigModel> models)
    : models_(std::move(models)) {
  model_words_.reserve(models_.size());
  for (const MigModel& model : models_) {
    std::vector<std::vector<std::string>> words;
    for (const std::string& name : model.model_names) {
      words.push_back(internal::ModelWords(name));
    }
    model_words_.push_back(std::move(words));
  }
}

const MigCatalog& MigCatalog::Builtin() {
  static const MigCatalog* const catalog = [] {
    absl::StatusOr<MigCatalog> built = FromModels(internal::BuiltinModels());
    if (!built.ok()) {
      // The tables are compiled in and covered by tests; a failure here is
      // a broken build, not a runtime condition.
      std::cerr << "deviceshare: built-in MIG catalog is invalid: "
                << built.status() << "\n";
      std::abort();
    }
    return new MigCatalog(*std::move(built));
  }();
  return *catalog;
}

absl::StatusOr<MigCatalog> MigCatalog::FromModels(
    std::vector<MigModel> models) {
  for (size_t i = 0; i < models.size(); ++i) {
    DS_RETURN_IF_ERROR(
        internal::NormalizeModel(models[i], internal::IndexPath("models", i)));
  }
  DS_RETURN_IF_ERROR(internal::CheckModelsDistinct(models));
  return MigCatalog(std::move(models));
}

absl::StatusOr<MigCatalog> MigCatalog::FromText(
    absl::string_view yaml_or_json) {
  DS_ASSIGN_OR_RETURN(nlohmann::json root, ParseJsonOrYaml(yaml_or_json));
  DS_ASSIGN_OR_RETURN(std::vector<MigModel> models,
                      internal::ParseCatalogTree(root));
  return FromModels(std::move(models));
}

absl::StatusOr<MigCatalog> MigCatalog::FromFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::NotFoundError(
        absl::StrCat("MIG catalog file ", path, ": cannot be read"));
  }
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<MigCatalog> catalog = FromText(text.str());
  if (!catalog.ok()) {
    return absl::Status(catalog.status().code(),
                        absl::StrCat(path, ": ", catalog.status().message()));
  }
  return catalog;
}

const MigModel* MigCatalog::Match(const Gpu& gpu) const {
  if (gpu.pci_device_id != 0) {
    uint32_t id = gpu.pci_device_id;
    if (id > 0xFFFF && (id & 0xFFFF) == 0x10DE) id >>= 16;
    for (const MigModel& model : models_) {
      for (uint32_t candidate : model.pci_device_ids) {
        if (candidate == id) return &model;
      }
    }
  }
  if (gpu.model.empty()) return nullptr;
  const std::vector<std::string> words = internal::ModelWords(gpu.model);
  const MigModel* best = nullptr;
  size_t best_words = 0;
  size_t best_chars = 0;
  for (size_t m = 0; m < models_.size(); ++m) {
    for (const std::vector<std::string>& pattern : model_words_[m]) {
      if (!internal::ContainsWords(words, pattern)) continue;
      size_t chars = 0;
      for (const std::string& w : pattern) chars += w.size();
      // Strictly greater keeps the earlier model on a tie.
      if (pattern.size() > best_words ||
          (pattern.size() == best_words && chars > best_chars)) {
        best = &models_[m];
        best_words = pattern.size();
        best_chars = chars;
      }
    }
  }
  return best;
}

const MigModel* MigCatalog::FindModel(absl::string_view name) const {
  for (const MigModel& model : models_) {
    if (absl::EqualsIgnoreCase(model.name, name)) return &model;
  }
  return nullptr;
}

std::string MigCatalog::ToYaml() const {
  return internal::CatalogToYaml(models_);
}

}  // namespace deviceshare::mig
