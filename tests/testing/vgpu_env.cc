#include "testing/vgpu_env.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "testing/temp_folder.h"
#include "testing/whole_file.h"

namespace deviceshare::testing {
namespace {

int64_t MonotonicNs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1000000000LL + now.tv_nsec;
}

std::string Dirname(const std::string& path) {
  return std::filesystem::path(path).parent_path().string();
}

std::string FakeCudaLibDir() { return Dirname(DEVICESHARE_FAKE_CUDA_LIB); }

std::string FakeNvmlLibDir() { return Dirname(DEVICESHARE_FAKE_NVML_LIB); }

}  // namespace

std::string FakeGpuUuid(int i) {
  char text[64];
  std::snprintf(text, sizeof(text), "GPU-5eed%04x-0000-4000-8000-%012x", i,
                0xa11ce0 + i);
  return text;
}

std::string VgpuProbeBin() { return DEVICESHARE_VGPU_PROBE_BIN; }

std::string VgpuProbeLinkedBin() {
  return Dirname(VgpuProbeBin()) + "/vgpu_probe_linked";
}

std::string VgpuLibrary() { return DEVICESHARE_VGPU_LIB; }

nlohmann::json ProbeResult::Op(const std::string& name, int nth) const {
  for (const nlohmann::json& line : lines) {
    if (line.is_object() && line.value("op", "") == name && nth-- == 0) {
      return line;
    }
  }
  return nullptr;
}

std::string ProbeResult::Describe() const {
  std::ostringstream text;
  text << "probe pid " << pid << " exit " << exit_code << " signal " << signal
       << " wall " << wall_ms << " ms\n--- stdout\n"
       << out << "--- stderr\n"
       << err;
  return text.str();
}

ProbeProcess::ProbeProcess(ProbeProcess&& other) noexcept {
  *this = std::move(other);
}

ProbeProcess& ProbeProcess::operator=(ProbeProcess&& other) noexcept {
  std::swap(pid_, other.pid_);
  std::swap(out_path_, other.out_path_);
  std::swap(err_path_, other.err_path_);
  std::swap(start_ns_, other.start_ns_);
  return *this;
}

ProbeProcess::~ProbeProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

ProbeResult ProbeProcess::Wait() {
  ProbeResult result;
  result.pid = pid_;
  if (pid_ <= 0) {
    result.err = "probe was not started";
    return result;
  }
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  result.wall_ms = (MonotonicNs() - start_ns_) / 1e6;
  pid_ = -1;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.out = ReadWholeFile(out_path_);
  result.err = ReadWholeFile(err_path_);
  std::istringstream lines(result.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    nlohmann::json parsed =
        nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (parsed.is_discarded()) parsed = {{"unparsed", line}};
    result.lines.push_back(std::move(parsed));
  }
  return result;
}

VgpuWorld::VgpuWorld(std::vector<FakeGpuSpec> gpus) : gpus_(std::move(gpus)) {
  std::string pattern = TempRoot() + "/vgXXXXXX";
  if (mkdtemp(pattern.data()) == nullptr) {
    std::perror("VgpuWorld: mkdtemp");
    std::abort();
  }
  dir_ = pattern;
  nlohmann::json inventory = {{"gpus", nlohmann::json::array()}};
  for (size_t i = 0; i < gpus_.size(); ++i) {
    inventory["gpus"].push_back({{"uuid", gpus_[i].uuid},
                                 {"index", i},
                                 {"model", "NVIDIA H100 80GB HBM3"},
                                 {"memory_mib", gpus_[i].memory_mib},
                                 {"sm_count", gpus_[i].sm_count}});
  }
  std::ofstream(dir_ + "/inventory.json") << inventory.dump(2);
}

VgpuWorld::~VgpuWorld() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

