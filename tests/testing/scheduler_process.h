// File: testing/scheduler_process.h
//
// Runs `deviceshare-scheduler serve` as a child process, as a cluster would,
// and learns its port from the "serving address=HOST:PORT" log line. Its
// stderr is drained into memory (so it never blocks on a full pipe) and
// kept for the test's messages.
#ifndef DEVICESHARE_TESTS_TESTING_SCHEDULER_PROCESS_H_
#define DEVICESHARE_TESTS_TESTING_SCHEDULER_PROCESS_H_

#include <sys/types.h>

#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace deviceshare::testing {

class SchedulerProcess {
 public:
  // `binary` is the deviceshare-scheduler executable; `args` follow
  // "serve". Use --address 127.0.0.1:0.
  SchedulerProcess(std::string binary, std::vector<std::string> args);
  ~SchedulerProcess();  // Kill(SIGKILL) if still running

  // Starts it and waits for the serving line.
  absl::Status Start(absl::Duration timeout = absl::Seconds(20));
  int port() const { return port_; }
  // Sends `signal` and waits for the exit; returns the exit status as
  // waitpid reports it.
  int Kill(int signal);
  std::string Log() const;

 private:
  void Drain(int fd);

  const std::string binary_;
  const std::vector<std::string> args_;
  pid_t pid_ = -1;
  int port_ = -1;
  std::thread reader_;
  mutable absl::Mutex mu_;
  std::string log_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_SCHEDULER_PROCESS_H_
