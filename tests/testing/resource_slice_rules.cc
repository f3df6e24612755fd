#include "testing/resource_slice_rules.h"

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "testing/api_value_formats.h"

namespace deviceshare::testing {
namespace {

using nlohmann::json;
using Errors = std::vector<FieldError>;

// The longest map key a path shows whole: domain "/" identifier.
constexpr size_t kMaxKeyInPath =
    kQualifiedNameMaxDomainLength + 1 + kQualifiedNameMaxIdLength;

void Append(Errors& errors, Errors more) {
  for (FieldError& error : more) errors.push_back(std::move(error));
}

// A member that is present and not null.
const json* Member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

std::string Dump(const json& value) {
  return value.dump(-1, ' ', false, json::error_handler_t::replace);
}

// Wrong JSON types would fail decoding on a real server (HTTP 400); here
// they are field errors, which say more.
FieldError WrongType(const FieldPath& path, const json& value,
                     const char* expected) {
  return InvalidRaw(path, Dump(value), absl::StrCat("must be ", expected));
}

// The string at `key`; nullopt (and an error) when present but no string.
std::optional<std::string> StringMember(const json& object, const char* key,
                                        const FieldPath& path, Errors& errors) {
  const json* value = Member(object, key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_string()) {
    errors.push_back(WrongType(path, *value, "a string"));
    return std::nullopt;
  }
  return value->get<std::string>();
}

std::optional<bool> BoolMember(const json& object, const char* key,
                               const FieldPath& path, Errors& errors) {
  const json* value = Member(object, key);
  if (value == nullptr) return std::nullopt;
  if (!value->is_boolean()) {
    errors.push_back(WrongType(path, *value, "a boolean"));
    return std::nullopt;
  }
  return value->get<bool>();
}

int64_t IntMember(const json& object, const char* key, const FieldPath& path,
                  Errors& errors) {
  const json* value = Member(object, key);
  if (value == nullptr) return 0;
  if (!value->is_number_integer()) {
    errors.push_back(WrongType(path, *value, "an integer"));
    return 0;
  }
  return value->get<int64_t>();
}

// The array at `key` (empty when absent); an error when it is no array.
const json& ArrayMember(const json& object, const char* key,
                        const FieldPath& path, Errors& errors) {
  static const json kEmpty = json::array();
  const json* value = Member(object, key);
  if (value == nullptr) return kEmpty;
  if (!value->is_array()) {
    errors.push_back(WrongType(path, *value, "a list"));
    return kEmpty;
  }
  return *value;
}

const json& ObjectMember(const json& object, const char* key,
                         const FieldPath& path, Errors& errors) {
  static const json kEmpty = json::object();
  const json* value = Member(object, key);
  if (value == nullptr) return kEmpty;
  if (!value->is_object()) {
    errors.push_back(WrongType(path, *value, "an object"));
    return kEmpty;
  }
  return *value;
}

void InvalidEach(Errors& errors, const FieldPath& path,
                 const std::string& value,
                 const std::vector<std::string>& messages) {
  for (const std::string& message : messages) {
    errors.push_back(InvalidString(path, value, message));
  }
}

// A long map key is shortened in the middle in paths, as the server does.
std::string KeyInPath(const std::string& key) {
  if (key.size() <= kMaxKeyInPath) return key;
  const size_t remaining = kMaxKeyInPath - 3;
  return absl::StrCat(key.substr(0, (remaining + 1) / 2), "...",
                      key.substr(key.size() - remaining / 2));
}

std::string QuantityText(__int128 nanos) {
  const bool negative = nanos < 0;
  if (negative) nanos = -nanos;
  std::string digits;
  __int128 units = nanos / 1000000000;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + units % 10));
    units /= 10;
  } while (units > 0);
  std::string out = absl::StrCat(negative ? "-" : "", digits);
  if (int64_t fraction = static_cast<int64_t>(nanos % 1000000000)) {
    std::string frac = absl::StrCat(fraction + 1000000000).substr(1);
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    absl::StrAppend(&out, ".", frac);
  }
  return out;
}

// A quantity at `path`: a string or a JSON number.
std::optional<Quantity> QuantityAt(const json* value, const FieldPath& path,
                                   Errors& errors) {
  if (value == nullptr) return std::nullopt;
  std::string text;
  if (value->is_string()) {
    text = value->get<std::string>();
  } else if (value->is_number()) {
    text = Dump(*value);
  } else {
    errors.push_back(WrongType(path, *value, "a quantity"));
    return std::nullopt;
  }
  std::string error;
  std::optional<Quantity> quantity = ParseQuantity(text, &error);
  if (!quantity.has_value()) errors.push_back(InvalidString(path, text, error));
  return quantity;
}

