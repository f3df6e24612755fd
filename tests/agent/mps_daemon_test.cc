// agent/mps_daemon.h against a fake nvidia-cuda-mps-control: a shell script
// written to a temp dir that records its arguments, environment, open
// descriptors and the commands it gets to a file, creates the control
// "socket" and waits; invoked without -f (as a control client) it reads
// commands from stdin and, on `quit`, signals the foreground one.
#include "deviceshare/agent/mps_daemon.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/fakes.h"
#include "testing/status_matchers.h"
#include "testing/wait_for.h"
#include "testing/whole_file.h"

namespace deviceshare::agent {
namespace {

using ::deviceshare::testing::ReadWholeFile;

using ::deviceshare::testing::StatusIs;
using ::deviceshare::testing::WaitFor;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

// How the fake's foreground (-f) instance behaves.
enum class FakeMode {
  kServes,       // creates the control file, exits 0 on `quit`
  kNeverReady,   // never creates it
  kExitsAtOnce,  // prints an error and exits 3
  kIgnoresQuit,  // serves, ignores `quit`; exits on SIGTERM
  kStubborn,     // serves, ignores `quit` and SIGTERM
  kFailsOnce,    // the first run exits 3, later ones serve
};

std::string FakeScript(const std::string& record, FakeMode mode) {
  std::string daemon_body;
  switch (mode) {
    case FakeMode::kServes:
    case FakeMode::kIgnoresQuit:
    case FakeMode::kStubborn:
      // touch, a child: the shell itself then holds no extra descriptor.
      daemon_body = "touch \"$pipe/control\"\n";
      break;
    case FakeMode::kNeverReady:
      break;
    case FakeMode::kExitsAtOnce:
      daemon_body = "echo 'fake: no GPUs here' >&2\nexit 3\n";
      break;
    case FakeMode::kFailsOnce:
      daemon_body =
          "if [ ! -e \"$record.failed\" ]; then\n"
          "  touch \"$record.failed\"\n"
          "  exit 3\n"
          "fi\n"
          "touch \"$pipe/control\"\n";
      break;
  }
  const std::string on_quit =
      mode == FakeMode::kIgnoresQuit || mode == FakeMode::kStubborn
          ? "trap '' USR1\n"
          : "trap 'echo \"daemon $$ quit\" >> \"$record\"; "
            "rm -f \"$pipe/control\"; exit 0' USR1\n";
  const std::string on_term =
      mode == FakeMode::kStubborn
          ? "trap '' TERM\n"
          : "trap 'echo \"daemon $$ terminated\" >> \"$record\"; exit 143' "
            "TERM\n";
  return absl::StrCat(
      "#!/bin/sh\n"
      "record='",
      record,
      "'\n"
      "pipe=\"$CUDA_MPS_PIPE_DIRECTORY\"\n"
      "if [ \"$1\" = -f ]; then\n"
      "  {\n"
      "    echo \"daemon $$ args=$*\"\n"
      "    echo \"daemon $$ env "
      "CUDA_MPS_PIPE_DIRECTORY=$CUDA_MPS_PIPE_DIRECTORY\"\n"
      "    echo \"daemon $$ env "
      "CUDA_MPS_LOG_DIRECTORY=$CUDA_MPS_LOG_DIRECTORY\"\n"
      "    echo \"daemon $$ env CUDA_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES\"\n"
      "  } >> \"$record\"\n"
      "  echo \"fake control daemon $$ starting\"\n",
      on_quit, on_term, "  echo $$ > \"$pipe/fake.pid\"\n", daemon_body,
      "  while :; do sleep 0.02; done\n"
      "fi\n"
      "while read -r line; do\n"
      "  echo \"client $line\" >> \"$record\"\n"
      "  if [ ! -e \"$pipe/control\" ]; then\n"
      "    echo 'cannot connect to the MPS control daemon'\n"
      "    exit 1\n"
      "  fi\n"
      "  case \"$line\" in\n"
      "    quit) kill -USR1 \"$(cat \"$pipe/fake.pid\")\" ;;\n"
      "    get_server_list) echo 4242 ;;\n"
      "  esac\n"
      "done\n");
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

// fd -> what it points at, for process `pid`.
std::map<int, std::string> OpenFiles(pid_t pid) {
  std::map<int, std::string> files;
  const std::string dir = absl::StrCat("/proc/", pid, "/fd");
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    int fd;
    if (!absl::SimpleAtoi(entry.path().filename().string(), &fd)) continue;
    std::error_code error;
    files[fd] = std::filesystem::read_symlink(entry.path(), error).string();
  }
  return files;
}

// Ended and reaped: a zombie child of ours would still answer kill(pid, 0).
bool ProcessGone(pid_t pid) { return kill(pid, 0) != 0 && errno == ESRCH; }

// Gone, or a zombie nobody reaps (a pid 1 that does not reap).
bool ProcessDead(pid_t pid) {
  if (ProcessGone(pid)) return true;
  const std::string stat = ReadWholeFile(absl::StrCat("/proc/", pid, "/stat"));
  const size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() &&
         stat[paren + 2] == 'Z';
}

// Our direct children (zombies included) whose command line names `text`.
std::vector<pid_t> ChildrenRunning(const std::string& text) {
  std::vector<pid_t> children;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return children;
  while (dirent* entry = readdir(proc)) {
    pid_t pid;
    if (!absl::SimpleAtoi(entry->d_name, &pid)) continue;
    const std::string stat =
        ReadWholeFile(absl::StrCat("/proc/", pid, "/stat"));
    const size_t paren = stat.rfind(')');
    if (paren == std::string::npos) continue;
    // ") S PPID ..."
    std::vector<std::string> fields =
        absl::StrSplit(stat.substr(paren + 2), ' ');
    pid_t ppid;
    if (fields.size() < 2 || !absl::SimpleAtoi(fields[1], &ppid) ||
        ppid != getpid()) {
      continue;
    }
    std::string cmdline =
        ReadWholeFile(absl::StrCat("/proc/", pid, "/cmdline"));
    if (absl::StrContains(cmdline, text)) children.push_back(pid);
  }
  closedir(proc);
  return children;
}

class MpsDaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "mps_daemon_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    record_ = dir_ + "/record";
    root_ = dir_ + "/run/mps";
    // Opened without O_CLOEXEC, as a careless library in the agent would:
    // it must not reach the daemon.
    sentinel_path_ = dir_ + "/sentinel";
    std::ofstream(sentinel_path_) << "x";
    sentinel_fd_ = open(sentinel_path_.c_str(), O_RDONLY);
    ASSERT_GE(sentinel_fd_, 0);
  }

