#include "mps/child_process.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "deviceshare/clock.h"

extern char** environ;

namespace deviceshare::agent::mps {
namespace {

constexpr size_t kMaxInputBytes = 4096;
constexpr size_t kMaxOutputBytes = 64 * 1024;

std::string ErrnoText(int error) {
  const char* text = strerrordesc_np(error);
  return text != nullptr ? text : absl::StrCat("errno ", error);
}

std::vector<char*> CStrings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

// Reports errno on `report_fd` and exits; the parent turns it into a status.
[[noreturn]] void ChildFail(int report_fd) {
  const int error = errno;
  ssize_t ignored = write(report_fd, &error, sizeof(error));
  (void)ignored;
  _exit(127);
}

// Runs in the forked child of a multi-threaded parent: async-signal-safe
// calls only, and everything it reads was prepared before fork.
[[noreturn]] void ExecChild(const char* path, char* const* argv,
                            char* const* envp, const int stdio[3],
                            bool new_process_group, pid_t parent, int report_fd,
                            long max_fd) {
  // The forking thread's mask and the agent's ignored signals (SIGPIPE)
  // would otherwise survive execve.
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  struct sigaction default_action = {};
  default_action.sa_handler = SIG_DFL;
  for (int signal = 1; signal < NSIG; ++signal) {
    if (signal != SIGKILL && signal != SIGSTOP) {
      sigaction(signal, &default_action, nullptr);
    }
  }
  if (new_process_group) setpgid(0, 0);
  // The agent may have died between fork and prctl: then nobody would send
  // the signal, so check by hand.
  if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0) ChildFail(report_fd);
  if (getppid() != parent) _exit(127);

  int null_fd = -1;
  int source[3];
  for (int i = 0; i < 3; ++i) {
    int fd = stdio[i];
    if (fd < 0 && i == 2) fd = stdio[1];
    if (fd < 0) {
      if (null_fd < 0) null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
      if (null_fd < 0) ChildFail(report_fd);
      fd = null_fd;
    }
    // Above 2 first, so that dup2 onto 0..2 cannot clobber a later source.
    source[i] = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (source[i] < 0) ChildFail(report_fd);
  }
  for (int i = 0; i < 3; ++i) {
    if (dup2(source[i], i) < 0) ChildFail(report_fd);  // clears CLOEXEC
  }
  // Descriptors other threads opened without O_CLOEXEC must not reach the
  // daemon. report_fd is close-on-exec already and must stay open until
  // execve.
  if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0) {
    for (long fd = 3; fd < max_fd; ++fd) {
      if (fd != report_fd) close(static_cast<int>(fd));
    }
  }
  execve(path, argv, envp);
  ChildFail(report_fd);
}

}  // namespace

absl::StatusOr<pid_t> SpawnChild(const ChildSpec& spec) {
  std::vector<std::string> argv_storage = spec.argv;
  if (argv_storage.empty()) argv_storage.push_back(spec.path);
  std::vector<std::string> env_storage = spec.env;
  std::vector<char*> argv = CStrings(argv_storage);
  std::vector<char*> envp = CStrings(env_storage);
  const int stdio[3] = {spec.stdin_fd, spec.stdout_fd, spec.stderr_fd};
  const long max_fd = std::max(sysconf(_SC_OPEN_MAX), 1024L);

  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    return absl::InternalError(
        absl::StrCat("pipe2 for spawning ", spec.path, ": ", ErrnoText(errno)));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    close(report[0]);
    close(report[1]);
    return absl::InternalError(
        absl::StrCat("fork for ", spec.path, ": ", ErrnoText(error)));
  }
  if (pid == 0) {
    close(report[0]);
    ExecChild(spec.path.c_str(), argv.data(), envp.data(), stdio,
              spec.new_process_group, parent, report[1], max_fd);
  }
  close(report[1]);
  // EOF: execve succeeded (the close-on-exec pipe closed). An int: it
  // failed with that errno.
  int child_errno = 0;
  ssize_t n;
  do {
    n = read(report[0], &child_errno, sizeof(child_errno));
  } while (n < 0 && errno == EINTR);
  close(report[0]);
  if (n == static_cast<ssize_t>(sizeof(child_errno))) {
    Reap(pid);
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot execute \"", spec.path, "\": ", ErrnoText(child_errno)));
  }
  return pid;
}

std::optional<int> TryReap(pid_t pid) {
  int status = 0;
  pid_t done;
  do {
    done = waitpid(pid, &status, WNOHANG);
  } while (done < 0 && errno == EINTR);
  if (done == 0) return std::nullopt;
  if (done < 0) return 0;  // ECHILD: reaped elsewhere or auto-reaped
  return status;
}

std::optional<int> ReapBefore(pid_t pid, absl::Time deadline) {
  while (true) {
    std::optional<int> status = TryReap(pid);
    if (status.has_value()) return status;
    if (RealClock().Now() >= deadline) return std::nullopt;
    absl::SleepFor(absl::Milliseconds(5));
  }
}

int Reap(pid_t pid) {
  int status = 0;
  pid_t done;
  do {
    done = waitpid(pid, &status, 0);
  } while (done < 0 && errno == EINTR);
  return done < 0 ? 0 : status;
}