// corevalidation.ValidateCSIDriverName, which the DRA driver name reuses.
// The subdomain check runs on the lower-cased name, as on the server.
Errors DriverNameErrors(const std::string& name, const FieldPath& path) {
  Errors errors;
  if (name.empty()) errors.push_back(Required(path, ""));
  if (name.size() > static_cast<size_t>(kDriverNameMaxLength)) {
    errors.push_back(TooLong(path, kDriverNameMaxLength));
  }
  InvalidEach(errors, path, name,
              DnsSubdomainErrors(absl::AsciiStrToLower(name)));
  return errors;
}

Errors CIdentifierRule(const std::string& id, const FieldPath& path) {
  Errors errors;
  if (id.size() > static_cast<size_t>(kQualifiedNameMaxIdLength)) {
    errors.push_back(TooLong(path, kQualifiedNameMaxIdLength));
  }
  InvalidEach(errors, path, id, CIdentifierErrors(id));
  return errors;
}

// An attribute or capacity name: [domain "/"] C identifier. More than one
// '/' passes, as on the 1.37 server (a TODO there).
Errors QualifiedNameRule(const std::string& name, const FieldPath& path) {
  std::vector<std::string> parts = absl::StrSplit(name, '/');
  if (parts.size() == 1) return CIdentifierRule(parts[0], path);
  Errors errors;
  if (parts.size() != 2) return errors;
  if (parts[0].empty()) {
    errors.push_back(Required(path, "the domain must not be empty"));
  } else {
    Append(errors, DriverNameErrors(parts[0], path));
  }
  if (parts[1].empty()) {
    errors.push_back(Required(path, "the name must not be empty"));
  } else {
    Append(errors, CIdentifierRule(parts[1], path));
  }
  return errors;
}

Errors PoolRule(const json& pool, const FieldPath& path) {
  Errors errors;
  const FieldPath name_path = path.Child("name");
  const std::string name =
      StringMember(pool, "name", name_path, errors).value_or("");
  if (name.empty()) {
    errors.push_back(Required(name_path, ""));
  } else {
    if (name.size() > static_cast<size_t>(kPoolNameMaxLength)) {
      errors.push_back(TooLong(name_path, kPoolNameMaxLength));
    }
    for (absl::string_view part : absl::StrSplit(name, '/')) {
      InvalidEach(errors, name_path, std::string(part),
                  DnsSubdomainErrors(part));
    }
  }
  const FieldPath count_path = path.Child("resourceSliceCount");
  const int64_t count =
      IntMember(pool, "resourceSliceCount", count_path, errors);
  if (count <= 0) {
    errors.push_back(
        InvalidNumber(count_path, count, "must be greater than zero"));
  }
  const FieldPath generation_path = path.Child("generation");
  const int64_t generation =
      IntMember(pool, "generation", generation_path, errors);
  if (generation < 0) {
    errors.push_back(InvalidNumber(generation_path, generation,
                                   "must be greater than or equal to zero"));
  }
  return errors;
}

Errors NodeNameRule(const std::string& name, const FieldPath& path) {
  Errors errors;
  InvalidEach(errors, path, name, DnsSubdomainErrors(name));
  return errors;
}

Errors NodeSelectorRule(const json& selector, const FieldPath& path) {
  Errors errors;
  const FieldPath terms_path = path.Child("nodeSelectorTerms");
  const json& terms =
      ArrayMember(selector, "nodeSelectorTerms", terms_path, errors);
  if (terms.empty()) {
    errors.push_back(
        Required(terms_path, "must have at least one node selector term"));
  }
  if (terms.size() != 1) {
    // Merging selectors of devices from several slices needs one term.
    errors.push_back(InvalidRaw(terms_path, Dump(terms),
                                "must have exactly one node selector term"));
  }
  return errors;
}

