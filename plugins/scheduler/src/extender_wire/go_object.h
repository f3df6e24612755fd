// File: extender_wire/go_object.h (internal)
//
// A request body parsed the way Go's encoding/json fills an untagged struct:
// the top-level keys are matched to field names case-insensitively.
#ifndef DEVICESHARE_EXTENDER_WIRE_GO_OBJECT_H_
#define DEVICESHARE_EXTENDER_WIRE_GO_OBJECT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace deviceshare::extender::internal {

// Go's bytes.EqualFold of a key against an ASCII field name: ASCII letters
// fold, and so do U+212A (KELVIN SIGN) with k and U+017F (LONG S) with s.
bool GoFoldEquals(absl::string_view key, absl::string_view field);

// Whether `text` has arrays or objects nested deeper than `max_depth`. Only
// bracket characters outside strings count; the text need not be valid.
bool NestsDeeperThan(absl::string_view text, int max_depth);

// How Go treats a null value for a field: a pointer (or slice) field is set
// to nil, a string field is left as it was.
enum class GoFieldKind { kPointer, kValue };

class GoObject {
 public:
  // Parses `body`, which must be a JSON object no deeper than
  // kMaxJsonDepth. Errors are prefixed with `type_name`.
  static absl::StatusOr<GoObject> Parse(absl::string_view body,
                                        absl::string_view type_name);

  // The value Go would decode into field `name` (ASCII), or nullptr when
  // Go would leave the field empty: no key folds to it, or the winning key
  // holds null. When several distinct keys fold to it the last one in the
  // body wins, as in Go, skipping nulls for kValue. Exact duplicates of one key
  // keep only their last value (nlohmann), so {"PodName":"a","PodName":null}
  // reads as null where Go keeps "a". The pointer stays valid as long as this
  // object.
  nlohmann::json* Field(absl::string_view name, GoFieldKind kind);

 private:
  GoObject(absl::string_view body, nlohmann::json object)
      : body_(body), object_(std::move(object)) {}

  const std::vector<std::string>& KeyOrder();

  absl::string_view body_;
  nlohmann::json object_;
  // The top-level keys in body order, read only when a field is ambiguous.
  std::optional<std::vector<std::string>> key_order_;
};

}  // namespace deviceshare::extender::internal

#endif  // DEVICESHARE_EXTENDER_WIRE_GO_OBJECT_H_
