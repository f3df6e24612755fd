// File: input/json_object_reader.h
//
// JsonObjectReader: typed, path-aware reads of one JSON object of a
// hand-written input (the short-form cluster, the node agent's inventory
// file), so that every error names the exact field, e.g.
// `nodes[1].gpus[0].split: "ten" is a string, want an integer`, and unknown
// keys are errors, never ignored.
//
// Thread safety: a reader points into the JSON value it was created on,
// which must outlive it and not change; its const methods may run
// concurrently.
#ifndef DEVICESHARE_INPUT_JSON_OBJECT_READER_H_
#define DEVICESHARE_INPUT_JSON_OBJECT_READER_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace deviceshare::input {

class JsonObjectReader {
 public:
  // InvalidArgument naming `path` unless `value` is an object.
  static absl::StatusOr<JsonObjectReader> Create(const nlohmann::json& value,
                                                 std::string path);

  const std::string& path() const { return path_; }
  // "path.key".
  std::string PathOf(absl::string_view key) const;

  // Absent or null keys read as nullopt; a value of the wrong type is an
  // error naming the key's path. Integers must lie in [min, max].
  absl::StatusOr<std::optional<int64_t>> Int(absl::string_view key,
                                             int64_t min = 0,
                                             int64_t max = INT64_MAX) const;
  absl::StatusOr<std::optional<std::string>> String(
      absl::string_view key) const;
  absl::StatusOr<std::optional<bool>> Bool(absl::string_view key) const;
  // The array at `key`, or nullptr when absent.
  absl::StatusOr<const nlohmann::json*> Array(absl::string_view key) const;

  // InvalidArgument naming the first key (in key order) not in `known`.
  absl::Status OnlyKeys(std::initializer_list<absl::string_view> known) const;

 private:
  JsonObjectReader(const nlohmann::json* object, std::string path)
      : object_(object), path_(std::move(path)) {}
  const nlohmann::json* Find(absl::string_view key) const;

  const nlohmann::json* object_;
  std::string path_;
};

}  // namespace deviceshare::input

#endif  // DEVICESHARE_INPUT_JSON_OBJECT_READER_H_