// Where the slice's devices are: exactly one of the four ways.
Errors NodeSelectionRule(const json& spec, const FieldPath& path) {
  Errors errors;
  std::vector<std::string> set;
  const FieldPath node_name_path = path.Child("nodeName");
  if (std::optional<std::string> node_name =
          StringMember(spec, "nodeName", node_name_path, errors)) {
    if (node_name->empty()) {
      errors.push_back(
          InvalidString(node_name_path, "",
                        "must be either unset or set to a non-empty string"));
    } else {
      set.push_back("`nodeName`");
      Append(errors, NodeNameRule(*node_name, node_name_path));
    }
  }
  if (const json* selector = Member(spec, "nodeSelector")) {
    set.push_back("`nodeSelector`");
    Append(errors, NodeSelectorRule(*selector, path.Child("nodeSelector")));
  }
  for (const char* flag : {"allNodes", "perDeviceNodeSelection"}) {
    const FieldPath flag_path = path.Child(flag);
    if (std::optional<bool> value = BoolMember(spec, flag, flag_path, errors)) {
      if (*value) {
        set.push_back(absl::StrCat("`", flag, "`"));
      } else {
        errors.push_back(InvalidRaw(flag_path, "false",
                                    "must be either unset or set to true"));
      }
    }
  }
  constexpr char kChoice[] =
      "exactly one of `nodeName`, `nodeSelector`, `allNodes`, "
      "`perDeviceNodeSelection` is required";
  if (set.empty()) {
    errors.push_back(Required(path, kChoice));
  } else if (set.size() > 1) {
    errors.push_back(
        InvalidString(path, absl::StrCat("{", absl::StrJoin(set, ", "), "}"),
                      absl::StrCat(kChoice, ", but multiple fields are set")));
  }
  return errors;
}

Errors AttributeRule(const json& attribute, const FieldPath& path) {
  Errors errors;
  if (!attribute.is_object()) {
    errors.push_back(WrongType(path, attribute, "an object"));
    return errors;
  }
  int values = 0;
  if (const json* value = Member(attribute, "int")) {
    ++values;
    if (!value->is_number_integer()) {
      errors.push_back(WrongType(path.Child("int"), *value, "an integer"));
    }
  }
  if (const json* value = Member(attribute, "bool")) {
    ++values;
    if (!value->is_boolean()) {
      errors.push_back(WrongType(path.Child("bool"), *value, "a boolean"));
    }
  }
  if (const json* value = Member(attribute, "string")) {
    ++values;
    const FieldPath string_path = path.Child("string");
    if (!value->is_string()) {
      errors.push_back(WrongType(string_path, *value, "a string"));
    } else if (value->get<std::string>().size() >
               static_cast<size_t>(kAttributeMaxValueLength)) {
      errors.push_back(TooLong(string_path, kAttributeMaxValueLength));
    }
  }
  if (const json* value = Member(attribute, "version")) {
    ++values;
    const FieldPath version_path = path.Child("version");
    if (!value->is_string()) {
      errors.push_back(WrongType(version_path, *value, "a string"));
    } else {
      const std::string version = value->get<std::string>();
      if (!IsSemVer(version)) {
        errors.push_back(InvalidString(
            version_path, version,
            "must be a string compatible with semver.org spec 2.0.0"));
      }
      if (version.size() > static_cast<size_t>(kAttributeMaxValueLength)) {
        errors.push_back(TooLong(version_path, kAttributeMaxValueLength));
      }
    }
  }
  constexpr char kOne[] = "exactly one value must be specified";
  if (values == 0) errors.push_back(Required(path, kOne));
  if (values > 1) errors.push_back(InvalidRaw(path, Dump(attribute), kOne));
  return errors;
}

Errors StepRule(const Quantity& value, const Quantity& min,
                const Quantity& step, const FieldPath& path) {
  // As the server: whole units (Value(), rounded up) from min.
  const int64_t step_units = step.Value();
  if (step_units <= 0) return {};  // reported once by the caller
  if ((value.Value() - min.Value()) % step_units == 0) return {};
  return {
      InvalidString(path, value.text,
                    absl::StrCat("value is not a multiple of a given step (",
                                 step.text, ") from (", min.text, ")"))};
}

