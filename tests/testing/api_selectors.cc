#include "testing/api_selectors.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace deviceshare::testing {
namespace {

using nlohmann::json;

// The value at a dotted path as a field selector compares it: strings as
// they are, other scalars as JSON text, absent as "".
std::string FieldValue(const json& object, absl::string_view path) {
  const json* node = &object;
  for (absl::string_view part : absl::StrSplit(path, '.')) {
    if (!node->is_object()) return "";
    auto it = node->find(std::string(part));
    if (it == node->end()) return "";
    node = &*it;
  }
  if (node->is_string()) return node->get<std::string>();
  if (node->is_null()) return "";
  return node->dump();
}

// Splits `term` at its operator (`!=`, `==` or `=`); false when it has none.
bool SplitAtOperator(absl::string_view term, absl::string_view& key,
                     absl::string_view& value, bool& not_equals) {
  not_equals = false;
  size_t op = term.find("!=");
  size_t width = 2;
  if (op != absl::string_view::npos) {
    not_equals = true;
  } else if ((op = term.find("==")) == absl::string_view::npos) {
    op = term.find('=');
    width = 1;
  }
  if (op == absl::string_view::npos) return false;
  key = absl::StripAsciiWhitespace(term.substr(0, op));
  value = absl::StripAsciiWhitespace(term.substr(op + width));
  return true;
}

const json* Labels(const json& object) {
  auto metadata = object.find("metadata");
  if (metadata == object.end() || !metadata->is_object()) return nullptr;
  auto labels = metadata->find("labels");
  if (labels == metadata->end() || !labels->is_object()) return nullptr;
  return &*labels;
}

}  // namespace

absl::StatusOr<ObjectFilter> ObjectFilter::Parse(
    std::string namespace_name, absl::string_view field_selector,
    absl::string_view label_selector) {
  ObjectFilter filter;
  filter.namespace_name_ = std::move(namespace_name);
  for (absl::string_view raw :
       absl::StrSplit(field_selector, ',', absl::SkipWhitespace())) {
    absl::string_view term = absl::StripAsciiWhitespace(raw);
    absl::string_view key, value;
    bool not_equals = false;
    if (!SplitAtOperator(term, key, value, not_equals) || key.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("fieldSelector: \"", term, "\" is not key=value"));
    }
    Term parsed{std::string(key), std::string(value),
                not_equals ? Term::Op::kNotEquals : Term::Op::kEquals};
    filter.fields_.push_back(std::move(parsed));
  }
  for (absl::string_view raw :
       absl::StrSplit(label_selector, ',', absl::SkipWhitespace())) {
    absl::string_view term = absl::StripAsciiWhitespace(raw);
    if (absl::StrContains(term, " in ") || absl::StrContains(term, " notin ") ||
        absl::StrContains(term, '(')) {
      return absl::InvalidArgumentError(absl::StrCat(
          "labelSelector: \"", term, "\": set-based terms are not supported"));
    }
    Term parsed;
    absl::string_view key, value;
    bool not_equals = false;
    if (SplitAtOperator(term, key, value, not_equals)) {
      parsed = {std::string(key), std::string(value),
                not_equals ? Term::Op::kNotEquals : Term::Op::kEquals};
    } else {
      parsed.op = absl::ConsumePrefix(&term, "!") ? Term::Op::kNotExists
                                                  : Term::Op::kExists;
      parsed.key = std::string(absl::StripAsciiWhitespace(term));
    }
    if (parsed.key.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("labelSelector: \"", term, "\" has no key"));
    }
    filter.labels_.push_back(std::move(parsed));
  }
  return filter;
}

bool ObjectFilter::Matches(const json& object) const {
  if (!object.is_object()) return false;
  if (!namespace_name_.empty() &&
      FieldValue(object, "metadata.namespace") != namespace_name_) {
    return false;
  }
  for (const Term& term : fields_) {
    const bool equal = FieldValue(object, term.key) == term.value;
    if (equal != (term.op == Term::Op::kEquals)) return false;
  }
  const json* labels = Labels(object);
  for (const Term& term : labels_) {
    const json* value = nullptr;
    if (labels != nullptr) {
      auto it = labels->find(term.key);
      if (it != labels->end() && it->is_string()) value = &*it;
    }
    switch (term.op) {
      case Term::Op::kExists:
        if (value == nullptr) return false;
        break;
      case Term::Op::kNotExists:
        if (value != nullptr) return false;
        break;
      case Term::Op::kEquals:
        if (value == nullptr || *value != term.value) return false;
        break;
      case Term::Op::kNotEquals:
        if (value != nullptr && *value == term.value) return false;
        break;
    }
  }
  return true;
}

}  // namespace deviceshare::testing
