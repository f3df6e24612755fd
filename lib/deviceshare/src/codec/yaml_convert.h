// File: codec/yaml_convert.h (private to the core library)
//
// The pieces that turn YAML into JSON, shared by the whole-document
// converter (yaml_json.cc) and the streaming reader (yaml_stream.cc): the
// core-schema resolution of one scalar, the error format, and the limits
// that keep an alias bomb or a self-referencing alias from exhausting the
// stack, memory or time.
#ifndef DEVICESHARE_CODEC_YAML_CONVERT_H_
#define DEVICESHARE_CODEC_YAML_CONVERT_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/codec/yaml_json_builder.h"
#include "nlohmann/json.hpp"
#include "yaml-cpp/mark.h"

namespace deviceshare {

// yaml-cpp resolves `&a [*a]` into a node that contains itself, and aliases
// let a few lines expand into millions of nodes ("billion laughs"). Both
// limits are far above anything a Kubernetes object or config map needs.
// Nodes alone do not bound memory: a few hundred bytes of nested aliases to
// one long string expand into hundreds of MiB, so the text of scalars and
// keys is bounded too (the API server caps an object at 1.5 MiB).
// The streaming reader applies them to each document, or to each item of
// a List it hands out one by one, so a big List of small items reads.
inline constexpr int kMaxDepth = 256;
inline constexpr int64_t kMaxNodes = int64_t{1} << 20;
inline constexpr int64_t kMaxTextBytes = int64_t{64} << 20;
// Per-item limits bound memory, not time: a List of a million `- *bomb`
// items would expand each one within them. What aliases expand to over a
// whole stream is bounded as well, at 16 documents' worth.
inline constexpr int64_t kMaxAliasNodes = 16 * kMaxNodes;
inline constexpr int64_t kMaxAliasTextBytes = 16 * kMaxTextBytes;

// yaml_json_builder.h's YamlErrorAt at a yaml-cpp mark.
absl::Status ErrorAt(const YAML::Mark& mark, absl::string_view message);
YamlMark ToYamlMark(const YAML::Mark& mark);

// "", "~", "null", "Null", "NULL": a plain scalar that is null.
bool IsYamlNull(absl::string_view text);

// A scalar as yaml-cpp reports it (its tag: "?" plain, "!" quoted or block,
// or an explicit !!str/!!int/!!float/!!bool/!!null) as JSON, following YAML
// 1.2's core schema; another tag, or a value its tag does not allow, is an
// error at `mark`.
absl::StatusOr<nlohmann::json> ConvertYamlScalar(const std::string& tag,
                                                 const std::string& text,
                                                 YamlMark mark);

}  // namespace deviceshare

#endif  // DEVICESHARE_CODEC_YAML_CONVERT_H_
