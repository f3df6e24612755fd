#include "model_words.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_split.h"

namespace deviceshare::mig::internal {

std::vector<std::string> ModelWords(absl::string_view model) {
  std::vector<std::string> words =
      absl::StrSplit(absl::AsciiStrToLower(model), absl::ByAnyChar(" \t-_"),
                     absl::SkipEmpty());
  return words;
}

bool ContainsWords(const std::vector<std::string>& words,
                   const std::vector<std::string>& pattern) {
  if (pattern.empty() || pattern.size() > words.size()) return false;
  for (size_t i = 0; i + pattern.size() <= words.size(); ++i) {
    bool all = true;
    for (size_t k = 0; k < pattern.size() && all; ++k) {
      all = words[i + k] == pattern[k];
    }
    if (all) return true;
  }
  return false;
}

}  // namespace deviceshare::mig::internal
