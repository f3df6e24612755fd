// File: src/model_words.h (internal)
//
// GPU model strings come in many spellings of one name: "NVIDIA A100 80GB
// PCIe" (nvidia-smi), "A100-80GB-PCIe" (HAMi config), "NVIDIA-NVIDIA
// A100-SXM4-80GB" (Volcano/HAMi registration). Comparing them as lower-case
// word sequences, words split at blanks, '-' and '_', makes those spellings
// equal while keeping "H200" apart from "GH200".
#ifndef DEVICESHARE_MIG_SRC_MODEL_WORDS_H_
#define DEVICESHARE_MIG_SRC_MODEL_WORDS_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace deviceshare::mig::internal {

std::vector<std::string> ModelWords(absl::string_view model);

// True when `pattern` occurs as consecutive words of `words`. An empty
// pattern matches nothing.
bool ContainsWords(const std::vector<std::string>& words,
                   const std::vector<std::string>& pattern);

}  // namespace deviceshare::mig::internal

#endif  // DEVICESHARE_MIG_SRC_MODEL_WORDS_H_