  void TearDown() override {
    close(sentinel_fd_);
    EXPECT_THAT(ChildrenRunning(dir_), ::testing::IsEmpty())
        << "children left behind";
    std::filesystem::remove_all(dir_);
  }

  // Writes the fake control binary; returns its path.
  std::string WriteFake(FakeMode mode,
                        const std::string& name = "nvidia-cuda-mps-control") {
    const std::string path = dir_ + "/" + name;
    std::ofstream(path) << FakeScript(record_, mode);
    chmod(path.c_str(), 0755);
    return path;
  }

  MpsDaemonOptions Options(const std::string& binary) {
    MpsDaemonOptions options;
    options.control_binary = binary;
    options.mps_root = root_;
    options.gpu_uuids = {"GPU-aaaa", "GPU-bbbb"};
    options.ready_timeout = absl::Seconds(5);
    options.stop_grace = absl::Seconds(2);
    options.initial_backoff = absl::Milliseconds(50);
    options.max_backoff = absl::Seconds(1);
    return options;
  }

  std::vector<std::string> Record() { return Lines(ReadWholeFile(record_)); }

  // The record's lines that start with `prefix`.
  std::vector<std::string> RecordLines(const std::string& prefix) {
    std::vector<std::string> lines;
    for (const std::string& line : Record()) {
      if (absl::StartsWith(line, prefix)) lines.push_back(line);
    }
    return lines;
  }

  std::string dir_;
  std::string record_;
  std::string root_;
  std::string sentinel_path_;
  int sentinel_fd_ = -1;
};

