#include "deviceshare/agent/mps_daemon.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/status_macros.h"
#include "mps/child_process.h"
#include "mps/mps_daemon_options.h"
#include "spdlog/spdlog.h"

namespace deviceshare::agent {
namespace {

using mps::ChildSpec;

// How often the supervisor looks at its child; also the worst-case delay
// between the daemon's exit and the restart's backoff starting.
constexpr absl::Duration kPoll = absl::Milliseconds(10);
constexpr off_t kLogTailBytes = 2048;

std::string ErrnoText(int error) {
  const char* text = strerrordesc_np(error);
  return text != nullptr ? text : absl::StrCat("errno ", error);
}

std::string LogFile(const MpsDaemonOptions& options) {
  return absl::StrCat(options.mps_root, "/log/control.stdout");
}

// mkdir honours the umask, and the directory may exist from an earlier
// run with another mode: set the mode explicitly.
absl::Status MakeDirectory(const std::string& path, mode_t mode) {
  if (mkdir(path.c_str(), mode) != 0 && errno != EEXIST) {
    return absl::InternalError(
        absl::StrCat("cannot create ", path, ": ", ErrnoText(errno)));
  }
  struct stat info;
  if (stat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
    return absl::InternalError(
        absl::StrCat(path, " exists and is not a directory"));
  }
  if ((info.st_mode & 07777) != mode && chmod(path.c_str(), mode) != 0) {
    return absl::InternalError(absl::StrCat("cannot chmod ", path, " to ",
                                            absl::StrFormat("%04o", mode), ": ",
                                            ErrnoText(errno)));
  }
  return absl::OkStatus();
}

absl::Status MakeDirectories(const MpsDaemonOptions& options) {
  std::error_code error;
  std::filesystem::create_directories(options.mps_root, error);
  if (error) {
    return absl::InternalError(absl::StrCat("cannot create ", options.mps_root,
                                            ": ", error.message()));
  }
  // Client containers run as any user: they must create their pipes in
  // pipe/ and their segments in shm/ (the upstream plugin does the same).
  DS_RETURN_IF_ERROR(MakeDirectory(options.mps_root + "/pipe", 0777));
  DS_RETURN_IF_ERROR(MakeDirectory(options.mps_root + "/log", 0755));
  return MakeDirectory(options.mps_root + "/shm", 0777);
}

// What the daemon wrote from `offset` on, at most the last kLogTailBytes.
std::string LogTail(const std::string& path, off_t offset) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  const off_t size = lseek(fd, 0, SEEK_END);
  const off_t from = std::max(offset, size - kLogTailBytes);
  std::string text;
  if (size > from && lseek(fd, from, SEEK_SET) == from) {
    text.resize(static_cast<size_t>(size - from));
    const ssize_t n = read(fd, text.data(), text.size());
    text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  }
  close(fd);
  return text;
}

void WarnIfShmNotShared(const MpsDaemonOptions& options) {
  const std::string shm = options.mps_root + "/shm";
  struct stat ours, mounted;
  if (stat("/dev/shm", &ours) != 0 || stat(shm.c_str(), &mounted) != 0) return;
  if (ours.st_dev == mounted.st_dev && ours.st_ino == mounted.st_ino) return;
  spdlog::warn(
      "MPS: /dev/shm is not {}: MPS servers started from here will not share "
      "memory with client containers (which get {} as /dev/shm); mount it "
      "at /dev/shm in the agent's container",
      shm, shm);
}

absl::StatusOr<std::string> RunControlClient(const MpsDaemonOptions& options,
                                             const std::string& binary,
                                             absl::string_view command,
                                             absl::Duration timeout) {
  if (command.empty() || command.find('\n') != absl::string_view::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "MPS control command \"", command, "\" must be one non-empty line"));
  }
  ChildSpec spec;
  spec.path = binary;
  spec.argv = {binary};
  spec.env = mps::EnvironmentWith(mps::MpsEnvironment(options));
  DS_ASSIGN_OR_RETURN(
      mps::ClientResult result,
      mps::RunWithInput(std::move(spec), absl::StrCat(command, "\n"), timeout));
  if (!WIFEXITED(result.wait_status) || WEXITSTATUS(result.wait_status) != 0) {
    return absl::UnavailableError(absl::StrCat(
        "MPS control command `", command, "` (", binary, ") ",
        mps::DescribeExit(result.wait_status),
        "; output: ", result.output.empty() ? "(none)" : result.output));
  }
  return result.output;
}

}  // namespace

