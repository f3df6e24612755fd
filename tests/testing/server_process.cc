#include "testing/server_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <regex>

#include "absl/strings/str_cat.h"
#include "testing/wait_for.h"

namespace deviceshare::testing {

ServerProcess::ServerProcess(std::string binary, std::vector<std::string> args,
                             std::string ready_pattern,
                             std::vector<std::string> env)
    : binary_(std::move(binary)),
      args_(std::move(args)),
      ready_pattern_(std::move(ready_pattern)),
      env_(std::move(env)) {}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) Kill(SIGKILL);
  if (reader_.joinable()) reader_.join();
}

absl::Status ServerProcess::Start(absl::Duration timeout) {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return absl::InternalError("pipe failed");
  std::vector<std::string> argv_storage = {binary_};
  argv_storage.insert(argv_storage.end(), args_.begin(), args_.end());
  std::vector<char*> argv;
  for (std::string& arg : argv_storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_ = fork();
  if (pid_ < 0) return absl::InternalError("fork failed");
  if (pid_ == 0) {
    dup2(pipe_fds[1], STDERR_FILENO);
    dup2(pipe_fds[1], STDOUT_FILENO);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    for (const std::string& assignment : env_) {
      putenv(const_cast<char*>(assignment.c_str()));
    }
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(pipe_fds[1]);
  const int read_fd = pipe_fds[0];
  reader_ = std::thread([this, read_fd] { Drain(read_fd); });
  const std::regex serving(ready_pattern_);
  bool exited = false;
  const bool started = WaitFor(
      [&] {
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
          exited = true;
          pid_ = -1;
          return true;
        }
        std::smatch match;
        const std::string log = Log();
        if (std::regex_search(log, match, serving)) {
          if (match.size() > 1 && match[1].matched) {
            port_ = std::stoi(match[1]);
          }
          return true;
        }
        return false;
      },
      timeout);
  if (exited) {
    if (reader_.joinable()) reader_.join();
    return absl::FailedPreconditionError(
        absl::StrCat(binary_, " exited at start; log:\n", Log()));
  }
  if (!started) {
    return absl::DeadlineExceededError(
        absl::StrCat(binary_, " did not start; log:\n", Log()));
  }
  return absl::OkStatus();
}

void ServerProcess::Drain(int fd) {
  char buffer[4096];
  while (true) {
    ssize_t n = read(fd, buffer, sizeof(buffer));
    if (n <= 0) break;
    absl::MutexLock lock(&mu_);
    log_.append(buffer, static_cast<size_t>(n));
  }
  close(fd);
}

int ServerProcess::Kill(int signal) {
  if (pid_ <= 0) return -1;
  kill(pid_, signal);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  if (reader_.joinable()) reader_.join();
  return status;
}

std::string ServerProcess::Log() const {
  absl::MutexLock lock(&mu_);
  return log_;
}

SchedulerProcess::SchedulerProcess(std::string binary,
                                   std::vector<std::string> args)
    : ServerProcess(
          std::move(binary),
          [&] {
            args.insert(args.begin(), "serve");
            return std::move(args);
          }(),
          "serving address=[^ ]*:([0-9]+)") {}

absl::StatusOr<std::unique_ptr<httplib::Client>> ReadyClient(
    const ServerProcess& process) {
  auto client = std::make_unique<httplib::Client>("127.0.0.1", process.port());
  client->set_read_timeout(20, 0);
  const bool ready = WaitFor([&] {
    auto answer = client->Get("/readyz");
    return answer && answer->status == 200;
  });
  if (!ready) {
    return absl::DeadlineExceededError(
        absl::StrCat("/readyz never answered 200; log:\n", process.Log()));
  }
  return client;
}

}  // namespace deviceshare::testing
