#include "catalog_validate.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "json_fields.h"
#include "model_words.h"
#include "profile_name.h"

namespace deviceshare::mig::internal {
namespace {

std::string Hex(uint32_t id) { return absl::StrFormat("0x%04X", id); }

absl::Status RangeError(absl::string_view path, int64_t value, int64_t min,
                        int64_t max) {
  return PathError(path, absl::StrCat(value, " is outside ", min, "..", max));
}

absl::Status CheckRange(absl::string_view path, int64_t value, int64_t min,
                        int64_t max) {
  if (value < min || value > max) return RangeError(path, value, min, max);
  return absl::OkStatus();
}

absl::Status NormalizeProfile(const MigModel& model, MigProfile& profile,
                              absl::string_view path) {
  const std::string name_path = KeyPath(path, "name");
  std::optional<ProfileName> parsed = ParseProfileName(profile.name);
  if (!parsed) {
    return PathError(name_path,
                     absl::StrCat("\"", profile.name,
                                  "\" is not a MIG profile name (want "
                                  "<N>g.<M>gb, e.g. 1g.10gb or 1g.10gb+me)"));
  }
  profile.name = CanonicalProfileName(profile.name);
  profile.variant = !parsed->suffix.empty();

  if (profile.id < 0) {
    return PathError(KeyPath(path, "id"),
                     absl::StrCat(profile.id, " is negative"));
  }
  if (auto s = CheckRange(KeyPath(path, "memorySlices"), profile.memory_slices,
                          1, model.memory_slices);
      !s.ok()) {
    return s;
  }
  if (auto s = CheckRange(KeyPath(path, "computeSlices"),
                          profile.compute_slices, 1, model.compute_slices);
      !s.ok()) {
    return s;
  }
  if (profile.compute_slices != parsed->compute_slices) {
    return PathError(
        KeyPath(path, "computeSlices"),
        absl::StrCat(profile.compute_slices, " does not match the name \"",
                     profile.name, "\" (", parsed->compute_slices, "g)"));
  }
  if (profile.memory_mib < 1) {
    return PathError(KeyPath(path, "memoryMiB"),
                     absl::StrCat(profile.memory_mib, " is not positive"));
  }
  if (profile.sm_count < 0) {
    return PathError(KeyPath(path, "smCount"),
                     absl::StrCat(profile.sm_count, " is negative"));
  }
  if (profile.max_instances < 1) {
    return PathError(KeyPath(path, "maxInstances"),
                     absl::StrCat(profile.max_instances, " is not positive"));
  }
  const int32_t last_start = model.memory_slices - profile.memory_slices;
  if (profile.legal_starts == 0) {
    return PathError(KeyPath(path, "starts"), "is empty");
  }
  for (int32_t s = 0; s < kMaxSlices; ++s) {
    if (((profile.legal_starts >> s) & 1u) != 0 && s > last_start) {
      return PathError(KeyPath(path, "starts"),
                       absl::StrCat(s, " is outside 0..", last_start));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status NormalizeModel(MigModel& model, absl::string_view path) {
  if (model.name.empty()) return PathError(KeyPath(path, "name"), "is empty");
  if (auto s = CheckRange(KeyPath(path, "memorySlices"), model.memory_slices, 1,
                          kMaxSlices);
      !s.ok()) {
    return s;
  }
  if (auto s = CheckRange(KeyPath(path, "computeSlices"), model.compute_slices,
                          1, kMaxSlices);
      !s.ok()) {
    return s;
  }
  std::set<uint32_t> ids;
  for (size_t i = 0; i < model.pci_device_ids.size(); ++i) {
    const uint32_t id = model.pci_device_ids[i];
    const std::string id_path = IndexPath(KeyPath(path, "pciDeviceIds"), i);
    if (id == 0 || id > 0xFFFF) {
      return PathError(id_path, absl::StrCat(Hex(id),
                                             " is outside "
                                             "0x0001..0xFFFF"));
    }
    if (!ids.insert(id).second) {
      return PathError(id_path, absl::StrCat(Hex(id), " appears twice"));
    }
  }
  std::set<std::vector<std::string>> patterns;
  for (size_t i = 0; i < model.model_names.size(); ++i) {
    const std::string name_path = IndexPath(KeyPath(path, "modelNames"), i);
    std::vector<std::string> words = ModelWords(model.model_names[i]);
    if (words.empty()) {
      return PathError(name_path, absl::StrCat("\"", model.model_names[i],
                                               "\" has no words"));
    }
    if (!patterns.insert(words).second) {
      return PathError(name_path, absl::StrCat("\"", model.model_names[i],
                                               "\" appears twice"));
    }
  }
  const std::string profiles_path = KeyPath(path, "profiles");
  if (model.profiles.empty()) return PathError(profiles_path, "is empty");
  if (model.profiles.size() > static_cast<size_t>(kMaxProfiles)) {
    return PathError(profiles_path,
                     absl::StrCat(model.profiles.size(), " profiles; at most ",
                                  kMaxProfiles));
  }
  std::map<std::string, size_t> names;
  std::map<int32_t, size_t> profile_ids;
  for (size_t i = 0; i < model.profiles.size(); ++i) {
    MigProfile& profile = model.profiles[i];
    const std::string p = IndexPath(profiles_path, i);
    if (auto s = NormalizeProfile(model, profile, p); !s.ok()) return s;
    if (auto [it, fresh] = names.emplace(profile.name, i); !fresh) {
      return PathError(KeyPath(p, "name"),
                       absl::StrCat("\"", profile.name, "\" repeats ",
                                    IndexPath(profiles_path, it->second)));
    }
    if (auto [it, fresh] = profile_ids.emplace(profile.id, i); !fresh) {
      return PathError(KeyPath(p, "id"),
                       absl::StrCat(profile.id, " repeats the id of ",
                                    IndexPath(profiles_path, it->second)));
    }
  }
  std::stable_sort(model.profiles.begin(), model.profiles.end(),
                   [](const MigProfile& a, const MigProfile& b) {
                     return std::tie(a.memory_slices, a.compute_slices,
                                     a.memory_mib, a.variant, a.name) <
                            std::tie(b.memory_slices, b.compute_slices,
                                     b.memory_mib, b.variant, b.name);
                   });
  return absl::OkStatus();
}

absl::Status CheckModelsDistinct(const std::vector<MigModel>& models) {
  std::map<std::string, size_t> names;
  std::map<uint32_t, size_t> ids;
  std::map<std::vector<std::string>, size_t> patterns;
  for (size_t m = 0; m < models.size(); ++m) {
    const MigModel& model = models[m];
    const std::string path = IndexPath("models", m);
    if (auto [it, fresh] = names.emplace(absl::AsciiStrToLower(model.name), m);
        !fresh) {
      return PathError(KeyPath(path, "name"),
                       absl::StrCat("\"", model.name, "\" repeats ",
                                    IndexPath("models", it->second)));
    }
    for (size_t i = 0; i < model.pci_device_ids.size(); ++i) {
      if (auto [it, fresh] = ids.emplace(model.pci_device_ids[i], m); !fresh) {
        return PathError(
            IndexPath(KeyPath(path, "pciDeviceIds"), i),
            absl::StrCat(Hex(model.pci_device_ids[i]), " is also an id of ",
                         models[it->second].name));
      }
    }
    for (size_t i = 0; i < model.model_names.size(); ++i) {
      if (auto [it, fresh] =
              patterns.emplace(ModelWords(model.model_names[i]), m);
          !fresh) {
        return PathError(
            IndexPath(KeyPath(path, "modelNames"), i),
            absl::StrCat("\"", model.model_names[i], "\" also names ",
                         models[it->second].name));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace deviceshare::mig::internal
