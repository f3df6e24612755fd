#include "deviceshare/simulate/progress_bar.h"

#include <unistd.h>

#include <string>

namespace deviceshare::simulate {
namespace {

constexpr int kWidth = 30;

}  // namespace

ProgressBar::ProgressBar(std::FILE* out)
    : out_(out),
      enabled_(isatty(fileno(out)) != 0),
      start_(Clock::now()),
      last_draw_(start_) {}

void ProgressBar::Update(size_t done, size_t total) {
  if (!enabled_ || total == 0) return;
  const Clock::time_point now = Clock::now();
  if (now - start_ < std::chrono::seconds(1)) return;
  if (drawn_ && now - last_draw_ < std::chrono::milliseconds(100) &&
      done < total) {
    return;
  }
  last_draw_ = now;
  drawn_ = true;
  const int filled = static_cast<int>(kWidth * done / total);
  const double seconds = std::chrono::duration<double>(now - start_).count();
  std::fprintf(out_, "\r[%s%s] %zu/%zu pods  %.1f s",
               std::string(filled, '#').c_str(),
               std::string(kWidth - filled, '.').c_str(), done, total, seconds);
  std::fflush(out_);
}

void ProgressBar::Finish() {
  if (!drawn_) return;
  std::fprintf(out_, "\r\033[K");
  std::fflush(out_);
  drawn_ = false;
}

}  // namespace deviceshare::simulate