mode_t ModeOf(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) return 0;
  return info.st_mode & 07777;
}

TEST_F(MpsDaemonTest, StartsInTheForegroundWithTheMpsEnvironment) {
  MpsDaemonOptions options = Options(WriteFake(FakeMode::kServes));
  options.default_pinned_memory_mib = 8192;
  options.default_active_thread_percentage = 50;
  MpsDaemon daemon(options);
  ASSERT_OK(daemon.Start());

  const MpsDaemonStatus status = daemon.Status();
  EXPECT_TRUE(status.running);
  EXPECT_TRUE(status.ready);
  ASSERT_GT(status.pid, 0);
  EXPECT_EQ(status.restarts, 0);
  EXPECT_EQ(daemon.control_socket(), root_ + "/pipe/control");
  EXPECT_TRUE(std::filesystem::exists(daemon.control_socket()));
  // Its own process group, so a forced stop reaches what it spawns.
  EXPECT_EQ(getpgid(status.pid), status.pid);

  const std::string me = absl::StrCat("daemon ", status.pid, " ");
  const std::vector<std::string> record = Record();
  EXPECT_THAT(record, Contains(me + "args=-f"));
  EXPECT_THAT(record,
              Contains(me + "env CUDA_MPS_PIPE_DIRECTORY=" + root_ + "/pipe"));
  EXPECT_THAT(record,
              Contains(me + "env CUDA_MPS_LOG_DIRECTORY=" + root_ + "/log"));
  EXPECT_THAT(record,
              Contains(me + "env CUDA_VISIBLE_DEVICES=GPU-aaaa,GPU-bbbb"));
  // Descriptors: 0, 1, 2 and the script the shell reads; none of ours.
  const std::map<int, std::string> fds = OpenFiles(status.pid);
  EXPECT_EQ(fds.at(0), "/dev/null");
  EXPECT_EQ(fds.at(1), root_ + "/log/control.stdout");
  EXPECT_EQ(fds.at(2), root_ + "/log/control.stdout");
  for (const auto& [fd, target] : fds) {
    if (fd <= 2) continue;
    EXPECT_EQ(target, options.control_binary) << "fd " << fd << " leaked";
  }

  EXPECT_EQ(ModeOf(root_ + "/pipe"), 0777u);
  EXPECT_EQ(ModeOf(root_ + "/shm"), 0777u);
  EXPECT_TRUE(std::filesystem::is_directory(root_ + "/log"));
  EXPECT_THAT(
      ReadWholeFile(root_ + "/log/control.stdout"),
      HasSubstr(absl::StrCat("fake control daemon ", status.pid, " starting")));

  // The defaults go to control clients, one command each, in order.
  EXPECT_THAT(RecordLines("client "),
              ::testing::ElementsAre(
                  "client set_default_device_pinned_mem_limit 0 8192M",
                  "client set_default_device_pinned_mem_limit 1 8192M",
                  "client set_default_active_thread_percentage 50"));

  absl::StatusOr<std::string> reply = daemon.SendCommand("get_server_list");
  ASSERT_OK(reply);
  EXPECT_EQ(*reply, "4242\n");
  EXPECT_THAT(daemon.SendCommand("a\nb"),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(daemon.Start(), StatusIs(absl::StatusCode::kFailedPrecondition,
                                       HasSubstr("already started")));
  daemon.Stop();
}

TEST_F(MpsDaemonTest, RestartsAfterTheDaemonIsKilledWithBackoff) {
  deviceshare::testing::FakeClock clock;
  MpsDaemonOptions options = Options(WriteFake(FakeMode::kServes));
  options.clock = &clock;
  options.initial_backoff = absl::Seconds(1);
  options.max_backoff = absl::Seconds(30);
  options.default_active_thread_percentage = 25;
  MpsDaemon daemon(options);
  ASSERT_OK(daemon.Start());
  const pid_t first = daemon.Status().pid;

  ASSERT_EQ(kill(first, SIGKILL), 0);
  ASSERT_TRUE(
      WaitFor([&] { return daemon.Status().next_restart.has_value(); }));
  EXPECT_FALSE(daemon.Status().running);
  EXPECT_EQ(daemon.Status().last_exit, "killed by signal 9 (Killed)");
  EXPECT_EQ(*daemon.Status().next_restart, clock.Now() + absl::Seconds(1));
  // The backoff runs on the injected clock: nothing happens until it moves.
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_EQ(daemon.Status().restarts, 0);
  EXPECT_FALSE(daemon.Status().running);

  clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(WaitFor([&] { return daemon.Status().ready; }));
  const MpsDaemonStatus restarted = daemon.Status();
  EXPECT_EQ(restarted.restarts, 1);
  EXPECT_NE(restarted.pid, first);
  EXPECT_TRUE(ProcessGone(first));  // reaped
  EXPECT_THAT(Record(),
              Contains(absl::StrCat("daemon ", restarted.pid, " args=-f")));
  // The control daemon forgets its defaults: they are sent again.
  EXPECT_THAT(
      RecordLines("client "),
      ::testing::ElementsAre("client set_default_active_thread_percentage 25",
                             "client set_default_active_thread_percentage 25"));

  // A second failure right away doubles the backoff.
  ASSERT_EQ(kill(restarted.pid, SIGKILL), 0);
  ASSERT_TRUE(
      WaitFor([&] { return daemon.Status().next_restart.has_value(); }));
  EXPECT_EQ(*daemon.Status().next_restart, clock.Now() + absl::Seconds(2));
  clock.Advance(absl::Seconds(1));
  absl::SleepFor(absl::Milliseconds(100));
  EXPECT_EQ(daemon.Status().restarts, 1);
  clock.Advance(absl::Seconds(1));
  ASSERT_TRUE(WaitFor([&] { return daemon.Status().ready; }));
  EXPECT_FALSE(daemon.Status().next_restart.has_value());
  EXPECT_EQ(daemon.Status().restarts, 2);
  daemon.Stop();
}

TEST_F(MpsDaemonTest, StopQuitsCleanlyAndLeavesNoChild) {
  MpsDaemon daemon(Options(WriteFake(FakeMode::kServes)));
  ASSERT_OK(daemon.Start());
  const pid_t pid = daemon.Status().pid;

  const absl::Time before = absl::Now();
  daemon.Stop();
  // `quit` worked: no grace period was waited out.
  EXPECT_LT(absl::Now() - before, absl::Seconds(1));
  EXPECT_THAT(Record(), Contains("client quit"));
  EXPECT_THAT(Record(), Contains(absl::StrCat("daemon ", pid, " quit")));
  EXPECT_THAT(Record(), Not(Contains(HasSubstr("terminated"))));
  const MpsDaemonStatus status = daemon.Status();
  EXPECT_FALSE(status.running);
  EXPECT_EQ(status.pid, -1);
  EXPECT_EQ(status.last_exit, "exited with code 0");
  EXPECT_TRUE(ProcessGone(pid));
  EXPECT_THAT(ChildrenRunning(dir_), ::testing::IsEmpty());

  daemon.Stop();  // idempotent
  // A stopped daemon starts again.
  ASSERT_OK(daemon.Start());
  EXPECT_TRUE(daemon.Status().running);
  EXPECT_NE(daemon.Status().pid, pid);
}  // the destructor stops it; TearDown checks nothing is left

TEST_F(MpsDaemonTest, StopEscalatesToSigtermThenSigkill) {
  {
    MpsDaemonOptions options = Options(WriteFake(FakeMode::kIgnoresQuit));
    options.stop_grace = absl::Milliseconds(200);
    MpsDaemon daemon(options);
    ASSERT_OK(daemon.Start());
    const pid_t pid = daemon.Status().pid;
    daemon.Stop();
    EXPECT_THAT(Record(),
                Contains(absl::StrCat("daemon ", pid, " terminated")));
    EXPECT_EQ(daemon.Status().last_exit, "exited with code 143");
    EXPECT_TRUE(ProcessGone(pid));
  }
  {
    MpsDaemonOptions options = Options(WriteFake(FakeMode::kStubborn));
    options.stop_grace = absl::Milliseconds(200);
    MpsDaemon daemon(options);
    ASSERT_OK(daemon.Start());
    const pid_t pid = daemon.Status().pid;
    daemon.Stop();
    EXPECT_EQ(daemon.Status().last_exit, "killed by signal 9 (Killed)");
    EXPECT_TRUE(ProcessGone(pid));
  }
}

TEST_F(MpsDaemonTest, MissingControlBinaryIsNamed) {
  const std::string absent = dir_ + "/bin/nvidia-cuda-mps-control";
  MpsDaemon by_path(Options(absent));
  EXPECT_THAT(by_path.Start(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr(absent), HasSubstr("does not exist"))));
  EXPECT_FALSE(by_path.Status().running);

  MpsDaemon by_name(Options("deviceshare-no-such-mps-control"));
  EXPECT_THAT(by_name.Start(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("deviceshare-no-such-mps-control"),
                             HasSubstr("PATH"))));

  const std::string not_executable = dir_ + "/not-executable";
  std::ofstream(not_executable) << "#!/bin/sh\n";
  MpsDaemon plain_file(Options(not_executable));
  EXPECT_THAT(plain_file.Start(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr(not_executable),
                             HasSubstr("not an executable"))));
}