Errors ValidRangeRule(const Quantity& default_value, const Quantity& capacity,
                      const json& range, const FieldPath& path) {
  Errors errors;
  if (!range.is_object()) {
    errors.push_back(WrongType(path, range, "an object"));
    return errors;
  }
  const FieldPath min_path = path.Child("min");
  const FieldPath max_path = path.Child("max");
  const FieldPath step_path = path.Child("step");
  std::optional<Quantity> min =
      QuantityAt(Member(range, "min"), min_path, errors);
  std::optional<Quantity> max =
      QuantityAt(Member(range, "max"), max_path, errors);
  std::optional<Quantity> step =
      QuantityAt(Member(range, "step"), step_path, errors);
  if (Member(range, "min") == nullptr) {
    errors.push_back(Required(min_path, "required when validRange is defined"));
    return errors;
  }
  if (!min.has_value()) return errors;
  if (min->Compare(capacity) > 0) {
    errors.push_back(InvalidString(
        min_path, min->text,
        absl::StrCat("min is larger than capacity value: ", capacity.text)));
  }
  if (default_value.Compare(*min) < 0) {
    errors.push_back(
        InvalidString(min_path, default_value.text,
                      absl::StrCat("default is less than min: ", min->text)));
  }
  if (max.has_value()) {
    if (min->Compare(*max) > 0) {
      errors.push_back(
          InvalidString(max_path, min->text,
                        absl::StrCat("min is larger than max: ", max->text)));
    }
    if (max->Compare(capacity) > 0) {
      errors.push_back(InvalidString(
          max_path, max->text,
          absl::StrCat("max is larger than capacity value: ", capacity.text)));
    }
    if (default_value.Compare(*max) > 0) {
      errors.push_back(
          InvalidString(max_path, default_value.text,
                        absl::StrCat("default is more than max: ", max->text)));
    }
  }
  if (step.has_value()) {
    if (step->Value() <= 0) {
      // The server divides by it; a fake must not.
      errors.push_back(
          InvalidString(step_path, step->text, "must be greater than zero"));
      return errors;
    }
    Quantity one_step;
    one_step.nanos = min->nanos + step->nanos;
    if (one_step.Compare(capacity) > 0) {
      errors.push_back(InvalidString(
          step_path, step->text,
          absl::StrCat("one step ", QuantityText(one_step.nanos),
                       " is larger than capacity value: ", capacity.text)));
    }
    Append(errors, StepRule(default_value, *min, *step, step_path));
    if (max.has_value()) Append(errors, StepRule(*max, *min, *step, step_path));
  }
  return errors;
}

Errors ValidValuesRule(const Quantity& default_value, const Quantity& capacity,
                       const json& values, const FieldPath& path) {
  Errors errors;
  std::vector<std::optional<Quantity>> options;
  for (size_t i = 0; i < values.size(); ++i) {
    options.push_back(QuantityAt(&values[i], path.Index(i), errors));
  }
  for (size_t i = 0; i + 1 < options.size(); ++i) {
    if (options[i] && options[i + 1] &&
        options[i]->Compare(*options[i + 1]) > 0) {
      errors.push_back(
          InvalidString(path.Index(i + 1), options[i + 1]->text,
                        "values must be sorted in ascending order"));
    }
  }
  bool found_default = false;
  if (options.size() > static_cast<size_t>(kRequestPolicyMaxValidValues)) {
    errors.push_back(TooMany(path, static_cast<int64_t>(options.size()),
                             kRequestPolicyMaxValidValues));
  } else {
    std::set<int64_t> seen;
    for (size_t i = 0; i < options.size(); ++i) {
      if (!options[i]) continue;
      if (options[i]->Compare(capacity) > 0) {
        errors.push_back(
            InvalidString(path.Index(i), options[i]->text,
                          absl::StrCat("option is larger than capacity value: ",
                                       capacity.text)));
      }
      if (options[i]->Compare(default_value) == 0) found_default = true;
      if (!seen.insert(options[i]->Value()).second) {
        errors.push_back(
            DuplicateString(path.Index(i), absl::StrCat(options[i]->Value())));
      }
    }
  }
  if (!found_default) {
    errors.push_back(InvalidString(
        path, default_value.text,
        "default value is not valid according to the requestPolicy"));
  }
  return errors;
}

Errors RequestPolicyRule(const Quantity& capacity, const json& policy,
                         const FieldPath& path) {
  Errors errors;
  if (!policy.is_object()) {
    errors.push_back(WrongType(path, policy, "an object"));
    return errors;
  }
  const FieldPath values_path = path.Child("validValues");
  const json& values = ArrayMember(policy, "validValues", values_path, errors);
  const json* range = Member(policy, "validRange");
  const FieldPath default_path = path.Child("default");
  std::optional<Quantity> default_value =
      QuantityAt(Member(policy, "default"), default_path, errors);
  if (!values.empty() && range != nullptr) {
    errors.push_back(Forbidden(
        path,
        "exactly one policy can be specified, cannot specify \"validValues\" "
        "and \"validRange\" at the same time"));
    return errors;
  }
  if (values.empty() && range == nullptr) return errors;
  const char* kind = values.empty() ? "validRange" : "validValues";
  if (Member(policy, "default") == nullptr) {
    errors.push_back(Required(
        default_path, absl::StrCat("required when ", kind, " is defined")));
    return errors;
  }
  if (!default_value.has_value()) return errors;
  if (!values.empty()) {
    Append(errors,
           ValidValuesRule(*default_value, capacity, values, values_path));
  } else {
    Append(errors, ValidRangeRule(*default_value, capacity, *range,
                                  path.Child("validRange")));
  }
  return errors;
}

