// File: codec/yaml_json_builder.h
//
// Builds JSON documents from a YAML parser's events, for the streaming
// reader (codec/yaml_stream.h): yaml-cpp's events here, libyaml's in
// plugins/input (input/libyaml_stream.h), so both convert alike. Scalars
// resolve by YAML 1.2's core schema; what JSON cannot hold (a non-scalar
// or null key, a duplicate key, an unknown tag) is an error at its line
// and column; aliases expand within the limits yaml_stream.h states.
//
// Each document, or each item of its top-level `items` with split_items,
// goes to the visitor as soon as it is complete; anchors live within one
// document.
//
// Thread safety: one thread at a time.
#ifndef DEVICESHARE_CODEC_YAML_JSON_BUILDER_H_
#define DEVICESHARE_CODEC_YAML_JSON_BUILDER_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "deviceshare/codec/yaml_stream.h"

namespace deviceshare {

// Where an event starts, 0-based as parsers count; -1 unknown.
struct YamlMark {
  int line = -1;
  int column = -1;
};

// Every method returns the first error, the event's or the visitor's;
// after one the builder must not be fed again.
class YamlJsonBuilder {
 public:
  YamlJsonBuilder(YamlDocumentVisitor& visitor, bool split_items);
  ~YamlJsonBuilder();
  YamlJsonBuilder(const YamlJsonBuilder&) = delete;
  YamlJsonBuilder& operator=(const YamlJsonBuilder&) = delete;

  // `tag` as yaml-cpp reports it: "?" for a plain scalar, "!" for a quoted
  // or block one, else the resolved tag ("tag:yaml.org,2002:int", "!x").
  // `anchor` is empty for none. A plain null ("", "~", "null") is a null.
  absl::Status Scalar(YamlMark mark, const std::string& tag,
                      absl::string_view anchor, const std::string& value);
  absl::Status Null(YamlMark mark, absl::string_view anchor);
  absl::Status Alias(YamlMark mark, absl::string_view anchor);
  absl::Status SequenceStart(YamlMark mark, absl::string_view anchor);
  absl::Status SequenceEnd();
  absl::Status MapStart(YamlMark mark, absl::string_view anchor);
  absl::Status MapEnd();
  // Hands the document to the visitor (an empty one is skipped).
  absl::Status DocumentEnd();

  // Whether an error came from the events or the visitor (not from the
  // parser feeding them).
  bool failed() const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// InvalidArgument "YAML line L, column C: message" (1-based), or
// "YAML: message" where the mark is unknown.
absl::Status YamlErrorAt(YamlMark mark, absl::string_view message);

}  // namespace deviceshare

#endif  // DEVICESHARE_CODEC_YAML_JSON_BUILDER_H_