struct MpsDaemon::Shared {
  enum class Outcome { kReady, kExited, kTimedOut, kStopRequested };

  explicit Shared(const MpsDaemonOptions& options)
      : options(options),
        clock(options.clock != nullptr ? *options.clock : RealClock()) {}

  // The supervisor thread's body: spawn, wait ready, watch, restart.
  void Run();
  // Run()'s steps. `first_start` holds until a start has been reported to
  // Start(); the bools they return are false when the supervision ends.
  // One daemon's life: spawns it and supervises it until it ends.
  bool RunDaemon(bool& first_start);
  // Waits for `pid` to be ready, reports the first start, then watches the
  // daemon until it exits.
  bool Supervise(pid_t pid, off_t log_offset, bool& first_start);
  // What a start's wait ended in, as Start() reports it: a ready daemon
  // gets its defaults; one that exited or timed out is described (and
  // reaped).
  absl::Status StartResult(pid_t pid, Outcome outcome, int wait_status,
                           off_t log_offset);

  absl::StatusOr<pid_t> Spawn(off_t& log_offset);
  // Waits for `pid` to exit, for the control socket (when `want_ready`),
  // for Stop(), or for `deadline` (real time), whichever comes first.
  // `wait_status` is set on kExited.
  Outcome Watch(pid_t pid, bool want_ready, std::optional<absl::Time> deadline,
                int& wait_status);
  absl::Status SendDefaults();
  // Stop(): quit, SIGTERM, SIGKILL; reaps.
  void Shutdown(pid_t pid);
  void Kill(pid_t pid);
  // False when Stop() came first.
  bool SleepUnlessStopped(absl::Duration backoff);

  void Report(absl::Status status) ABSL_LOCKS_EXCLUDED(mu);
  void SetStarted(pid_t pid, bool restart) ABSL_LOCKS_EXCLUDED(mu);
  void SetReady() ABSL_LOCKS_EXCLUDED(mu);
  void SetEnded(int wait_status) ABSL_LOCKS_EXCLUDED(mu);
  bool StopRequested() const ABSL_LOCKS_EXCLUDED(mu);

  const MpsDaemonOptions& options;  // the MpsDaemon's, which outlives this
  Clock& clock;

  // Start() and Stop().
  absl::Mutex lifecycle_mu;
  std::thread thread ABSL_GUARDED_BY(lifecycle_mu);
  // Set by Start() before the thread starts; read by the thread only.
  std::string binary;

  mutable absl::Mutex mu;
  MpsDaemonStatus status ABSL_GUARDED_BY(mu);
  bool stop_requested ABSL_GUARDED_BY(mu) = false;
  std::optional<absl::Status> start_result ABSL_GUARDED_BY(mu);
};

void MpsDaemon::Shared::Run() {
  absl::Duration backoff = options.initial_backoff;
  bool first_start = true;
  while (true) {
    const absl::Time run_start = clock.Now();
    if (!RunDaemon(first_start)) return;
    if (StopRequested()) return;
    // A run that lasted a whole max_backoff was healthy: start over.
    if (clock.Now() - run_start >= options.max_backoff) {
      backoff = options.initial_backoff;
    }
    spdlog::info("MPS control daemon: restarting in {}",
                 absl::FormatDuration(backoff));
    if (!SleepUnlessStopped(backoff)) return;
    backoff = std::min(backoff * 2, options.max_backoff);
  }
}