Errors CapacityRule(const json& capacity, bool multiple_allocations,
                    const FieldPath& path) {
  Errors errors;
  if (!capacity.is_object()) {
    errors.push_back(WrongType(path, capacity, "an object"));
    return errors;
  }
  const FieldPath value_path = path.Child("value");
  std::optional<Quantity> value =
      QuantityAt(Member(capacity, "value"), value_path, errors);
  const json* policy = Member(capacity, "requestPolicy");
  if (policy == nullptr) return errors;
  const FieldPath policy_path = path.Child("requestPolicy");
  if (!multiple_allocations) {
    errors.push_back(
        Forbidden(policy_path, "allowMultipleAllocations must be true"));
    return errors;
  }
  if (Member(capacity, "value") == nullptr) value = Quantity{0, "0"};
  if (value.has_value())
    Append(errors, RequestPolicyRule(*value, *policy, policy_path));
  return errors;
}

Errors TaintRule(const json& taint, const FieldPath& path) {
  Errors errors;
  if (!taint.is_object()) {
    errors.push_back(WrongType(path, taint, "an object"));
    return errors;
  }
  const FieldPath key_path = path.Child("key");
  const std::string key =
      StringMember(taint, "key", key_path, errors).value_or("");
  InvalidEach(errors, key_path, key, QualifiedNameErrors(key));
  const FieldPath value_path = path.Child("value");
  if (std::optional<std::string> value =
          StringMember(taint, "value", value_path, errors)) {
    InvalidEach(errors, value_path, *value, LabelValueErrors(*value));
  }
  const FieldPath effect_path = path.Child("effect");
  const std::string effect =
      StringMember(taint, "effect", effect_path, errors).value_or("");
  if (effect.empty()) {
    errors.push_back(Required(effect_path, ""));
  } else if (effect != "NoSchedule" && effect != "NoExecute") {
    errors.push_back(
        NotSupported(effect_path, effect, {"NoExecute", "NoSchedule"}));
  }
  return errors;
}

// The hand-written rules of a counter set's or a consumption's counters
// (validateMap): at most `max`, stopping there; each value a quantity.
// Whether there are any and how they are named are declarative rules
// (CounterNamesDeclared).
Errors CounterValuesRule(const json& owner, const FieldPath& path, int max) {
  Errors errors;
  const json& counters = ObjectMember(owner, "counters", path, errors);
  if (counters.size() > static_cast<size_t>(max)) {
    errors.push_back(TooMany(path, static_cast<int64_t>(counters.size()), max));
    return errors;
  }
  for (const auto& [name, counter] : counters.items()) {
    const FieldPath counter_path = path.Key(KeyInPath(name));
    if (!counter.is_object()) {
      errors.push_back(WrongType(counter_path, counter, "an object"));
      continue;
    }
    // A missing value decodes as 0, which is valid.
    QuantityAt(Member(counter, "value"), counter_path.Child("value"), errors);
  }
  return errors;
}

// The declarative rules of the same counters: required, keys DNS labels
// (the key errors name the map, not the key, as on the server).
Errors CounterNamesDeclared(const json& owner, const FieldPath& path) {
  Errors errors;
  const json* counters = Member(owner, "counters");
  if (counters == nullptr || !counters->is_object()) {
    if (counters == nullptr) errors.push_back(Required(path, ""));
    return errors;
  }
  if (counters->empty()) {
    errors.push_back(Required(path, ""));
    return errors;
  }
  for (const auto& [name, counter] : counters->items()) {
    InvalidEach(errors, path, name, DnsLabelErrors(name));
  }
  return errors;
}

// A counter set's or a consumption's name, declaratively: required, then
// a DNS label.
Errors ShortNameDeclared(const json& owner, const char* key,
                         const FieldPath& path) {
  Errors errors;
  const json* name = Member(owner, key);
  if (name == nullptr || !name->is_string() ||
      name->get<std::string>().empty()) {
    if (name == nullptr || name->is_string()) {
      errors.push_back(Required(path, ""));
    }
    return errors;
  }
  InvalidEach(errors, path, name->get<std::string>(),
              DnsLabelErrors(name->get<std::string>()));
  return errors;
}

// An item of sharedCounters or consumesCounters as Go's json.Marshal
// writes the versioned object, which the declarative Duplicate error shows
// whole: `key` first, then the counters (omitted when empty). Quantities
// keep the text they were given.
std::string ItemAsGo(const json& item, const char* key) {
  const json* name = Member(item, key);
  std::string out = absl::StrCat(
      "{\"", key,
      "\":", name != nullptr && name->is_string() ? Dump(*name) : "\"\"");
  const json* counters = Member(item, "counters");
  if (counters != nullptr && counters->is_object() && !counters->empty()) {
    json go = json::object();
    for (const auto& [counter, value] : counters->items()) {
      const json* quantity = Member(value, "value");
      go[counter]["value"] = quantity == nullptr     ? json("0")
                             : quantity->is_string() ? *quantity
                                                     : json(Dump(*quantity));
    }
    absl::StrAppend(&out, ",\"counters\":", Dump(go));
  }
  return out + "}";
}

