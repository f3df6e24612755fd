#include "deviceshare/input/yaml_document_lines.h"

#include "absl/strings/str_cat.h"
#include "deviceshare/input/input_file.h"
#include "yaml-cpp/yaml.h"

namespace deviceshare::input {

std::vector<size_t> YamlDocumentLines(absl::string_view text) {
  std::vector<size_t> lines;
  try {
    for (const YAML::Node& document : YAML::LoadAll(std::string(text))) {
      if (document.IsNull() || !document.IsDefined()) continue;
      lines.push_back(static_cast<size_t>(document.Mark().line) + 1);
    }
  } catch (const std::exception&) {
    return {};
  }
  return lines;
}

void YamlDocumentErrors::SetLine(size_t document, size_t line) {
  if (!lines_) lines_.emplace();
  if (lines_->size() < document) lines_->resize(document, 0);
  (*lines_)[document - 1] = line;
}

absl::Status YamlDocumentErrors::At(size_t document,
                                    const absl::Status& status) {
  if (status.ok()) return status;
  if (!lines_) lines_ = YamlDocumentLines(text_);
  if (document == 0 || document > lines_->size() ||
      (*lines_)[document - 1] == 0) {
    return InDocument(file_, document, status);
  }
  return absl::Status(
      status.code(),
      absl::StrCat(file_, ": document ", document, " (line ",
                   (*lines_)[document - 1], "): ", status.message()));
}

}  // namespace deviceshare::input
