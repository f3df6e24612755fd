#include "testing/field_errors.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace deviceshare::testing {

using nlohmann::json;

FieldPath FieldPath::Child(absl::string_view name) const {
  return FieldPath(text_.empty() ? std::string(name)
                                 : absl::StrCat(text_, ".", name));
}

FieldPath FieldPath::Index(size_t index) const {
  return FieldPath(absl::StrCat(text_, "[", index, "]"));
}

FieldPath FieldPath::Key(absl::string_view key) const {
  return FieldPath(absl::StrCat(text_, "[", key, "]"));
}

std::string FieldError::Body() const {
  std::string body;
  switch (type) {
    case Type::kInvalid:
      body = absl::StrCat("Invalid value: ", value);
      break;
    case Type::kRequired:
      body = "Required value";
      break;
    case Type::kDuplicate:
      body = absl::StrCat("Duplicate value: ", value);
      break;
    case Type::kTooLong:
      body = "Too long";
      break;
    case Type::kTooMany:
      body = absl::StrCat("Too many: ", value);
      break;
    case Type::kForbidden:
      body = "Forbidden";
      break;
    case Type::kNotSupported:
      body = absl::StrCat("Unsupported value: ", value);
      break;
  }
  if (!detail.empty()) absl::StrAppend(&body, ": ", detail);
  return body;
}

std::string FieldError::ToString() const {
  return absl::StrCat(field, ": ", Body());
}

const char* FieldError::CauseType() const {
  switch (type) {
    case Type::kInvalid:
      return "FieldValueInvalid";
    case Type::kRequired:
      return "FieldValueRequired";
    case Type::kDuplicate:
      return "FieldValueDuplicate";
    case Type::kTooLong:
      return "FieldValueTooLong";
    case Type::kTooMany:
      return "FieldValueTooMany";
    case Type::kForbidden:
      return "FieldValueForbidden";
    case Type::kNotSupported:
      return "FieldValueNotSupported";
  }
  return "FieldValueInvalid";
}

std::string GoQuote(absl::string_view text) {
  std::string out = "\"";
  for (unsigned char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      default:
        if (c < 0x20 || c == 0x7f) {
          absl::StrAppend(&out, absl::StrFormat("\\x%02x", c));
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += '"';
  return out;
}

FieldError InvalidString(const FieldPath& path, absl::string_view value,
                         std::string detail) {
  return {FieldError::Type::kInvalid, path.str(), GoQuote(value),
          std::move(detail)};
}

FieldError InvalidNumber(const FieldPath& path, int64_t value,
                         std::string detail) {
  return {FieldError::Type::kInvalid, path.str(), absl::StrCat(value),
          std::move(detail)};
}

FieldError InvalidRaw(const FieldPath& path, std::string value,
                      std::string detail) {
  return {FieldError::Type::kInvalid, path.str(), std::move(value),
          std::move(detail)};
}

FieldError Required(const FieldPath& path, std::string detail) {
  return {FieldError::Type::kRequired, path.str(), "", std::move(detail)};
}

FieldError DuplicateString(const FieldPath& path, absl::string_view value) {
  return {FieldError::Type::kDuplicate, path.str(), GoQuote(value), ""};
}

FieldError DuplicateRaw(const FieldPath& path, std::string value) {
  return {FieldError::Type::kDuplicate, path.str(), std::move(value), ""};
}

FieldError TooLong(const FieldPath& path, int max_bytes) {
  return {FieldError::Type::kTooLong, path.str(), "",
          absl::StrCat("may not be more than ", max_bytes,
                       max_bytes == 1 ? " byte" : " bytes")};
}

FieldError TooMany(const FieldPath& path, int64_t count, int max_items) {
  return {FieldError::Type::kTooMany, path.str(), absl::StrCat(count),
          absl::StrCat("must have at most ", max_items, " items")};
}

FieldError Forbidden(const FieldPath& path, std::string detail) {
  return {FieldError::Type::kForbidden, path.str(), "", std::move(detail)};
}

FieldError NotSupported(const FieldPath& path, absl::string_view value,
                        const std::vector<std::string>& supported) {
  std::vector<std::string> quoted;
  quoted.reserve(supported.size());
  for (const std::string& s : supported) quoted.push_back(GoQuote(s));
  return {FieldError::Type::kNotSupported, path.str(), GoQuote(value),
          quoted.empty() ? ""
                         : absl::StrCat("supported values: ",
                                        absl::StrJoin(quoted, ", "))};
}

std::string InvalidMessage(absl::string_view qualified_kind,
                           absl::string_view name,
                           const std::vector<FieldError>& errors) {
  std::string head =
      absl::StrCat(qualified_kind, " ", GoQuote(name), " is invalid");
  // errors.NewAggregate drops repeated messages and brackets several.
  std::vector<std::string> messages;
  for (const FieldError& error : errors) {
    std::string message = error.ToString();
    if (std::find(messages.begin(), messages.end(), message) ==
        messages.end()) {
      messages.push_back(std::move(message));
    }
  }
  if (messages.empty()) return head;
  if (messages.size() == 1) return absl::StrCat(head, ": ", messages[0]);
  return absl::StrCat(head, ": [", absl::StrJoin(messages, ", "), "]");
}

json InvalidStatus(absl::string_view group, absl::string_view kind,
                   absl::string_view name,
                   const std::vector<FieldError>& errors) {
  json causes = json::array();
  for (const FieldError& error : errors) {
    causes.push_back({{"reason", error.CauseType()},
                      {"message", error.Body()},
                      {"field", error.field}});
  }
  const std::string qualified_kind =
      group.empty() ? std::string(kind) : absl::StrCat(kind, ".", group);
  return {{"kind", "Status"},
          {"apiVersion", "v1"},
          {"metadata", json::object()},
          {"status", "Failure"},
          {"message", InvalidMessage(qualified_kind, name, errors)},
          {"reason", "Invalid"},
          {"details",
           {{"name", name},
            {"group", group},
            {"kind", kind},
            {"causes", std::move(causes)}}},
          {"code", 422}};
}

}  // namespace deviceshare::testing