// The declarative rules of a list of counter sets or consumptions keyed by
// `key`: at most `max` (stopping there), unique by key (each later
// duplicate, shown whole), then each item's name and counter names.
Errors CounterListDeclared(const json& list, const char* key,
                           const FieldPath& path, int max) {
  Errors errors;
  if (list.size() > static_cast<size_t>(max)) {
    errors.push_back(TooMany(path, static_cast<int64_t>(list.size()), max));
    return errors;
  }
  auto key_of = [key](const json& item) {
    const json* name = Member(item, key);
    return name != nullptr && name->is_string() ? name->get<std::string>()
                                                : std::string();
  };
  for (size_t j = 1; j < list.size(); ++j) {
    for (size_t i = 0; i < j; ++i) {
      if (list[i].is_object() && list[j].is_object() &&
          key_of(list[i]) == key_of(list[j])) {
        errors.push_back(DuplicateRaw(path.Index(j), ItemAsGo(list[j], key)));
        break;
      }
    }
  }
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_object()) continue;
    const FieldPath item_path = path.Index(i);
    Append(errors, ShortNameDeclared(list[i], key, item_path.Child(key)));
    Append(errors, CounterNamesDeclared(list[i], item_path.Child("counters")));
  }
  return errors;
}

// sharedCounters, hand-written part: each set an object with at most 32
// counters of quantities. Its size, names and uniqueness are declarative.
Errors SharedCountersRule(const json& spec, const FieldPath& path) {
  Errors errors;
  const json& list = ArrayMember(spec, "sharedCounters", path, errors);
  // The size check is declarative, but it stops the hand-written one too.
  if (list.size() > static_cast<size_t>(kSliceMaxCounterSets)) return errors;
  for (size_t i = 0; i < list.size(); ++i) {
    const FieldPath set_path = path.Index(i);
    const json& set = list[i];
    if (!set.is_object()) {
      errors.push_back(WrongType(set_path, set, "an object"));
      continue;
    }
    StringMember(set, "name", set_path.Child("name"), errors);
    Append(errors, CounterValuesRule(set, set_path.Child("counters"),
                                     kCounterSetMaxCounters));
  }
  return errors;
}

// A device's consumesCounters, hand-written part: each entry an object
// with at most 32 counters of quantities. Which counter sets they name is
// not checked: since 1.35 the sets live in other slices of the pool.
Errors ConsumesCountersRule(const json& device, const FieldPath& device_path) {
  Errors errors;
  const FieldPath path = device_path.Child("consumesCounters");
  const json& list = ArrayMember(device, "consumesCounters", path, errors);
  if (list.size() > static_cast<size_t>(kDeviceMaxCounterConsumptions)) {
    return errors;
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const FieldPath entry_path = path.Index(i);
    const json& entry = list[i];
    if (!entry.is_object()) {
      errors.push_back(WrongType(entry_path, entry, "an object"));
      continue;
    }
    StringMember(entry, "counterSet", entry_path.Child("counterSet"), errors);
    Append(errors, CounterValuesRule(entry, entry_path.Child("counters"),
                                     kConsumptionMaxCounters));
  }
  return errors;
}

// The counter rules 1.37 validates declaratively (beta, on by default):
// the server reports them after every hand-written error, the devices'
// consumesCounters first, then sharedCounters.
Errors DeclaredCounterRules(const json& spec, const FieldPath& spec_path) {
  Errors errors;
  const json* devices = Member(spec, "devices");
  if (devices != nullptr && devices->is_array()) {
    for (size_t i = 0; i < devices->size(); ++i) {
      const json* list = Member((*devices)[i], "consumesCounters");
      if (list == nullptr || !list->is_array()) continue;
      Append(errors,
             CounterListDeclared(
                 *list, "counterSet",
                 spec_path.Child("devices").Index(i).Child("consumesCounters"),
                 kDeviceMaxCounterConsumptions));
    }
  }
  const json* sets = Member(spec, "sharedCounters");
  if (sets != nullptr && sets->is_array()) {
    Append(errors,
           CounterListDeclared(*sets, "name", spec_path.Child("sharedCounters"),
                               kSliceMaxCounterSets));
  }
  return errors;
}

