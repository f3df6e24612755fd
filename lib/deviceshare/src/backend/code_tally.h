// File: src/backend/code_tally.h (internal)
//
// CodeTally: the reason code to headline when several GPUs refuse a
// container: the most frequent, the earlier code on ties, so the headline
// does not depend on GPU order. GPUs of another mode are no candidates at
// all, so ModeMismatch heads only when no GPU says anything else.
#ifndef DEVICESHARE_SRC_BACKEND_CODE_TALLY_H_
#define DEVICESHARE_SRC_BACKEND_CODE_TALLY_H_

#include <utility>

#include "absl/container/inlined_vector.h"
#include "deviceshare/model/reason_code.h"

namespace deviceshare::internal {

class CodeTally {
 public:
  void Add(ReasonCode code) {
    const bool other_mode = code == ReasonCode::kModeMismatch;
    ReasonCode& top = other_mode ? mode_top_ : top_;
    bool& empty = other_mode ? mode_empty_ : empty_;
    const int n = ++CountOf(code);
    const int top_count = empty ? 0 : CountOf(top);
    if (empty || n > top_count || (n == top_count && code < top)) top = code;
    empty = false;
  }
  ReasonCode top() const { return empty_ ? mode_top_ : top_; }

 private:
  // A GPU says one of a handful of codes: a short list beats a map.
  int& CountOf(ReasonCode code) {
    for (auto& [known, count] : counts_) {
      if (known == code) return count;
    }
    return counts_.emplace_back(code, 0).second;
  }

  absl::InlinedVector<std::pair<ReasonCode, int>, 8> counts_;
  ReasonCode top_ = ReasonCode::kFits;
  bool empty_ = true;
  ReasonCode mode_top_ = ReasonCode::kFits;
  bool mode_empty_ = true;
};

}  // namespace deviceshare::internal

#endif  // DEVICESHARE_SRC_BACKEND_CODE_TALLY_H_
