// File: testing/vgpu_env.h
//
// VgpuWorld: a fake GPU node for the end-to-end tests of libvgpu.so. It
// owns a short temporary directory under $TMPDIR (else /tmp) holding the
// fake driver's shared state file (FAKE_CUDA_STATE), the fake NVML's
// inventory, the interposer's region file and the probes' output, and runs
// tests/vgpu_probe in real processes with an explicit, clean environment:
//
//   LD_LIBRARY_PATH                  the fake libcuda.so.1, the fake NVML
//   FAKE_CUDA_DEVICES                the GPUs given to the constructor
//   FAKE_CUDA_STATE, FAKE_NVML_INVENTORY
//   CUDA_DEVICE_MEMORY_SHARED_CACHE  the world's region file, never /tmp's
//                                    default
//   LD_PRELOAD                       libvgpu.so, when asked
//   + whatever the test adds (limits, CUDA_VISIBLE_DEVICES, failpoints).
//
// Nothing of the test process's own environment leaks into a probe.
//
// Thread safety: Run/Start may be called from several threads; the rest is
// set up once.
#ifndef DEVICESHARE_TESTS_TESTING_VGPU_ENV_H_
#define DEVICESHARE_TESTS_TESTING_VGPU_ENV_H_

#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "fake_cuda/fake_cuda_state.h"

namespace deviceshare::testing {

inline constexpr uint64_t kMiB = uint64_t{1} << 20;

struct FakeGpuSpec {
  std::string uuid;  // "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
  uint64_t memory_mib = 4096;
  int sm_count = 132;
};

// A UUID for the i-th fake GPU of a test.
std::string FakeGpuUuid(int i);

// The built artifacts (compile definitions of the test targets).
std::string VgpuProbeBin();
// vgpu_probe_linked beside it.
std::string VgpuProbeLinkedBin();
// libvgpu.so.
std::string VgpuLibrary();

struct ProbeOptions {
  // Options and ops, as on vgpu_probe's command line.
  std::vector<std::string> args;
  // Added to the world's environment in order; an empty value removes the
  // variable.
  std::vector<std::pair<std::string, std::string>> env;
  bool preload = false;  // LD_PRELOAD=VgpuLibrary()
  bool linked = false;   // run vgpu_probe_linked
};

struct ProbeResult {
  pid_t pid = -1;
  int exit_code = -1;  // -1 when killed by a signal
  int signal = 0;
  std::vector<nlohmann::json> lines;  // stdout, one object per op
  std::string out;
  std::string err;
  double wall_ms = 0;

  // The nth line of op `name`; a null json when absent.
  nlohmann::json Op(const std::string& name, int nth = 0) const;
  // Everything, for failure messages.
  std::string Describe() const;
};

// A probe started but not yet waited for.
class ProbeProcess {
 public:
  ProbeProcess() = default;
  ProbeProcess(ProbeProcess&& other) noexcept;
  ProbeProcess& operator=(ProbeProcess&& other) noexcept;
  ~ProbeProcess();  // kills and reaps a probe nobody waited for

  pid_t pid() const { return pid_; }
  // Waits for the exit and reads the output.
  ProbeResult Wait();

 private:
  friend class VgpuWorld;
  pid_t pid_ = -1;
  std::string out_path_;
  std::string err_path_;
  int64_t start_ns_ = 0;
};

class VgpuWorld {
 public:
  explicit VgpuWorld(std::vector<FakeGpuSpec> gpus);
  ~VgpuWorld();  // removes the directory
  VgpuWorld(const VgpuWorld&) = delete;
  VgpuWorld& operator=(const VgpuWorld&) = delete;

  const std::string& dir() const { return dir_; }
  const std::vector<FakeGpuSpec>& gpus() const { return gpus_; }
  std::string state_path() const { return dir_ + "/gpu.state"; }
  std::string region_path() const { return dir_ + "/vgpu.cache"; }

  // The environment a probe gets (before ProbeOptions::env).
  std::vector<std::pair<std::string, std::string>> BaseEnv(bool preload) const;

  ProbeResult Run(const ProbeOptions& options) const;
  ProbeProcess Start(const ProbeOptions& options) const;

  // Physical bytes the fake driver holds on `uuid` for live processes;
  // nullopt before any process used it.
  std::optional<uint64_t> PhysicalUsed(const std::string& uuid) const;
  // The kernels of the fake's log (all GPUs, all processes).
  std::vector<fake_cuda::KernelView> Kernels() const;

 private:
  std::string dir_;
  std::vector<FakeGpuSpec> gpus_;
  mutable std::atomic<int> next_run_{0};
};

// Waits until `path` exists (a probe's signal-ready); false after
// `timeout_ms`.
bool WaitForFile(const std::string& path, int timeout_ms = 10000);
// Creates `path` (what a probe's wait-file waits for).
void TouchFile(const std::string& path);

// CLOCK_MONOTONIC in ns, the fake's kernel log's clock.
uint64_t MonotonicNowNs();

// Fraction of [from_ns, to_ns) during which kernels of `pid` ran (all
// GPUs; kernels of one GPU never overlap on the fake's timeline).
double BusyFraction(const std::vector<fake_cuda::KernelView>& kernels,
                    pid_t pid, uint64_t from_ns, uint64_t to_ns);

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_VGPU_ENV_H_
