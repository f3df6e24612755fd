// File: lib/hamicore/vgpu/src/log.h
//
// libvgpu.so's log: one line per message on stderr, prefixed with the
// process id, at most LIBCUDA_LOG_LEVEL (HAMi-core's scale: 0 errors only,
// 1 warnings, 2 notices (default), 3 info, 4 debug). The level is read once
// at load; logging formats into a stack buffer and writes it with one
// write(2), so it allocates nothing and is safe in any hook.
#ifndef DEVICESHARE_VGPU_LOG_H_
#define DEVICESHARE_VGPU_LOG_H_

namespace deviceshare::vgpu {

enum class LogLevel : int {
  kError = 0,
  kWarning = 1,
  kNotice = 2,
  kInfo = 3,
  kDebug = 4
};

void SetLogLevel(int level);
bool LogEnabled(LogLevel level);
void Log(LogLevel level, const char* format, ...)
    __attribute__((format(printf, 2, 3)));

}  // namespace deviceshare::vgpu

#define VGPU_LOG(level, ...)                                                   \
  do {                                                                         \
    if (::deviceshare::vgpu::LogEnabled(::deviceshare::vgpu::LogLevel::level)) \
      ::deviceshare::vgpu::Log(::deviceshare::vgpu::LogLevel::level,           \
                               __VA_ARGS__);                                   \
  } while (0)

#endif  // DEVICESHARE_VGPU_LOG_H_