std::string DescribeExit(int wait_status) {
  if (WIFEXITED(wait_status)) {
    return absl::StrCat("exited with code ", WEXITSTATUS(wait_status));
  }
  if (WIFSIGNALED(wait_status)) {
    const int signal = WTERMSIG(wait_status);
    const char* name = sigdescr_np(signal);
    return absl::StrCat("killed by signal ", signal, " (",
                        name != nullptr ? name : "unknown", ")");
  }
  return absl::StrCat("ended with wait status ", wait_status);
}

absl::StatusOr<std::string> ResolveExecutable(const std::string& name_or_path) {
  const auto executable = [](const std::string& path) {
    struct stat info;
    return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
           access(path.c_str(), X_OK) == 0;
  };
  if (name_or_path.empty()) {
    return absl::FailedPreconditionError("no executable named (empty path)");
  }
  if (name_or_path.find('/') != std::string::npos) {
    if (executable(name_or_path)) return name_or_path;
    struct stat info;
    if (stat(name_or_path.c_str(), &info) != 0) {
      return absl::FailedPreconditionError(absl::StrCat(
          "\"", name_or_path, "\" does not exist (", ErrnoText(errno), ")"));
    }
    return absl::FailedPreconditionError(
        absl::StrCat("\"", name_or_path, "\" is not an executable file"));
  }
  const char* path_env = getenv("PATH");
  const std::string search =
      path_env != nullptr ? path_env : "/usr/local/bin:/usr/bin:/bin";
  for (absl::string_view dir : absl::StrSplit(search, ':')) {
    if (dir.empty()) continue;
    std::string candidate = absl::StrCat(dir, "/", name_or_path);
    if (executable(candidate)) return candidate;
  }
  return absl::FailedPreconditionError(
      absl::StrCat("\"", name_or_path, "\" is not in PATH (", search, ")"));
}

std::vector<std::string> EnvironmentWith(
    const std::vector<std::string>& overrides) {
  const auto key_of = [](absl::string_view entry) {
    return entry.substr(0, entry.find('='));
  };
  std::vector<std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const absl::string_view key = key_of(*entry);
    const bool replaced =
        std::any_of(overrides.begin(), overrides.end(),
                    [&](const std::string& o) { return key_of(o) == key; });
    if (!replaced) env.emplace_back(*entry);
  }
  env.insert(env.end(), overrides.begin(), overrides.end());
  return env;
}

absl::StatusOr<ClientResult> RunWithInput(ChildSpec spec,
                                          const std::string& input,
                                          absl::Duration timeout) {
  if (input.size() > kMaxInputBytes) {
    return absl::InvalidArgumentError(absl::StrCat(
        "input of ", input.size(), " bytes is over ", kMaxInputBytes));
  }
  // The whole input goes into the pipe before the child exists, so no write
  // can meet a closed reader (no SIGPIPE) or block.
  int in[2];
  if (pipe2(in, O_CLOEXEC) != 0) {
    return absl::InternalError(absl::StrCat("pipe2: ", ErrnoText(errno)));
  }
  size_t written = 0;
  while (written < input.size()) {
    const ssize_t n =
        write(in[1], input.data() + written, input.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = errno;
      close(in[0]);
      close(in[1]);
      return absl::InternalError(
          absl::StrCat("writing a child's stdin: ", ErrnoText(error)));
    }
    written += static_cast<size_t>(n);
  }
  close(in[1]);
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) {
    const int error = errno;
    close(in[0]);
    return absl::InternalError(absl::StrCat("pipe2: ", ErrnoText(error)));
  }
  spec.stdin_fd = in[0];
  spec.stdout_fd = out[1];
  spec.stderr_fd = out[1];
  absl::StatusOr<pid_t> pid = SpawnChild(spec);
  close(in[0]);
  close(out[1]);
  if (!pid.ok()) {
    close(out[0]);
    return pid.status();
  }

  const absl::Time deadline = RealClock().Now() + timeout;
  ClientResult result;
  bool timed_out = false;
  char buffer[4096];
  while (true) {
    const absl::Duration left = deadline - RealClock().Now();
    if (left <= absl::ZeroDuration()) {
      timed_out = true;
      break;
    }
    struct pollfd poll_fd = {out[0], POLLIN, 0};
    const int ready = poll(
        &poll_fd, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) continue;  // the deadline check above ends it
    const ssize_t n = read(out[0], buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EOF: every writer is gone
    if (result.output.size() < kMaxOutputBytes) {
      result.output.append(buffer, static_cast<size_t>(n));
    }
  }
  close(out[0]);
  std::optional<int> status;
  if (!timed_out) status = ReapBefore(*pid, deadline);
  if (!status.has_value()) {
    kill(*pid, SIGKILL);
    Reap(*pid);
    return absl::DeadlineExceededError(absl::StrCat(
        "\"", spec.path, "\" ran past ", absl::FormatDuration(timeout),
        "; output: ", result.output.empty() ? "(none)" : result.output));
  }
  result.wait_status = *status;
  return result;
}

}  // namespace deviceshare::agent::mps
