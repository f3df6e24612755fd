#include "deviceshare/simulate/text_table.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace deviceshare::simulate {

void TextTable::AddRow(std::vector<std::string> cells) {
  rows_.push_back(std::move(cells));
}

std::string TextTable::Render(absl::string_view indent) const {
  std::vector<size_t> widths;
  for (const auto& row : rows_) {
    if (widths.size() < row.size()) widths.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c) {
      widths[c] = std::max(widths[c], row[c].size());
    }
  }
  std::string out;
  for (const auto& row : rows_) {
    std::string line(indent);
    for (size_t c = 0; c < row.size(); ++c) {
      absl::StrAppend(&line, row[c]);
      if (c + 1 < row.size()) {
        line.append(widths[c] - row[c].size() + 2, ' ');
      }
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

}  // namespace deviceshare::simulate
