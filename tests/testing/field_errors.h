// File: testing/field_errors.h
//
// Field errors worded the way the Kubernetes API server words them
// (k8s.io/apimachinery/pkg/util/validation/field), and the HTTP 422 Status
// that carries them, so that a client sees from FakeApiServer what it would
// see from a real server:
//
//   ResourceSlice.resource.k8s.io "x" is invalid: spec.devices[3].name:
//   Invalid value: "GPU_0": a lowercase RFC 1123 label must consist of ...
//
// A FieldPath builds the dotted paths ("spec.devices[3].attributes[a/b]").
//
// Thread safety: values; pure functions.
#ifndef DEVICESHARE_TESTS_TESTING_FIELD_ERRORS_H_
#define DEVICESHARE_TESTS_TESTING_FIELD_ERRORS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace deviceshare::testing {

// A path into an object, as field.Path prints it.
class FieldPath {
 public:
  explicit FieldPath(std::string root) : text_(std::move(root)) {}

  FieldPath Child(absl::string_view name) const;  // ".name"
  FieldPath Index(size_t index) const;            // "[3]"
  FieldPath Key(absl::string_view key) const;     // "[key]"
  const std::string& str() const { return text_; }

 private:
  std::string text_;
};

struct FieldError {
  enum class Type {
    kInvalid,       // "Invalid value: <value>: <detail>"
    kRequired,      // "Required value: <detail>"
    kDuplicate,     // "Duplicate value: <value>"
    kTooLong,       // "Too long: may not be more than N bytes"
    kTooMany,       // "Too many: <count>: must have at most N items"
    kForbidden,     // "Forbidden: <detail>"
    kNotSupported,  // "Unsupported value: <value>: supported values: ..."
  };

  Type type = Type::kInvalid;
  std::string field;  // "spec.devices[3].name"
  // The bad value as Go's %q / %v prints it ("\"GPU_0\"", "129", "true");
  // unused for kRequired, kTooLong and kForbidden.
  std::string value;
  std::string detail;

  // "Invalid value: \"GPU_0\": a lowercase RFC 1123 label ..."
  std::string Body() const;
  // "spec.devices[3].name: " + Body()
  std::string ToString() const;
  // The StatusCause type: "FieldValueInvalid", "FieldValueRequired", ...
  const char* CauseType() const;
};

// The constructors of field.Error, with the values printed as Go does.
FieldError InvalidString(const FieldPath& path, absl::string_view value,
                         std::string detail);
FieldError InvalidNumber(const FieldPath& path, int64_t value,
                         std::string detail);
// `value` printed as is (a JSON rendering, "null", "{`a`, `b`}" quoted...).
FieldError InvalidRaw(const FieldPath& path, std::string value,
                      std::string detail);
FieldError Required(const FieldPath& path, std::string detail);
FieldError DuplicateString(const FieldPath& path, absl::string_view value);
// `value` printed as is (the JSON of a whole list item).
FieldError DuplicateRaw(const FieldPath& path, std::string value);
FieldError TooLong(const FieldPath& path, int max_bytes);
FieldError TooMany(const FieldPath& path, int64_t count, int max_items);
FieldError Forbidden(const FieldPath& path, std::string detail);
FieldError NotSupported(const FieldPath& path, absl::string_view value,
                        const std::vector<std::string>& supported);

// Go's %q of a string (the subset of it that matters here: \" \\ and
// control characters escaped).
std::string GoQuote(absl::string_view text);

// `<qualified_kind> "<name>" is invalid: <errors>`, the errors joined as
// an aggregate ("[a, b]" for several; repeated messages once).
std::string InvalidMessage(absl::string_view qualified_kind,
                           absl::string_view name,
                           const std::vector<FieldError>& errors);

// The 422 Status object (reason Invalid, details.causes) for `errors`.
// `group` is "" for the core API; `kind` e.g. "ResourceSlice".
nlohmann::json InvalidStatus(absl::string_view group, absl::string_view kind,
                             absl::string_view name,
                             const std::vector<FieldError>& errors);

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_FIELD_ERRORS_H_