TEST_F(MpsDaemonTest, NeverReadyTimesOutNamingTheSocket) {
  MpsDaemonOptions options = Options(WriteFake(FakeMode::kNeverReady));
  options.ready_timeout = absl::Milliseconds(300);
  // A socket left from an earlier run must not count as ready.
  std::filesystem::create_directories(root_ + "/pipe");
  std::ofstream(root_ + "/pipe/control") << "";
  MpsDaemon daemon(options);
  EXPECT_THAT(daemon.Start(), StatusIs(absl::StatusCode::kDeadlineExceeded,
                                       AllOf(HasSubstr(root_ + "/pipe/control"),
                                             HasSubstr("300ms"))));
  const MpsDaemonStatus status = daemon.Status();
  EXPECT_FALSE(status.running);
  EXPECT_EQ(status.last_exit, "killed by signal 9 (Killed)");
  EXPECT_THAT(ChildrenRunning(dir_), ::testing::IsEmpty());
}

TEST_F(MpsDaemonTest, ExitAtStartIsReportedWithItsOutput) {
  MpsDaemon daemon(Options(WriteFake(FakeMode::kExitsAtOnce)));
  EXPECT_THAT(daemon.Start(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("exited with code 3"),
                             HasSubstr("fake: no GPUs here"),
                             HasSubstr(root_ + "/log/control.stdout"))));
  EXPECT_FALSE(daemon.Status().running);
}

