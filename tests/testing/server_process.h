// File: testing/server_process.h
//
// Runs one of our executables as a child process, as a cluster would, and
// waits for the log line that says it is ready (a regular expression; its
// first group, when it has one, is read as the port). Its output is drained
// into memory (so it never blocks on a full pipe) and kept for the test's
// messages.
//
//   SchedulerProcess(bin, {"--address", "127.0.0.1:0", ...})
//       `deviceshare-scheduler serve`, ready at "serving address=HOST:PORT".
#ifndef DEVICESHARE_TESTS_TESTING_SERVER_PROCESS_H_
#define DEVICESHARE_TESTS_TESTING_SERVER_PROCESS_H_

#include <httplib.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace deviceshare::testing {

class ServerProcess {
 public:
  // `args` follow `binary` (the command first); `env` is added to the
  // test's environment ("NAME=value").
  ServerProcess(std::string binary, std::vector<std::string> args,
                std::string ready_pattern, std::vector<std::string> env = {});
  virtual ~ServerProcess();  // Kill(SIGKILL) if still running

  // Starts it and waits for the ready line.
  absl::Status Start(absl::Duration timeout = absl::Seconds(20));
  int port() const { return port_; }
  // The child's process id once started; -1 before and after it ran.
  pid_t pid() const { return pid_; }
  // Sends `signal` and waits for the exit; returns the exit status as
  // waitpid reports it.
  int Kill(int signal);
  std::string Log() const;

 private:
  void Drain(int fd);

  const std::string binary_;
  const std::vector<std::string> args_;
  const std::string ready_pattern_;
  const std::vector<std::string> env_;
  pid_t pid_ = -1;
  int port_ = -1;
  std::thread reader_;
  mutable absl::Mutex mu_;
  std::string log_ ABSL_GUARDED_BY(mu_);
};

// `deviceshare-scheduler serve`; use --address 127.0.0.1:0.
class SchedulerProcess : public ServerProcess {
 public:
  SchedulerProcess(std::string binary, std::vector<std::string> args);
};

// An HTTP client to a started `process` on 127.0.0.1 (20 s read timeout),
// once its /readyz answers 200 -- for serve, the first list of every
// watched collection is in, so objects put in the API before are known to
// it. DeadlineExceeded, with the process's log, when that takes over 10 s.
absl::StatusOr<std::unique_ptr<httplib::Client>> ReadyClient(
    const ServerProcess& process);

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_SERVER_PROCESS_H_
