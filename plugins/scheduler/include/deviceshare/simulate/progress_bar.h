// File: simulate/progress_bar.h
//
// ProgressBar: "[#######.....]  4123/8152 pods  3.2 s" on one line of
// stderr, redrawn at most 10 times a second, shown only when stderr is a
// terminal and only once the run has lasted more than a second; Finish()
// erases it. Not thread-safe.
#ifndef DEVICESHARE_SIMULATE_PROGRESS_BAR_H_
#define DEVICESHARE_SIMULATE_PROGRESS_BAR_H_

#include <chrono>
#include <cstddef>
#include <cstdio>

namespace deviceshare::simulate {

class ProgressBar {
 public:
  // Draws on `out` (a terminal check is made on its descriptor).
  explicit ProgressBar(std::FILE* out = stderr);
  ~ProgressBar() { Finish(); }

  void Update(size_t done, size_t total);
  void Finish();

 private:
  using Clock = std::chrono::steady_clock;

  std::FILE* out_;
  bool enabled_;
  bool drawn_ = false;
  Clock::time_point start_;
  Clock::time_point last_draw_;
};

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_PROGRESS_BAR_H_
