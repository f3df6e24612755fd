#include "log.h"

#include <unistd.h>

#include <atomic>
#include <cstdarg>
#include <cstdio>

namespace deviceshare::vgpu {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kNotice)};

const char* LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return "ERROR";
    case LogLevel::kWarning:
      return "WARN";
    case LogLevel::kNotice:
      return "MSG";
    case LogLevel::kInfo:
      return "INFO";
    case LogLevel::kDebug:
      return "DEBUG";
  }
  return "?";
}

}  // namespace

void SetLogLevel(int level) { g_level.store(level, std::memory_order_relaxed); }

bool LogEnabled(LogLevel level) {
  return static_cast<int>(level) <= g_level.load(std::memory_order_relaxed);
}

void Log(LogLevel level, const char* format, ...) {
  char line[512];
  int prefix = std::snprintf(line, sizeof(line), "[vgpu %d %s] ",
                             static_cast<int>(getpid()), LevelName(level));
  if (prefix < 0) return;
  va_list args;
  va_start(args, format);
  int body =
      std::vsnprintf(line + prefix, sizeof(line) - prefix - 1, format, args);
  va_end(args);
  if (body < 0) return;
  size_t length = static_cast<size_t>(prefix) + static_cast<size_t>(body);
  if (length > sizeof(line) - 2) length = sizeof(line) - 2;
  line[length++] = '\n';
  ssize_t ignored = write(STDERR_FILENO, line, length);
  (void)ignored;
}

}  // namespace deviceshare::vgpu
