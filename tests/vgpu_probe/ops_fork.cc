// fork-alloc PATH BYTES: the probe forks; the child, which cannot use its
// parent's CUDA context, initialises the driver afresh, makes one
// allocation, prints its own "alloc" line and exits normally (running the
// library's exit handlers); the parent prints how the child ended. With the
// interposer preloaded this shows that a child charges under its own slot
// and that its exit refunds nothing of its parent's.
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "probe.h"

namespace vgpu_probe {

void RunForkAlloc(Probe& probe, const Args& args) {
  std::fflush(stdout);
  const pid_t pid = fork();
  if (pid == 0) {
    // The parent's allocations and stream are not the child's to free.
    probe.live.clear();
    probe.stream = nullptr;
    probe.stream_created = false;
    probe.pool = nullptr;
    RunInit(probe, {std::to_string(probe.device)});
    RunAlloc(probe, args);
    std::fflush(stdout);
    std::exit(0);
  }
  int status = 0;
  if (pid > 0) waitpid(pid, &status, 0);
  Line("fork-alloc")
      .Int("forked", pid > 0 ? 1 : 0)
      .Int("child_exit",
           pid > 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1)
      .Emit();
}

}  // namespace vgpu_probe
