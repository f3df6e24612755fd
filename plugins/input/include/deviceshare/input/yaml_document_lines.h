// File: input/yaml_document_lines.h
//
// Where each document of a multi-document YAML file starts, so that errors
// about a document can name its line as well as its number. Documents are
// numbered as k8s/yaml_json.h's ParseYamlDocuments returns them: empty
// documents are skipped and not counted.
//
// Thread safety: YamlDocumentLines is a pure function. A YamlDocumentErrors
// caches the lines on first use: one thread at a time.
#ifndef DEVICESHARE_INPUT_YAML_DOCUMENT_LINES_H_
#define DEVICESHARE_INPUT_YAML_DOCUMENT_LINES_H_

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace deviceshare::input {

// 1-based first line of each non-empty document; empty when the text does
// not parse.
std::vector<size_t> YamlDocumentLines(absl::string_view text);

// Turns errors about document N of one file into
// "FILE: document N (line L): message". Unless given with SetLine, the
// text is scanned for lines only when an error is made.
class YamlDocumentErrors {
 public:
  YamlDocumentErrors(absl::string_view file, absl::string_view text)
      : file_(file), text_(text) {}

  // `document` is 1-based.
  absl::Status At(size_t document, const absl::Status& status);

  // A reader that streams the documents says where each starts as it
  // reads it (documents in order, from 1), so that an error never parses
  // the text again: a second parse of a big file would hold its whole
  // tree.
  void SetLine(size_t document, size_t line);

 private:
  std::string file_;
  absl::string_view text_;
  std::optional<std::vector<size_t>> lines_;
};

}  // namespace deviceshare::input

#endif  // DEVICESHARE_INPUT_YAML_DOCUMENT_LINES_H_