// The agent's way: a daemon that cannot start yet is retried until it
// can, while Start() tells the caller what went wrong.
TEST_F(MpsDaemonTest, RetriesAFailedStartWhenAskedTo) {
  MpsDaemonOptions options = Options(WriteFake(FakeMode::kFailsOnce));
  options.retry_failed_start = true;
  MpsDaemon daemon(options);
  EXPECT_THAT(daemon.Start(), StatusIs(absl::StatusCode::kFailedPrecondition,
                                       HasSubstr("exited with code 3")));
  ASSERT_TRUE(WaitFor([&] { return daemon.Status().ready; }));
  EXPECT_EQ(daemon.Status().restarts, 1);
  EXPECT_THAT(daemon.Start(), StatusIs(absl::StatusCode::kFailedPrecondition,
                                       HasSubstr("already started")));
  daemon.Stop();
  EXPECT_FALSE(daemon.Status().running);
  EXPECT_EQ(daemon.Status().last_exit, "exited with code 0");

  // Without the option, a failed start leaves nothing behind to retry.
  std::filesystem::remove(record_ + ".failed");
  options.retry_failed_start = false;
  MpsDaemon once(options);
  EXPECT_THAT(once.Start(), StatusIs(absl::StatusCode::kFailedPrecondition));
  absl::SleepFor(absl::Milliseconds(150));  // three backoffs' worth
  EXPECT_FALSE(once.Status().running);
  EXPECT_EQ(once.Status().restarts, 0);
  EXPECT_THAT(ChildrenRunning(dir_), ::testing::IsEmpty());
}

