// File: codec/document_visitor.h
//
// YamlDocumentVisitor: what a streamed reading of YAML or JSON documents
// (codec/yaml_stream.h) hands out, document by document and a List's
// items one by one. Its own header so that each reader (the YAML stream,
// the JSON fast path) depends on it and not on the other.
//
// Thread safety: an interface; a visitor is called from the reading
// thread only.
#ifndef DEVICESHARE_CODEC_DOCUMENT_VISITOR_H_
#define DEVICESHARE_CODEC_DOCUMENT_VISITOR_H_

#include <cstddef>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"

namespace deviceshare {

// What a stream hands out, in file order. Documents are numbered from 1,
// empty documents neither counted nor reported. An error a method returns
// stops the reading and is returned as it is.
class YamlDocumentVisitor {
 public:
  virtual ~YamlDocumentVisitor() = default;

  // Document `document` starts at 1-based `line` (its first node).
  virtual absl::Status OnDocumentStart(size_t document, size_t line) {
    (void)document;
    (void)line;
    return absl::OkStatus();
  }
  // With split_items: item `index` (0-based) of the sequence under the key
  // `items` of a document that is a mapping, as soon as it is read. The
  // document's other keys may come before or after its items (kubectl
  // prints `kind` after them), so its kind is known only at OnDocument.
  virtual absl::Status OnItem(size_t document, size_t index,
                              nlohmann::json item) = 0;
  // The whole document; when its items were handed out, it holds
  // "items": [] and `items_split` is true.
  virtual absl::Status OnDocument(size_t document, nlohmann::json value,
                                  bool items_split) = 0;
  // The first parser refused the text part way: reading starts again from
  // the first document with yaml-cpp. Forget all that was handed out.
  virtual void OnRestart() {}
};

}  // namespace deviceshare

#endif  // DEVICESHARE_CODEC_DOCUMENT_VISITOR_H_
