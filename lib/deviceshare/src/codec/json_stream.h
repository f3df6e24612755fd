// File: codec/json_stream.h (private to the core library)
//
// yaml_stream.h's fast path: a text that is one JSON value, read with
// nlohmann's parser, a List's items handed out one by one (to a
// document_visitor.h visitor).
#ifndef DEVICESHARE_CODEC_JSON_STREAM_H_
#define DEVICESHARE_CODEC_JSON_STREAM_H_

#include <optional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "deviceshare/codec/document_visitor.h"

namespace deviceshare {

// nullopt when `text` is not one JSON object or array (the caller then
// reads it as YAML, which also says where it breaks; where the visitor was
// handed something first, it is told to restart); else what reading it
// through `visitor` gave, as StreamYamlDocuments says.
std::optional<absl::Status> StreamJsonDocument(absl::string_view text,
                                               YamlDocumentVisitor& visitor,
                                               bool split_items);

}  // namespace deviceshare

#endif  // DEVICESHARE_CODEC_JSON_STREAM_H_