bool MpsDaemon::Shared::RunDaemon(bool& first_start) {
  off_t log_offset = 0;
  absl::StatusOr<pid_t> spawned = Spawn(log_offset);
  if (spawned.ok()) return Supervise(*spawned, log_offset, first_start);
  spdlog::error("MPS control daemon: {}", spawned.status().ToString());
  if (first_start) {
    Report(spawned.status());
    if (!options.retry_failed_start) return false;
    first_start = false;
  }
  return true;
}

bool MpsDaemon::Shared::Supervise(pid_t pid, off_t log_offset,
                                  bool& first_start) {
  SetStarted(pid, /*restart=*/!first_start);
  int wait_status = 0;
  const absl::Time ready_deadline = RealClock().Now() + options.ready_timeout;
  Outcome outcome =
      Watch(pid, /*want_ready=*/true, ready_deadline, wait_status);
  if (outcome == Outcome::kStopRequested) {
    // Stop() waits for Start(), so only a restart gets here; answer
    // Start() anyway rather than leave it waiting.
    if (first_start) Report(absl::CancelledError("stopped while starting"));
    Shutdown(pid);
    return false;
  }
  absl::Status ready = StartResult(pid, outcome, wait_status, log_offset);
  if (first_start) {
    if (!ready.ok() && outcome == Outcome::kReady) {
      Kill(pid);
      outcome = Outcome::kExited;
    }
    Report(ready);
    if (!ready.ok() && !options.retry_failed_start) return false;
    first_start = false;
  } else if (!ready.ok()) {
    // A daemon that runs without its defaults still serves clients
    // that bring their own limits: keep it, and say so.
    spdlog::error("MPS control daemon restart: {}", ready.ToString());
  }
  if (outcome != Outcome::kReady) return true;
  outcome = Watch(pid, /*want_ready=*/false, std::nullopt, wait_status);
  if (outcome == Outcome::kStopRequested) {
    Shutdown(pid);
    return false;
  }
  SetEnded(wait_status);
  spdlog::warn("MPS control daemon (pid {}) {}; output in {}", pid,
               mps::DescribeExit(wait_status), LogFile(options));
  return true;
}

absl::Status MpsDaemon::Shared::StartResult(pid_t pid, Outcome outcome,
                                            int wait_status, off_t log_offset) {
  switch (outcome) {
    case Outcome::kReady: {
      spdlog::info("MPS control daemon ready: pid {}, socket {}", pid,
                   options.mps_root + "/pipe/control");
      absl::Status sent = SendDefaults();
      SetReady();
      return sent;
    }
    case Outcome::kExited: {
      SetEnded(wait_status);
      const std::string tail = LogTail(LogFile(options), log_offset);
      return absl::FailedPreconditionError(absl::StrCat(
          "MPS control daemon ", binary, " -f ", mps::DescribeExit(wait_status),
          " before ", options.mps_root, "/pipe/control appeared; its output (",
          LogFile(options), "): ", tail.empty() ? "(none)" : tail));
    }
    case Outcome::kTimedOut:
      Kill(pid);
      return absl::DeadlineExceededError(absl::StrCat(
          "MPS control daemon ", binary, " -f (pid ", pid, ") did not create ",
          options.mps_root, "/pipe/control within ",
          absl::FormatDuration(options.ready_timeout), "; see ",
          LogFile(options)));
    case Outcome::kStopRequested:
      break;
  }
  // Supervise() shuts a daemon down on a stop without asking for a result.
  return absl::CancelledError("stopped while starting");
}

absl::StatusOr<pid_t> MpsDaemon::Shared::Spawn(off_t& log_offset) {
  const std::string socket = options.mps_root + "/pipe/control";
  // A socket left by a daemon that died (or by an agent killed with it)
  // would read as ready at once.
  if (unlink(socket.c_str()) != 0 && errno != ENOENT) {
    return absl::InternalError(
        absl::StrCat("cannot remove stale ", socket, ": ", ErrnoText(errno)));
  }
  const std::string log_file = LogFile(options);
  const int log_fd =
      open(log_file.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return absl::InternalError(
        absl::StrCat("cannot open ", log_file, ": ", ErrnoText(errno)));
  }
  log_offset = lseek(log_fd, 0, SEEK_END);
  ChildSpec spec;
  spec.path = binary;
  spec.argv = {binary, "-f"};
  spec.env = mps::EnvironmentWith(mps::MpsEnvironment(options));
  spec.stdout_fd = log_fd;
  spec.stderr_fd = log_fd;
  spec.new_process_group = true;
  absl::StatusOr<pid_t> pid = mps::SpawnChild(spec);
  close(log_fd);
  if (pid.ok()) spdlog::info("MPS control daemon started: pid {}", *pid);
  return pid;
}

