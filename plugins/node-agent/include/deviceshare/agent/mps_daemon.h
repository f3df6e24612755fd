// File: agent/mps_daemon.h
//
// MpsDaemon: runs and supervises the node's one CUDA MPS control daemon
// (`nvidia-cuda-mps-control -f`). The mps backend's containers mount
// <mps_root>/pipe, <mps_root>/log and <mps_root>/shm (EditOptions::mps_root
// in deviceshare/backend/container_edits.h), so a single daemon with the same
// root serves every GPU of the node that is shared through MPS.
//
//   MpsDaemonOptions options;
//   options.gpu_uuids = {"GPU-1a2b...", "GPU-3c4d..."};
//   MpsDaemon daemon(options);
//   absl::Status started = daemon.Start();  // returns once it is ready
//   ...
//   daemon.Stop();                           // `quit`, then signals
//
// Start() creates <mps_root>/{pipe,log,shm} (pipe and shm mode 0777: client
// containers run as any user), runs the control binary in the foreground as
// a child with CUDA_MPS_PIPE_DIRECTORY, CUDA_MPS_LOG_DIRECTORY and
// CUDA_VISIBLE_DEVICES set, its stdout and stderr appended to
// <mps_root>/log/control.stdout, and waits for the control socket
// <mps_root>/pipe/control. A supervisor thread then restarts the daemon
// whenever it exits, after a backoff that doubles from initial_backoff up to
// max_backoff and starts over once a run has lasted max_backoff. The
// default limits are sent again after every start: the control daemon keeps
// no state across restarts.
//
// MPS servers only read the `set_default_*` values when they start, and the
// control daemon starts them on a client's first connection, so sending
// them right after the control daemon is ready covers every client.
//
// The daemon's /dev/shm must be <mps_root>/shm, or clients and server do not
// share memory; the node agent's DaemonSet mounts it there
// (deploy/node-agent-daemonset.yaml). Start() logs a warning when
// it is not.
//
// Process hygiene: the child gets PR_SET_PDEATHSIG SIGTERM (it dies with the
// agent, even on SIGKILL), its own process group (a forced stop reaches the
// MPS servers it spawned), and no descriptor of the agent but 0, 1 and 2.
// Every child is reaped; the daemon only by the supervisor thread, which
// also spawns it, because the parent-death signal follows the thread that
// forked.
//
// Thread safety: every method may be called from any thread. Start() and
// Stop() are serialized against each other (a Stop() during Start() waits
// for Start() to return); Status() and SendCommand() never wait for them.
#ifndef DEVICESHARE_AGENT_MPS_DAEMON_H_
#define DEVICESHARE_AGENT_MPS_DAEMON_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "deviceshare/clock.h"

namespace deviceshare::agent {

struct MpsDaemonOptions {
  // The control binary: a path, or a name looked up in PATH.
  std::string control_binary = "nvidia-cuda-mps-control";
  // Absolute; the same directory as the mps backend's EditOptions::mps_root.
  std::string mps_root = "/run/deviceshare/mps";
  // The GPUs the daemon serves, in the order MPS numbers them (0..); at
  // least one. They become CUDA_VISIBLE_DEVICES.
  std::vector<std::string> gpu_uuids;
  // Sent after every start as `set_default_device_pinned_mem_limit <i>
  // <MiB>M` for each GPU; a backstop for clients that set no
  // CUDA_MPS_PINNED_DEVICE_MEM_LIMIT of their own. Positive.
  std::optional<int64_t> default_pinned_memory_mib;
  // Sent after every start as `set_default_active_thread_percentage <p>`.
  // 1..100.
  std::optional<int32_t> default_active_thread_percentage;
  // Restart backoff, paced by `clock`.
  absl::Duration initial_backoff = absl::Seconds(1);
  absl::Duration max_backoff = absl::Seconds(30);
  // How long a start may take to create the control socket.
  absl::Duration ready_timeout = absl::Seconds(10);
  // Stop(): how long the daemon has after `quit`, and again after SIGTERM,
  // before the next, harder step.
  absl::Duration stop_grace = absl::Seconds(5);
  // How long one SendCommand() client may run.
  absl::Duration command_timeout = absl::Seconds(10);
  // A first start that fails once the binary was found (it cannot be
  // executed, exits, or is not ready in time) is retried like a restart:
  // Start() still returns the error, and the supervisor keeps going until
  // Stop(). For an agent whose MPS pods should get a daemon as soon as the
  // node allows one. Bad options and a missing binary are never retried.
  bool retry_failed_start = false;
  // Paces the restart backoff (tests step it). The waits on another process
  // (ready_timeout, stop_grace, command_timeout) are real time, read through
  // RealClock(). nullptr: RealClock(). Must outlive the MpsDaemon.
  Clock* clock = nullptr;
};

struct MpsDaemonStatus {
  // A daemon process exists (spawned, not yet reaped).
  bool running = false;
  // Its control socket appeared and the defaults were sent (a failure to
  // send them after a restart is logged; the daemon is kept).
  bool ready = false;
  // Its pid, or -1.
  pid_t pid = -1;
  // Starts after the first one (each exit the supervisor recovered from).
  int32_t restarts = 0;
  // While the supervisor waits out a backoff: when it starts the daemon
  // again, on the options' clock.
  std::optional<absl::Time> next_restart;
  // How the last daemon process ended ("exited with code 0", "killed by
  // signal 9 (Killed)"); empty before any has ended.
  std::string last_exit;
};

class MpsDaemon {
 public:
  explicit MpsDaemon(MpsDaemonOptions options);
  ~MpsDaemon();  // Stop()

  MpsDaemon(const MpsDaemon&) = delete;
  MpsDaemon& operator=(const MpsDaemon&) = delete;

  // Starts the daemon and returns once its control socket exists.
  // InvalidArgument: an option is out of range (named with its value).
  // FailedPrecondition: the control binary is missing or not executable
  // (the path is named), or the daemon exited before it was ready (its exit
  // and the tail of its output are named). DeadlineExceeded: no control
  // socket within ready_timeout (the socket's path is named). Internal: a
  // directory could not be made. FailedPrecondition when already started.
  // After an error nothing is left running and Start() may be called again
  // -- unless retry_failed_start, where the supervisor retries until Stop()
  // (and Start() answers FailedPrecondition until then).
  absl::Status Start();

  // Asks the daemon to quit (`quit` to a control client), then SIGTERM and
  // SIGKILL to its process group, each after stop_grace; reaps it and ends
  // the supervision. Idempotent; a stopped daemon may be started again.
  void Stop();

  MpsDaemonStatus Status() const;

  // Runs one control client with the daemon's environment, writes `command`
  // (one line, e.g. "get_server_list") to its stdin and returns what it
  // printed. InvalidArgument for an empty or multi-line command;
  // Unavailable when the client exits non-zero (its output is named);
  // DeadlineExceeded after command_timeout. Needs no running daemon of ours
  // (the client talks to whichever daemon owns the pipe directory).
  absl::StatusOr<std::string> SendCommand(absl::string_view command) const;

  // <mps_root>/pipe, <mps_root>/log, <mps_root>/pipe/control.
  std::string pipe_directory() const;
  std::string log_directory() const;
  std::string control_socket() const;

 private:
  // The status, the stop flag and the supervisor thread; shared with that
  // thread, defined in src/mps/mps_daemon.cc.
  struct Shared;

  const MpsDaemonOptions options_;
  const std::unique_ptr<Shared> shared_;
};

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_MPS_DAEMON_H_
