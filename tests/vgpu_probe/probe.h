// File: tests/vgpu_probe/probe.h
//
// vgpu_probe: a test workload that uses "the driver" the way real programs
// do, runs a script of operations given on its command line and prints one
// JSON object per operation on stdout, so that the end-to-end tests of
// libvgpu.so can drive real processes over the fake driver. Usage:
//
//   vgpu_probe [--resolve=getproc|dlsym|linked] [--launch=kernel|ex|coop|graph]
//              [--no-timing] OP [ARGS...] [OP [ARGS...]]...
//
// The operations are listed in main.cc. CUDA results are reported, never
// acted on: an op that fails prints its CUresult in "code" and the script
// goes on. Bad arguments: a message naming the argument and exit 2; a
// driver that cannot be loaded: exit 3.
#ifndef DEVICESHARE_TESTS_VGPU_PROBE_PROBE_H_
#define DEVICESHARE_TESTS_VGPU_PROBE_PROBE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "driver.h"

namespace vgpu_probe {

// One line of output: a flat JSON object, printed and flushed by Emit() so
// that a test reading the output of a killed process sees every finished
// op.
class Line {
 public:
  explicit Line(const std::string& op);
  Line& Int(const std::string& key, long long value);
  Line& Str(const std::string& key, const std::string& value);
  Line& StrList(const std::string& key, const std::vector<std::string>& list);
  // "us": how long the op took; left out under --no-timing, so that runs
  // can be compared byte for byte.
  Line& Us(long long microseconds);
  void Emit();

 private:
  std::string text_;
};

// The allocation paths of alloc / alloc-until-oom.
enum class Path {
  kMemAlloc,
  kPitch,
  kManaged,
  kArray,
  kArray3D,
  kMipmapped,
  kVmm,
  kAsync,
  kFromPool,
  kGraph,
};
std::optional<Path> ParsePath(const std::string& name);
const char* PathName(Path path);

// How launch-loop launches (--launch=).
enum class Launch { kKernel, kEx, kCoop, kGraph };

// One live allocation, whatever the path; free-all undoes each.
struct Allocation {
  Path path = Path::kMemAlloc;
  CUdeviceptr ptr = 0;
  CUarray array = nullptr;
  CUmipmappedArray mipmapped = nullptr;
  CUmemGenericAllocationHandle handle = 0;
  size_t size = 0;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
};

struct Probe {
  Resolve resolve = Resolve::kGetProc;
  Launch launch = Launch::kKernel;
  Driver cu;
  Nvml nvml;
  bool nvml_loaded = false;
  std::string nvml_error;

  CUdevice device = 0;
  CUstream stream = nullptr;
  bool stream_created = false;
  CUmemoryPool pool = nullptr;
  std::vector<Allocation> live;

  // The probe's stream, created on first use (the null stream until then
  // would serialize with nothing and hide per-stream behaviour).
  CUresult Stream(CUstream& out);
};

// False under --no-timing.
extern bool g_timing;

// Parsing of arguments: bytes accept a k/m/g suffix (powers of 1024).
bool ParseBytes(const std::string& text, unsigned long long& out);
bool ParseInt(const std::string& text, long long& out);

// The ops. Check* validate arguments without touching the driver (false
// with `error` naming the bad argument); Run* do the work and Emit.
using Args = std::vector<std::string>;
bool CheckAlloc(const Args& args, std::string& error);
void RunInit(Probe& probe, const Args& args);
void RunCount(Probe& probe, const Args& args);
void RunUuid(Probe& probe, const Args& args);
void RunMemInfo(Probe& probe, const Args& args);
void RunTotalMem(Probe& probe, const Args& args);
void RunNvmlMemInfo(Probe& probe, const Args& args);
void RunAlloc(Probe& probe, const Args& args);
void RunAllocUntilOom(Probe& probe, const Args& args);
void RunForkAlloc(Probe& probe, const Args& args);
void RunFreeAll(Probe& probe, const Args& args);
bool CheckLaunchLoop(const Args& args, std::string& error);
void RunLaunchLoop(Probe& probe, const Args& args);
void RunHold(Probe& probe, const Args& args);
void RunSignalReady(Probe& probe, const Args& args);
void RunWaitFile(Probe& probe, const Args& args);

// Microseconds on CLOCK_MONOTONIC.
long long NowUs();

// "GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", NVML's spelling.
std::string UuidText(const CUuuid& uuid);

}  // namespace vgpu_probe

#endif  // DEVICESHARE_TESTS_VGPU_PROBE_PROBE_H_