MpsDaemon::Shared::Outcome MpsDaemon::Shared::Watch(
    pid_t pid, bool want_ready, std::optional<absl::Time> deadline,
    int& wait_status) {
  const std::string socket = options.mps_root + "/pipe/control";
  while (true) {
    if (std::optional<int> ended = mps::TryReap(pid); ended.has_value()) {
      wait_status = *ended;
      return Outcome::kExited;
    }
    if (want_ready && access(socket.c_str(), F_OK) == 0) return Outcome::kReady;
    if (deadline.has_value() && RealClock().Now() >= *deadline) {
      return Outcome::kTimedOut;
    }
    absl::MutexLock lock(&mu);
    if (stop_requested) return Outcome::kStopRequested;
    mu.AwaitWithTimeout(absl::Condition(&stop_requested), kPoll);
    if (stop_requested) return Outcome::kStopRequested;
  }
}

absl::Status MpsDaemon::Shared::SendDefaults() {
  for (const std::string& command : mps::DefaultCommands(options)) {
    absl::StatusOr<std::string> reply =
        RunControlClient(options, binary, command, options.command_timeout);
    if (!reply.ok()) return reply.status();
    spdlog::info("MPS control: {}", command);
  }
  return absl::OkStatus();
}

void MpsDaemon::Shared::Shutdown(pid_t pid) {
  const absl::Duration grace = options.stop_grace;
  absl::Time deadline = RealClock().Now() + grace;
  // `quit` is how MPS is told to stop: the control daemon shuts its
  // servers down first.
  absl::StatusOr<std::string> quit =
      RunControlClient(options, binary, "quit", grace);
  if (!quit.ok()) {
    spdlog::warn("MPS control daemon (pid {}): quit: {}", pid,
                 quit.status().ToString());
  }
  std::optional<int> ended = mps::ReapBefore(pid, deadline);
  if (!ended.has_value()) {
    spdlog::warn(
        "MPS control daemon (pid {}) still runs {} after quit; "
        "sending SIGTERM",
        pid, absl::FormatDuration(grace));
    if (kill(-pid, SIGTERM) != 0) kill(pid, SIGTERM);
    ended = mps::ReapBefore(pid, RealClock().Now() + grace);
  }
  if (!ended.has_value()) {
    spdlog::warn("MPS control daemon (pid {}) ignored SIGTERM; sending SIGKILL",
                 pid);
    if (kill(-pid, SIGKILL) != 0) kill(pid, SIGKILL);
    ended = mps::Reap(pid);
  }
  SetEnded(*ended);
  spdlog::info("MPS control daemon (pid {}) stopped: {}", pid,
               mps::DescribeExit(*ended));
}

void MpsDaemon::Shared::Kill(pid_t pid) {
  // The group too: what a half-started daemon spawned must not outlive it.
  if (kill(-pid, SIGKILL) != 0) kill(pid, SIGKILL);
  SetEnded(mps::Reap(pid));
}

bool MpsDaemon::Shared::SleepUnlessStopped(absl::Duration backoff) {
  absl::MutexLock lock(&mu);
  const absl::Time until = clock.Now() + backoff;
  status.next_restart = until;
  // Polled, not one long wait: `clock` may be a test's, stepped by hand.
  while (!stop_requested && clock.Now() < until) {
    mu.AwaitWithTimeout(absl::Condition(&stop_requested), kPoll);
  }
  status.next_restart.reset();
  return !stop_requested;
}