// Per-device node selection, only with perDeviceNodeSelection: true.
Errors DeviceNodeSelectionRule(const json& device, bool per_device,
                               const FieldPath& path) {
  Errors errors;
  const bool has_name = Member(device, "nodeName") != nullptr;
  const bool has_selector = Member(device, "nodeSelector") != nullptr;
  const bool has_all = Member(device, "allNodes") != nullptr;
  if (!per_device) {
    if (has_name || has_selector || has_all) {
      errors.push_back(InvalidRaw(
          path, "null",
          "`nodeName`, `nodeSelector` and `allNodes` can only be set if "
          "`perDeviceNodeSelection` is set to true in the ResourceSlice "
          "spec"));
    }
    return errors;
  }
  std::vector<std::string> set;
  const FieldPath name_path = path.Child("nodeName");
  if (std::optional<std::string> name =
          StringMember(device, "nodeName", name_path, errors)) {
    if (name->empty()) {
      errors.push_back(InvalidString(name_path, "", "must not be empty"));
    } else {
      set.push_back("`nodeName`");
      Append(errors, NodeNameRule(*name, name_path));
    }
  }
  if (has_selector) set.push_back("`nodeSelector`");
  const FieldPath all_path = path.Child("allNodes");
  if (std::optional<bool> all =
          BoolMember(device, "allNodes", all_path, errors)) {
    if (*all) {
      set.push_back("`allNodes`");
    } else {
      errors.push_back(
          InvalidRaw(all_path, "false", "must be either unset or set to true"));
    }
  }
  constexpr char kChoice[] =
      "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required "
      "when `perDeviceNodeSelection` is set to true in the ResourceSlice "
      "spec";
  if (set.empty()) errors.push_back(Required(path, kChoice));
  if (set.size() > 1) {
    errors.push_back(InvalidString(
        path, absl::StrCat("{", absl::StrJoin(set, ", "), "}"), kChoice));
  }
  return errors;
}

Errors DeviceRule(const json& device, const FieldPath& path,
                  bool per_device_nodes) {
  Errors errors;
  if (!device.is_object()) {
    errors.push_back(WrongType(path, device, "an object"));
    return errors;
  }
  const FieldPath name_path = path.Child("name");
  const std::string name =
      StringMember(device, "name", name_path, errors).value_or("");
  InvalidEach(errors, name_path, name, DnsLabelErrors(name));

  const FieldPath attributes_path = path.Child("attributes");
  const FieldPath capacity_path = path.Child("capacity");
  const json& attributes =
      ObjectMember(device, "attributes", attributes_path, errors);
  const json& capacity =
      ObjectMember(device, "capacity", capacity_path, errors);
  const size_t entries = attributes.size() + capacity.size();
  if (entries > static_cast<size_t>(kDeviceMaxAttributesAndCapacities)) {
    errors.push_back(InvalidNumber(
        path, static_cast<int64_t>(entries),
        absl::StrCat("the total number of attributes and capacities must not "
                     "exceed ",
                     kDeviceMaxAttributesAndCapacities)));
  }
  for (const auto& [key, attribute] : attributes.items()) {
    const FieldPath key_path = attributes_path.Key(KeyInPath(key));
    Append(errors, QualifiedNameRule(key, key_path));
    Append(errors, AttributeRule(attribute, key_path));
  }
  const bool multiple_allocations =
      BoolMember(device, "allowMultipleAllocations",
                 path.Child("allowMultipleAllocations"), errors)
          .value_or(false);
  for (const auto& [key, entry] : capacity.items()) {
    const FieldPath key_path = capacity_path.Key(KeyInPath(key));
    Append(errors, QualifiedNameRule(key, key_path));
    Append(errors, CapacityRule(entry, multiple_allocations, key_path));
  }

  const FieldPath taints_path = path.Child("taints");
  const json& taints = ArrayMember(device, "taints", taints_path, errors);
  if (taints.size() > static_cast<size_t>(kDeviceMaxTaints)) {
    errors.push_back(TooMany(taints_path, static_cast<int64_t>(taints.size()),
                             kDeviceMaxTaints));
  } else {
    for (size_t i = 0; i < taints.size(); ++i) {
      Append(errors, TaintRule(taints[i], taints_path.Index(i)));
    }
  }
  Append(errors, ConsumesCountersRule(device, path));
  Append(errors, DeviceNodeSelectionRule(device, per_device_nodes, path));
  return errors;
}

// Whether a device makes its slice hold at most 64 devices: it has taints
// or consumes counters. (List attributes would too; their feature gate is
// off by default, and the server drops them before it validates.)
bool UsesAdvancedFeatures(const json& device) {
  for (const char* key : {"taints", "consumesCounters"}) {
    const json* list = Member(device, key);
    if (list != nullptr && list->is_array() && !list->empty()) return true;
  }
  return false;
}

