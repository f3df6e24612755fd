// File: simulate/text_table.h
//
// TextTable: rows of cells printed in columns as wide as their widest cell
// (two spaces apart; the last column is not padded). Widths count bytes,
// which is what the ASCII names and numbers simulate prints need.
#ifndef DEVICESHARE_SIMULATE_TEXT_TABLE_H_
#define DEVICESHARE_SIMULATE_TEXT_TABLE_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace deviceshare::simulate {

class TextTable {
 public:
  void AddRow(std::vector<std::string> cells);
  bool empty() const { return rows_.empty(); }
  // Every row, each line starting with `indent`, ending in '\n'.
  std::string Render(absl::string_view indent = "") const;

 private:
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_TEXT_TABLE_H_
