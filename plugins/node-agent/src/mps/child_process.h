// File: mps/child_process.h
//
// Running helper processes from a multi-threaded agent without leaking
// descriptors, signal state or zombies: fork + execve where the child does
// only async-signal-safe work, keeps no descriptor but 0, 1 and 2, starts
// with a clean signal mask and default dispositions, and dies with the
// thread that spawned it (PR_SET_PDEATHSIG SIGTERM). Exec failures
// come back to the caller as a status, not as an exit code.
//
// Thread safety: all functions may be called from any thread. A pid is
// reaped only by the caller that spawned it; nothing here waits for "any"
// child.
#ifndef DEVICESHARE_AGENT_MPS_CHILD_PROCESS_H_
#define DEVICESHARE_AGENT_MPS_CHILD_PROCESS_H_

#include <sys/types.h>

#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace deviceshare::agent::mps {

struct ChildSpec {
  // Absolute path of the executable (see ResolveExecutable).
  std::string path;
  // argv, argv[0] included.
  std::vector<std::string> argv;
  // The whole environment, "KEY=VALUE" each.
  std::vector<std::string> env;
  // Descriptors for the child's 0, 1 and 2; -1: /dev/null (stderr: the
  // same as stdout). The caller keeps ownership.
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  // The child leads a process group of its own (pgid == pid), so a signal
  // to -pid reaches what it spawns too.
  bool new_process_group = false;
};

// Spawns `spec`. Internal when fork fails; FailedPrecondition naming the
// path and errno when execve does.
absl::StatusOr<pid_t> SpawnChild(const ChildSpec& spec);

// The wait status of `pid` if it has ended (and is now reaped), else
// nullopt. A pid that is no child of ours (already reaped, or SIGCHLD
// ignored) reads as ended with status 0.
std::optional<int> TryReap(pid_t pid);

// Polls TryReap until `deadline` (real time); nullopt if still running.
std::optional<int> ReapBefore(pid_t pid, absl::Time deadline);

// Blocks until `pid` ends; its wait status.
int Reap(pid_t pid);

// "exited with code 3", "killed by signal 9 (Killed)".
std::string DescribeExit(int wait_status);

// `name_or_path` itself when it holds a '/', else the first executable
// PATH entry of that name. FailedPrecondition naming it (and PATH) when
// there is none, or it is not an executable file.
absl::StatusOr<std::string> ResolveExecutable(const std::string& name_or_path);

// This process's environment with `overrides` ("KEY=VALUE") replacing the
// variables of the same name.
std::vector<std::string> EnvironmentWith(
    const std::vector<std::string>& overrides);

struct ClientResult {
  int wait_status = 0;
  // stdout and stderr, interleaved.
  std::string output;
};

// Spawns `spec` with `input` on its stdin (then EOF) and collects its
// output until it exits. DeadlineExceeded (the child killed and reaped)
// when it runs past `timeout`; InvalidArgument when `input` is over 4 KiB.
// spec's stdio descriptors are ignored.
absl::StatusOr<ClientResult> RunWithInput(ChildSpec spec,
                                          const std::string& input,
                                          absl::Duration timeout);

}  // namespace deviceshare::agent::mps

#endif  // DEVICESHARE_AGENT_MPS_CHILD_PROCESS_H_