TEST_F(MpsDaemonTest, BadOptionsAreNamed) {
  const std::string fake = WriteFake(FakeMode::kServes);
  MpsDaemonOptions relative = Options(fake);
  relative.mps_root = "run/mps";
  EXPECT_THAT(MpsDaemon(relative).Start(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("mps_root"), HasSubstr("run/mps"))));
  MpsDaemonOptions no_gpus = Options(fake);
  no_gpus.gpu_uuids.clear();
  EXPECT_THAT(
      MpsDaemon(no_gpus).Start(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("gpu_uuids")));
  MpsDaemonOptions comma = Options(fake);
  comma.gpu_uuids = {"GPU-a,GPU-b"};
  EXPECT_THAT(
      MpsDaemon(comma).Start(),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("gpu_uuids[0]"), HasSubstr("GPU-a,GPU-b"))));
  MpsDaemonOptions percentage = Options(fake);
  percentage.default_active_thread_percentage = 0;
  EXPECT_THAT(MpsDaemon(percentage).Start(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("default_active_thread_percentage"),
                             HasSubstr("\"0\""))));
  MpsDaemonOptions backoff = Options(fake);
  backoff.max_backoff = absl::Milliseconds(10);
  EXPECT_THAT(
      MpsDaemon(backoff).Start(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max_backoff")));
  EXPECT_FALSE(std::filesystem::exists(record_));  // nothing ran
}

TEST_F(MpsDaemonTest, CommandsFailWithoutADaemon) {
  MpsDaemon daemon(Options(WriteFake(FakeMode::kServes)));
  EXPECT_THAT(daemon.SendCommand("get_server_list"),
              StatusIs(absl::StatusCode::kUnavailable,
                       AllOf(HasSubstr("exited with code 1"),
                             HasSubstr("cannot connect"))));
}

// The daemon belongs to the supervisor thread, not to the thread that
// called Start(): that one ending must not take the daemon with it.
TEST_F(MpsDaemonTest, OutlivesTheThreadThatStartedIt) {
  MpsDaemon daemon(Options(WriteFake(FakeMode::kServes)));
  std::thread starter([&] { ASSERT_OK(daemon.Start()); });
  starter.join();
  const pid_t pid = daemon.Status().pid;
  ASSERT_GT(pid, 0);
  absl::SleepFor(absl::Milliseconds(150));
  EXPECT_TRUE(daemon.Status().running);
  EXPECT_EQ(daemon.Status().pid, pid);
  EXPECT_EQ(daemon.Status().restarts, 0);
}

// An agent killed with SIGKILL cannot stop its daemon; the parent-death
// signal does.
TEST_F(MpsDaemonTest, DiesWithAKilledAgent) {
  const std::string fake = WriteFake(FakeMode::kServes);
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  const pid_t agent = fork();
  ASSERT_GE(agent, 0);
  if (agent == 0) {
    close(report[0]);
    MpsDaemon daemon(Options(fake));
    pid_t pid = daemon.Start().ok() ? daemon.Status().pid : -1;
    if (write(report[1], &pid, sizeof(pid)) != sizeof(pid)) _exit(1);
    while (true) pause();
  }
  close(report[1]);
  pid_t daemon_pid = -1;
  ASSERT_EQ(read(report[0], &daemon_pid, sizeof(daemon_pid)),
            static_cast<ssize_t>(sizeof(daemon_pid)));
  close(report[0]);
  ASSERT_GT(daemon_pid, 0);
  kill(agent, SIGKILL);
  int wait_status = 0;
  waitpid(agent, &wait_status, 0);
  const std::string terminated =
      absl::StrCat("daemon ", daemon_pid, " terminated");
  EXPECT_TRUE(WaitFor([&] {
    const std::vector<std::string> record = Record();
    return std::find(record.begin(), record.end(), terminated) != record.end();
  }));
  EXPECT_TRUE(WaitFor([&] { return ProcessDead(daemon_pid); }));
}

}  // namespace
}  // namespace deviceshare::agent
