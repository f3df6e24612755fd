// File: input/input_file.h
//
// Reading an input -- a file named by a flag, or any stream (stdin, a pipe,
// a string) -- whole, and errors that say where in it a problem is. Every
// error about an input names the file, then the document and its first line
// (YAML, 1-based; see yaml_document_lines.h) or the line (CSV, 1-based),
// then the field, e.g.
//   pods.yaml: document 3 (line 41): pod default/a container main:
//   nvidia.com/gpumem: "-3" is negative
// The status code of the underlying error is kept.
//
// Thread safety: free functions without shared state; a stream must not be
// read by two callers at once.
#ifndef DEVICESHARE_INPUT_INPUT_FILE_H_
#define DEVICESHARE_INPUT_INPUT_FILE_H_

#include <cstddef>
#include <istream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace deviceshare::input {

// The most an input file or stream may hold: far above any real cluster,
// pods or trace file, and below what would exhaust a machine (a path such
// as /dev/zero never ends).
inline constexpr size_t kMaxInputBytes = size_t{1} << 30;  // 1 GiB

// The whole file. NotFound naming `flag` and `path` when it cannot be read;
// ResourceExhausted when it holds more than `max_bytes`.
absl::StatusOr<std::string> ReadInputFile(absl::string_view flag,
                                          absl::string_view path,
                                          size_t max_bytes = kMaxInputBytes);

// The rest of `in`. DataLoss "`name`: read error" when reading fails;
// ResourceExhausted when it holds more than `max_bytes`, read no further.
absl::StatusOr<std::string> ReadInputStream(std::istream& in,
                                            absl::string_view name,
                                            size_t max_bytes = kMaxInputBytes);

// "FILE: message".
absl::Status InFile(absl::string_view file, const absl::Status& status);
// "FILE: document N: message".
absl::Status InDocument(absl::string_view file, size_t document,
                        const absl::Status& status);
// "FILE: line N: message".
absl::Status AtLine(absl::string_view file, size_t line,
                    const absl::Status& status);

}  // namespace deviceshare::input

#endif  // DEVICESHARE_INPUT_INPUT_FILE_H_
