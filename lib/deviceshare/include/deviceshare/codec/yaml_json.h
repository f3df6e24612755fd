// File: codec/yaml_json.h
//
// Kubernetes objects arrive as JSON (the API) or YAML (files). deviceshare
// reads both through one JSON tree: YAML is converted with yaml-cpp,
// following YAML 1.2's core schema for plain scalars (ints, floats, bools,
// null) and keeping quoted scalars as strings.
//
// What JSON cannot hold is an error, with its line and column: a mapping
// key that is not a scalar, a duplicate key, a tag other than the standard
// !!str/!!int/!!float/!!bool/!!null. Aliases are expanded, up to 256 levels
// deep and 2^20 nodes per document, so neither a self-referencing alias
// nor an alias bomb can exhaust the stack or memory. Inputs too big to
// hold as one tree (a pods file of 200,000 documents, a List of as many
// items) are read with codec/yaml_stream.h instead.
#ifndef DEVICESHARE_CODEC_YAML_JSON_H_
#define DEVICESHARE_CODEC_YAML_JSON_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace deviceshare {

// Parses one document, JSON or YAML (JSON is YAML). Broken input is an
// InvalidArgument error with the line and column.
absl::StatusOr<nlohmann::json> ParseJsonOrYaml(absl::string_view text);

// Parses every document of a multi-document YAML stream ('---'), skipping
// empty documents.
absl::StatusOr<std::vector<nlohmann::json>> ParseYamlDocuments(
    absl::string_view text);

}  // namespace deviceshare

#endif  // DEVICESHARE_CODEC_YAML_JSON_H_
