// File: simulate/csv_table.h
//
// CsvTable: a comma-separated file with a header row, read the RFC 4180 way:
// quoted fields ("a,b", "say ""hi"""), CRLF or LF line ends, an optional
// UTF-8 byte order mark, blank lines skipped. Columns are looked up by
// header name (trimmed, case-sensitive), never by position, so files that
// carry fewer or reordered columns read the same.
//
// Errors name the file and the line: an unterminated quote, a row whose
// field count differs from the header's, a duplicate or empty header name,
// a file without a header.
#ifndef DEVICESHARE_SIMULATE_CSV_TABLE_H_
#define DEVICESHARE_SIMULATE_CSV_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace deviceshare::simulate {

class CsvTable {
 public:
  // `file` names the source in error messages.
  static absl::StatusOr<CsvTable> Parse(absl::string_view text,
                                        absl::string_view file);

  const std::string& file() const { return file_; }
  const std::vector<std::string>& header() const { return header_; }
  size_t row_count() const { return rows_.size(); }

  // The position of column `name`, if the header has it.
  std::optional<size_t> Column(absl::string_view name) const;
  // Like Column, but InvalidArgument naming the file and the header's
  // columns when it is missing.
  absl::StatusOr<size_t> RequireColumn(absl::string_view name) const;

  // Field `column` of row `row` (0-based, header excluded), trimmed of
  // surrounding spaces.
  absl::string_view Field(size_t row, size_t column) const;
  // Line number in the file (1-based) where row `row` starts.
  size_t Line(size_t row) const { return rows_[row].line; }

  // Field as a decimal integer; InvalidArgument naming the file, line and
  // column otherwise. An empty field is an error unless `empty_value` is
  // given.
  absl::StatusOr<int64_t> Int(size_t row, size_t column,
                              std::optional<int64_t> empty_value = {}) const;

 private:
  struct Row {
    size_t line = 0;
    std::vector<std::string> fields;
  };

  std::string file_;
  std::vector<std::string> header_;
  std::vector<Row> rows_;
};

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_CSV_TABLE_H_
