// File: line_splitter.h (internal)
//
// Reassembles a watch stream's newline-separated JSON objects from the
// chunks the network delivers: a chunk may end mid-object or hold several.
#ifndef DEVICESHARE_KUBE_SRC_LINE_SPLITTER_H_
#define DEVICESHARE_KUBE_SRC_LINE_SPLITTER_H_

#include <functional>
#include <string>

#include "absl/strings/string_view.h"

namespace deviceshare::kube::internal {

class LineSplitter {
 public:
  // Appends `data` and calls `on_line` for each line it completes (without
  // the newline; blank lines are skipped) until `on_line` returns false.
  // Returns false when `on_line` did.
  bool Feed(absl::string_view data,
            const std::function<bool(absl::string_view line)>& on_line);

  // Bytes of an unfinished line.
  size_t pending() const { return buffer_.size(); }

 private:
  std::string buffer_;
};

}  // namespace deviceshare::kube::internal

#endif  // DEVICESHARE_KUBE_SRC_LINE_SPLITTER_H_