std::vector<std::pair<std::string, std::string>> VgpuWorld::BaseEnv(
    bool preload) const {
  std::string devices;
  for (const FakeGpuSpec& gpu : gpus_) {
    if (!devices.empty()) devices += ",";
    devices += gpu.uuid + ":" + std::to_string(gpu.memory_mib) + ":" +
               std::to_string(gpu.sm_count);
  }
  std::vector<std::pair<std::string, std::string>> env = {
      {"LD_LIBRARY_PATH", FakeCudaLibDir() + ":" + FakeNvmlLibDir()},
      {"FAKE_CUDA_DEVICES", devices},
      {"FAKE_CUDA_STATE", state_path()},
      {"FAKE_NVML_INVENTORY", dir_ + "/inventory.json"},
      {"CUDA_DEVICE_MEMORY_SHARED_CACHE", region_path()},
  };
  if (preload) env.emplace_back("LD_PRELOAD", VgpuLibrary());
  return env;
}

ProbeProcess VgpuWorld::Start(const ProbeOptions& options) const {
  std::vector<std::pair<std::string, std::string>> env =
      BaseEnv(options.preload);
  for (const auto& [name, value] : options.env) {
    std::erase_if(env, [&](const auto& entry) { return entry.first == name; });
    if (!value.empty()) env.emplace_back(name, value);
  }
  std::vector<std::string> env_text;
  for (const auto& [name, value] : env) env_text.push_back(name + "=" + value);

  const std::string binary =
      options.linked ? VgpuProbeLinkedBin() : VgpuProbeBin();
  std::vector<std::string> argv_text = {binary};
  argv_text.insert(argv_text.end(), options.args.begin(), options.args.end());

  auto pointers = [](std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (std::string& s : strings) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
  };
  std::vector<char*> argv = pointers(argv_text);
  std::vector<char*> envp = pointers(env_text);

  ProbeProcess process;
  const std::string stem = dir_ + "/p" + std::to_string(next_run_++);
  process.out_path_ = stem + ".out";
  process.err_path_ = stem + ".err";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, process.out_path_.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, process.err_path_.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  process.start_ns_ = MonotonicNs();
  pid_t pid = -1;
  const int error = binary.empty()
                        ? ENOENT
                        : posix_spawn(&pid, binary.c_str(), &actions, nullptr,
                                      argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    std::ofstream(process.err_path_)
        << "posix_spawn " << binary << ": " << std::strerror(error) << "\n";
    return process;
  }
  process.pid_ = pid;
  return process;
}

ProbeResult VgpuWorld::Run(const ProbeOptions& options) const {
  return Start(options).Wait();
}

std::optional<uint64_t> VgpuWorld::PhysicalUsed(const std::string& uuid) const {
  fake_cuda::StateReader reader;
  if (!reader.Open(state_path())) return std::nullopt;
  return reader.PhysicalUsed(uuid);
}

std::vector<fake_cuda::KernelView> VgpuWorld::Kernels() const {
  std::vector<fake_cuda::KernelView> kernels;
  fake_cuda::StateReader reader;
  if (!reader.Open(state_path())) return kernels;
  reader.ForEachKernel(
      [&](const fake_cuda::KernelView& kernel) { kernels.push_back(kernel); });
  return kernels;
}

bool WaitForFile(const std::string& path, int timeout_ms) {
  const int64_t deadline = MonotonicNs() + int64_t{timeout_ms} * 1000000;
  while (access(path.c_str(), F_OK) != 0) {
    if (MonotonicNs() > deadline) return false;
    usleep(500);
  }
  return true;
}

void TouchFile(const std::string& path) { std::ofstream out(path); }

uint64_t MonotonicNowNs() { return static_cast<uint64_t>(MonotonicNs()); }

double BusyFraction(const std::vector<fake_cuda::KernelView>& kernels,
                    pid_t pid, uint64_t from_ns, uint64_t to_ns) {
  if (to_ns <= from_ns) return 0;
  uint64_t busy = 0;
  for (const fake_cuda::KernelView& kernel : kernels) {
    if (kernel.pid != pid) continue;
    const uint64_t start = std::max(kernel.start_ns, from_ns);
    const uint64_t end = std::min(kernel.end_ns, to_ns);
    if (end > start) busy += end - start;
  }
  return static_cast<double>(busy) / static_cast<double>(to_ns - from_ns);
}

}  // namespace deviceshare::testing