int MaxDevices(const json& devices) {
  for (const json& device : devices) {
    if (UsesAdvancedFeatures(device)) return kSliceMaxDevicesWithCounters;
  }
  return kSliceMaxDevices;
}

Errors DevicesRule(const json& spec, const FieldPath& path) {
  Errors errors;
  const json& devices = ArrayMember(spec, "devices", path, errors);
  const int max_devices = MaxDevices(devices);
  if (devices.size() > static_cast<size_t>(max_devices)) {
    // The server stops here rather than list errors of thousands.
    errors.push_back(
        TooMany(path, static_cast<int64_t>(devices.size()), max_devices));
    return errors;
  }
  const bool per_device_nodes =
      Member(spec, "perDeviceNodeSelection") != nullptr &&
      spec["perDeviceNodeSelection"].is_boolean() &&
      spec["perDeviceNodeSelection"].get<bool>();
  std::set<std::string> names;
  for (size_t i = 0; i < devices.size(); ++i) {
    Append(errors, DeviceRule(devices[i], path.Index(i), per_device_nodes));
  }
  for (size_t i = 0; i < devices.size(); ++i) {
    const json* name = Member(devices[i], "name");
    if (name == nullptr || !name->is_string()) continue;
    if (!names.insert(name->get<std::string>()).second) {
      errors.push_back(
          DuplicateString(path.Index(i), name->get<std::string>()));
    }
  }
  return errors;
}

// Since 1.35 a slice publishes counter sets or devices, not both; an empty
// list counts as set (JSON's [] decodes to a non-nil slice).
Errors SliceTypeRule(const json& spec, const FieldPath& path) {
  Errors errors;
  if (Member(spec, "sharedCounters") != nullptr &&
      Member(spec, "devices") != nullptr) {
    errors.push_back(InvalidString(
        path, "", "only one of `sharedCounters` or `devices` is allowed"));
  }
  return errors;
}

Errors MetadataNameRule(const json& slice) {
  Errors errors;
  const FieldPath path = FieldPath("metadata").Child("name");
  const json& metadata =
      ObjectMember(slice, "metadata", FieldPath("metadata"), errors);
  const std::string name =
      StringMember(metadata, "name", path, errors).value_or("");
  if (name.empty()) {
    errors.push_back(Required(path, "name or generateName is required"));
  } else {
    InvalidEach(errors, path, name, DnsSubdomainErrors(name));
  }
  return errors;
}

}  // namespace

std::vector<FieldError> ValidateResourceSlice(const json& slice) {
  Errors errors = MetadataNameRule(slice);
  const FieldPath spec_path("spec");
  const json& spec = ObjectMember(slice, "spec", spec_path, errors);
  const FieldPath driver_path = spec_path.Child("driver");
  Append(errors,
         DriverNameErrors(
             StringMember(spec, "driver", driver_path, errors).value_or(""),
             driver_path));
  Append(errors,
         PoolRule(ObjectMember(spec, "pool", spec_path.Child("pool"), errors),
                  spec_path.Child("pool")));
  Append(errors, NodeSelectionRule(spec, spec_path));
  Append(errors, SliceTypeRule(spec, spec_path));
  Append(errors, DevicesRule(spec, spec_path.Child("devices")));
  Append(errors, SharedCountersRule(spec, spec_path.Child("sharedCounters")));
  Append(errors, DeclaredCounterRules(spec, spec_path));
  return errors;
}

std::vector<FieldError> ValidateResourceSliceUpdate(const json& slice,
                                                    const json& old_slice) {
  Errors errors = ValidateResourceSlice(slice);
  auto at = [](const json& object, std::initializer_list<const char*> keys) {
    const json* node = &object;
    for (const char* key : keys) {
      node = Member(*node, key);
      if (node == nullptr) return json();
    }
    return *node;
  };
  const FieldPath spec_path("spec");
  const std::pair<FieldPath, std::initializer_list<const char*>> kImmutable[] =
      {
          {spec_path.Child("driver"), {"spec", "driver"}},
          {spec_path.Child("pool").Child("name"), {"spec", "pool", "name"}},
          {spec_path.Child("nodeName"), {"spec", "nodeName"}},
      };
  for (const auto& [path, keys] : kImmutable) {
    const json now = at(slice, keys);
    if (now == at(old_slice, keys)) continue;
    errors.push_back(
        now.is_string()
            ? InvalidString(path, now.get<std::string>(), "field is immutable")
            : InvalidRaw(path, now.is_null() ? "null" : Dump(now),
                         "field is immutable"));
  }
  return errors;
}

}  // namespace deviceshare::testing
