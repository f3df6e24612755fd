#include "deviceshare/simulate/csv_table.h"

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "deviceshare/input/input_file.h"

namespace deviceshare::simulate {

using input::AtLine;
using input::InFile;

namespace {

struct RawRow {
  size_t line = 0;
  std::vector<std::string> fields;
};

bool IsBlank(const RawRow& row) {
  return row.fields.size() == 1 &&
         absl::StripAsciiWhitespace(row.fields[0]).empty();
}

// Splits `text` into records. Newlines inside quotes belong to the field.
absl::StatusOr<std::vector<RawRow>> SplitRecords(absl::string_view text,
                                                 absl::string_view file) {
  std::vector<RawRow> rows;
  RawRow row;
  row.line = 1;
  std::string field;
  size_t line = 1;
  bool quoted = false;
  bool was_quoted = false;
  size_t quote_line = 0;
  auto end_field = [&] {
    row.fields.push_back(std::move(field));
    field.clear();
    was_quoted = false;
  };
  auto end_row = [&] {
    end_field();
    rows.push_back(std::move(row));
    row = RawRow();
    row.line = line;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '"') {
        if (i + 1 < text.size() && text[i + 1] == '"') {
          field.push_back('"');
          ++i;
        } else {
          quoted = false;
        }
      } else {
        if (c == '\n') ++line;
        field.push_back(c);
      }
      continue;
    }
    switch (c) {
      case '"':
        if (!absl::StripAsciiWhitespace(field).empty() || was_quoted) {
          return AtLine(file, line,
                        absl::InvalidArgumentError(
                            "a quote inside an unquoted field (quote the "
                            "whole field and double inner quotes)"));
        }
        field.clear();
        quoted = true;
        was_quoted = true;
        quote_line = line;
        break;
      case ',':
        end_field();
        break;
      case '\r':
        if (i + 1 < text.size() && text[i + 1] == '\n') break;
        ++line;
        end_row();
        break;
      case '\n':
        ++line;
        end_row();
        break;
      default:
        field.push_back(c);
    }
  }
  if (quoted) {
    return AtLine(file, quote_line,
                  absl::InvalidArgumentError("unterminated quoted field"));
  }
  if (!field.empty() || !row.fields.empty()) end_row();
  rows.erase(std::remove_if(rows.begin(), rows.end(), IsBlank), rows.end());
  return rows;
}

}  // namespace

absl::StatusOr<CsvTable> CsvTable::Parse(absl::string_view text,
                                         absl::string_view file) {
  if (absl::StartsWith(text, "\xEF\xBB\xBF")) text.remove_prefix(3);
  auto records = SplitRecords(text, file);
  if (!records.ok()) return records.status();
  if (records->empty()) {
    return InFile(file, absl::InvalidArgumentError(
                            "empty file: want a header row of column names"));
  }
  CsvTable table;
  table.file_ = std::string(file);
  RawRow& header = records->front();
  for (std::string& name : header.fields) {
    std::string trimmed(absl::StripAsciiWhitespace(name));
    if (trimmed.empty()) {
      return AtLine(
          file, header.line,
          absl::InvalidArgumentError(absl::StrFormat(
              "header column %d has no name", table.header_.size() + 1)));
    }
    if (table.Column(trimmed)) {
      return AtLine(file, header.line,
                    absl::InvalidArgumentError(absl::StrFormat(
                        "header names column %s twice", trimmed)));
    }
    table.header_.push_back(std::move(trimmed));
  }
  for (size_t r = 1; r < records->size(); ++r) {
    RawRow& raw = (*records)[r];
    if (raw.fields.size() != table.header_.size()) {
      return AtLine(
          file, raw.line,
          absl::InvalidArgumentError(absl::StrFormat(
              "%d fields, the header has %d (%s)", raw.fields.size(),
              table.header_.size(), absl::StrJoin(table.header_, ","))));
    }
    Row row;
    row.line = raw.line;
    row.fields.reserve(raw.fields.size());
    for (std::string& f : raw.fields) {
      row.fields.emplace_back(absl::StripAsciiWhitespace(f));
    }
    table.rows_.push_back(std::move(row));
  }
  return table;
}

std::optional<size_t> CsvTable::Column(absl::string_view name) const {
  auto it = std::find(header_.begin(), header_.end(), name);
  if (it == header_.end()) return std::nullopt;
  return static_cast<size_t>(it - header_.begin());
}

absl::StatusOr<size_t> CsvTable::RequireColumn(absl::string_view name) const {
  std::optional<size_t> column = Column(name);
  if (column) return *column;
  return InFile(file_, absl::InvalidArgumentError(absl::StrFormat(
                           "header: column %s is missing (columns: %s)", name,
                           absl::StrJoin(header_, ","))));
}

absl::string_view CsvTable::Field(size_t row, size_t column) const {
  return rows_[row].fields[column];
}

absl::StatusOr<int64_t> CsvTable::Int(
    size_t row, size_t column, std::optional<int64_t> empty_value) const {
  absl::string_view text = Field(row, column);
  if (text.empty() && empty_value) return *empty_value;
  int64_t value = 0;
  if (!absl::SimpleAtoi(text, &value)) {
    return AtLine(file_, Line(row),
                  absl::InvalidArgumentError(absl::StrFormat(
                      "column %s: \"%s\" is not an integer", header_[column],
                      absl::CHexEscape(text))));
  }
  return value;
}

}  // namespace deviceshare::simulate
