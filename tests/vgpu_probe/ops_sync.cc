// Ops that coordinate a probe with a test: hold (keep allocations alive a
// while), signal-ready (create a file the test waits for), wait-file (a
// start line several probes cross together).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <thread>

#include "probe.h"

namespace vgpu_probe {

// hold MS
void RunHold(Probe&, const Args& args) {
  long long ms = 0;
  ParseInt(args[0], ms);
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
  Line("hold").Int("ms", ms).Emit();
}

// signal-ready PATH: creates PATH (atomically, through a rename, so that a
// test that sees the file never sees it half made).
void RunSignalReady(Probe&, const Args& args) {
  const std::string temp = args[0] + ".tmp" + std::to_string(getpid());
  int code = 0;
  const int fd = open(temp.c_str(), O_CREAT | O_WRONLY | O_TRUNC, 0644);
  if (fd < 0) {
    code = errno;
  } else {
    close(fd);
    if (rename(temp.c_str(), args[0].c_str()) != 0) code = errno;
  }
  Line("signal-ready").Str("path", args[0]).Int("errno", code).Emit();
}

// wait-file PATH [TIMEOUT_MS]: waits until PATH exists (10 s by default).
void RunWaitFile(Probe&, const Args& args) {
  long long timeout_ms = 10000;
  if (args.size() > 1) ParseInt(args[1], timeout_ms);
  const long long start = NowUs();
  bool found = false;
  struct stat info {};
  while (!(found = stat(args[0].c_str(), &info) == 0) &&
         NowUs() - start < timeout_ms * 1000) {
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  Line("wait-file")
      .Str("path", args[0])
      .Int("found", found ? 1 : 0)
      .Us(NowUs() - start)
      .Emit();
}

}  // namespace vgpu_probe
