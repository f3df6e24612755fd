// File: simulate/input_file.h
//
// Reading simulate's input files, and errors that say where in them a
// problem is. Every error about an input names the file, then the document
// and its first line (YAML, 1-based; see yaml_document_lines.h) or the line
// (CSV, 1-based), then the field, e.g.
//   pods.yaml: document 3 (line 41): pod default/a container main:
//   nvidia.com/gpumem: "-3" is negative
// The status code of the underlying error is kept.
#ifndef DEVICESHARE_SIMULATE_INPUT_FILE_H_
#define DEVICESHARE_SIMULATE_INPUT_FILE_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace deviceshare::simulate {

// The whole file. NotFound naming `flag` and `path` when it cannot be read.
absl::StatusOr<std::string> ReadInputFile(absl::string_view flag,
                                          absl::string_view path);

// "FILE: message".
absl::Status InFile(absl::string_view file, const absl::Status& status);
// "FILE: document N: message".
absl::Status InDocument(absl::string_view file, size_t document,
                        const absl::Status& status);
// "FILE: line N: message".
absl::Status AtLine(absl::string_view file, size_t line,
                    const absl::Status& status);

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_INPUT_FILE_H_
