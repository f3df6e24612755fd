#include "line_splitter.h"

#include "absl/strings/ascii.h"

namespace deviceshare::kube::internal {

bool LineSplitter::Feed(
    absl::string_view data,
    const std::function<bool(absl::string_view line)>& on_line) {
  buffer_.append(data.data(), data.size());
  size_t start = 0;
  bool keep_going = true;
  for (size_t newline = buffer_.find('\n', start);
       newline != std::string::npos && keep_going;
       newline = buffer_.find('\n', start)) {
    absl::string_view line = absl::StripAsciiWhitespace(
        absl::string_view(buffer_).substr(start, newline - start));
    start = newline + 1;
    if (!line.empty()) keep_going = on_line(line);
  }
  buffer_.erase(0, start);
  return keep_going;
}

}  // namespace deviceshare::kube::internal
