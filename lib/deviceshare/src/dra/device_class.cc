#include "deviceshare/dra/device_class.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "deviceshare/status_macros.h"
#include "dra/json_fields.h"

namespace deviceshare::dra {
namespace {

using json_fields::ArrayField;
using json_fields::Int64;
using json_fields::Invalid;
using json_fields::Join;
using json_fields::Member;
using json_fields::NotA;
using json_fields::ObjectField;
using json_fields::StringField;
using nlohmann::json;

}  // namespace

absl::StatusOr<std::vector<std::string>> DecodeCelSelectors(
    const json& selectors, const std::string& path) {
  std::vector<std::string> out;
  if (selectors.is_null()) return out;
  if (!selectors.is_array()) return NotA(path, selectors, "an array");
  if (selectors.size() > kMaxSelectors) {
    return Invalid(path, absl::StrCat(selectors.size(),
                                      " selectors, more than ", kMaxSelectors));
  }
  for (size_t i = 0; i < selectors.size(); ++i) {
    const json& selector = selectors[i];
    const std::string at = absl::StrCat(path, "[", i, "]");
    if (!selector.is_object()) return NotA(at, selector, "an object");
    const json* cel = Member(selector, "cel");
    if (cel == nullptr) return Invalid(at + ".cel", "missing");
    if (!cel->is_object()) return NotA(at + ".cel", *cel, "an object");
    const json* expression = Member(*cel, "expression");
    const std::string expression_at = at + ".cel.expression";
    if (expression == nullptr) return Invalid(expression_at, "missing");
    if (!expression->is_string()) {
      return NotA(expression_at, *expression, "a string");
    }
    if (expression->get_ref<const std::string&>().empty()) {
      return Invalid(expression_at, "empty");
    }
    out.push_back(expression->get<std::string>());
  }
  return out;
}

absl::StatusOr<DeviceClass> DecodeDeviceClass(const json& device_class) {
  if (!device_class.is_object()) {
    return NotA("deviceClass", device_class, "an object");
  }
  DeviceClass out;
  const json* metadata = Member(device_class, "metadata");
  if (metadata == nullptr) return Invalid("metadata", "missing");
  if (!metadata->is_object()) return NotA("metadata", *metadata, "an object");
  const json* name = Member(*metadata, "name");
  if (name == nullptr) return Invalid("metadata.name", "missing");
  if (!name->is_string()) return NotA("metadata.name", *name, "a string");
  out.name = name->get<std::string>();

  const json* spec = Member(device_class, "spec");
  if (spec == nullptr) return out;
  if (!spec->is_object()) return NotA("spec", *spec, "an object");
  if (const json* selectors = Member(*spec, "selectors");
      selectors != nullptr) {
    DS_ASSIGN_OR_RETURN(out.selectors,
                        DecodeCelSelectors(*selectors, "spec.selectors"));
  }
  if (const json* config = Member(*spec, "config"); config != nullptr) {
    if (!config->is_array()) return NotA("spec.config", *config, "an array");
    for (size_t i = 0; i < config->size(); ++i) {
      const json& entry = (*config)[i];
      const std::string at = absl::StrCat("spec.config[", i, "]");
      if (!entry.is_object()) return NotA(at, entry, "an object");
      out.config.push_back(entry);
    }
  }
  if (const json* extended = Member(*spec, "extendedResourceName");
      extended != nullptr) {
    if (!extended->is_string()) {
      return NotA("spec.extendedResourceName", *extended, "a string");
    }
    out.extended_resource_name = extended->get<std::string>();
  }
  return out;
}

}  // namespace deviceshare::dra