void MpsDaemon::Shared::Report(absl::Status result) {
  absl::MutexLock lock(&mu);
  start_result = std::move(result);
}

void MpsDaemon::Shared::SetStarted(pid_t pid, bool restart) {
  absl::MutexLock lock(&mu);
  status.running = true;
  status.ready = false;
  status.pid = pid;
  if (restart) ++status.restarts;
}

void MpsDaemon::Shared::SetReady() {
  absl::MutexLock lock(&mu);
  status.ready = true;
}

void MpsDaemon::Shared::SetEnded(int wait_status) {
  absl::MutexLock lock(&mu);
  status.running = false;
  status.ready = false;
  status.pid = -1;
  status.last_exit = mps::DescribeExit(wait_status);
}

bool MpsDaemon::Shared::StopRequested() const {
  absl::MutexLock lock(&mu);
  return stop_requested;
}

MpsDaemon::MpsDaemon(MpsDaemonOptions options)
    : options_(std::move(options)),
      shared_(std::make_unique<Shared>(options_)) {}

MpsDaemon::~MpsDaemon() { Stop(); }

absl::Status MpsDaemon::Start() {
  absl::MutexLock lifecycle(&shared_->lifecycle_mu);
  if (shared_->thread.joinable()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the MPS control daemon for ", options_.mps_root,
                     " is already started"));
  }
  DS_RETURN_IF_ERROR(mps::ValidateMpsDaemonOptions(options_));
  absl::StatusOr<std::string> binary =
      mps::ResolveExecutable(options_.control_binary);
  if (!binary.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("MPS control binary: ", binary.status().message()));
  }
  DS_RETURN_IF_ERROR(MakeDirectories(options_));
  WarnIfShmNotShared(options_);
  shared_->binary = *std::move(binary);
  {
    absl::MutexLock lock(&shared_->mu);
    shared_->stop_requested = false;
    shared_->start_result.reset();
    const std::string last_exit = shared_->status.last_exit;
    shared_->status = MpsDaemonStatus();
    shared_->status.last_exit = last_exit;
  }
  // The supervisor spawns every daemon, the first one too: the parent-death
  // signal fires when the thread that forked ends, and the caller's thread
  // may end long before the agent does.
  shared_->thread = std::thread([shared = shared_.get()] { shared->Run(); });
  absl::Status result;
  {
    absl::MutexLock lock(&shared_->mu);
    shared_->mu.Await(absl::Condition(
        +[](std::optional<absl::Status>* r) { return r->has_value(); },
        &shared_->start_result));
    result = *shared_->start_result;
  }
  // With retry_failed_start the supervisor goes on after an error, until
  // Stop().
  if (!result.ok() && !options_.retry_failed_start) shared_->thread.join();
  return result;
}

void MpsDaemon::Stop() {
  absl::MutexLock lifecycle(&shared_->lifecycle_mu);
  if (!shared_->thread.joinable()) return;
  {
    absl::MutexLock lock(&shared_->mu);
    shared_->stop_requested = true;
  }
  shared_->thread.join();
}

MpsDaemonStatus MpsDaemon::Status() const {
  absl::MutexLock lock(&shared_->mu);
  return shared_->status;
}

absl::StatusOr<std::string> MpsDaemon::SendCommand(
    absl::string_view command) const {
  DS_RETURN_IF_ERROR(mps::ValidateMpsDaemonOptions(options_));
  absl::StatusOr<std::string> binary =
      mps::ResolveExecutable(options_.control_binary);
  if (!binary.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("MPS control binary: ", binary.status().message()));
  }
  return RunControlClient(options_, *binary, command, options_.command_timeout);
}

std::string MpsDaemon::pipe_directory() const {
  return options_.mps_root + "/pipe";
}

std::string MpsDaemon::log_directory() const {
  return options_.mps_root + "/log";
}

std::string MpsDaemon::control_socket() const {
  return options_.mps_root + "/pipe/control";
}

}  // namespace deviceshare::agent
