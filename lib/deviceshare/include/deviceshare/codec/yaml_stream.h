// File: codec/yaml_stream.h
//
// Reads a multi-document YAML stream, or one JSON value, a document at a
// time, for inputs too big to hold as one parse tree: a pods file of
// 200,000 documents, or `kubectl get pods -o json`'s one `kind: List`
// object with 200,000 items. Only the document being read is held (not
// yaml-cpp's node tree of the stream, and not a copy of the text), and with
// `split_items` the items of a document's top-level `items` sequence are
// handed out one by one as each is read, so a List holds one item at a
// time.
//
// Documents convert as ParseYamlDocuments converts them (codec/
// yaml_json.h: core-schema scalars, errors with line and column for what
// JSON cannot hold, empty documents skipped). The limits against alias
// bombs and self-referencing aliases (256 levels, 2^20 nodes, 64 MiB of
// text) hold for each document, or for each item handed out on its own
// and for what is left of its document; what aliases expand to over the
// whole stream is bounded at 16 times those.
//
// A text whose first non-blank character is '{' or '[' is first read with
// nlohmann's parser (several times faster than yaml-cpp), in one pass: if
// it is one JSON value, it is one document, on the line it starts, and a
// duplicate key there is an error as in YAML; if it is not, the visitor
// is told to restart and the text is read as YAML. YAML goes through the
// caller's first parser if any (libyaml), else yaml-cpp.
//
// Thread safety: a pure function over its arguments.
#ifndef DEVICESHARE_CODEC_YAML_STREAM_H_
#define DEVICESHARE_CODEC_YAML_STREAM_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "deviceshare/codec/document_visitor.h"

namespace deviceshare {

class YamlJsonBuilder;  // yaml_json_builder.h

// A YAML parser to try before yaml-cpp: it feeds `builder` the events of
// `text` (every document's, ending each with DocumentEnd) and returns the
// builder's first error, or its own refusal of the text.
using YamlEventParser = absl::Status (*)(absl::string_view text,
                                         YamlJsonBuilder& builder);

// Reads `text` through `visitor`. InvalidArgument with the line and column
// for YAML that does not read (with the item for JSON), or the visitor's
// first error.
//
// With `first_parser` (plugins/input's libyaml reader, several times
// faster than yaml-cpp) YAML is read with it; where it refuses the text
// (not UTF-8, or one of yaml-cpp's leniencies), the visitor is told to
// restart and yaml-cpp reads it all again: what yaml-cpp accepts, and the
// errors it gives, stay as they were.
absl::Status StreamYamlDocuments(absl::string_view text,
                                 YamlDocumentVisitor& visitor, bool split_items,
                                 YamlEventParser first_parser = nullptr);

}  // namespace deviceshare

#endif  // DEVICESHARE_CODEC_YAML_STREAM_H_
