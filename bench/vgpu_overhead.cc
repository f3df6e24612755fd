// vgpu_overhead: what libvgpu.so adds to the calls it sits on, measured on
// the fake driver (tests/fake_cuda) in the same run: children alternate
// native and LD_PRELOAD=libvgpu.so, each timing
//   - a 1 MiB cuMemAlloc + cuMemFree pair with no other live allocation
//     and with 10,000 live ones (the hash map must keep it flat);
//   - a cuLaunchKernel with the SM limiter off (a memory limit only), in
//     batches of 1,000 launches between synchronisations;
// and the parent prints each figure's median over the rounds, native vs
// preloaded, and the difference. The fake's own cost (mmap per allocation,
// a shared timeline per launch) is in both columns; the difference is the
// library's. Absolute times move with the machine's load; read the
// "added" column against the same run's native one.
//
//   vgpu_overhead [--rounds 7]
#include <dlfcn.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gpu_abi/cuda_abi.h"

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

struct Driver {
  cuInit_fn init;
  cuDeviceGet_fn device_get;
  cuDevicePrimaryCtxRetain_fn retain;
  cuCtxSetCurrent_fn set_current;
  cuMemAlloc_v2_fn alloc;
  cuMemFree_v2_fn free;
  cuModuleLoadData_fn load;
  cuModuleGetFunction_fn function;
  cuLaunchKernel_fn launch;
  cuCtxSynchronize_fn sync;
};

// Resolves the driver the way the CUDA runtime does: dlopen, dlsym of
// cuGetProcAddress_v2, and everything else through it.
bool Resolve(Driver& d) {
  void* library = dlopen("libcuda.so.1", RTLD_NOW);
  if (library == nullptr) return false;
  auto get = reinterpret_cast<cuGetProcAddress_v2_fn>(
      dlsym(library, "cuGetProcAddress_v2"));
  if (get == nullptr) return false;
  auto one = [&](const char* name, auto& slot) {
    void* pointer = nullptr;
    CUdriverProcAddressQueryResult status;
    get(name, &pointer, 13000, CU_GET_PROC_ADDRESS_DEFAULT, &status);
    slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(pointer);
    return pointer != nullptr;
  };
  return one("cuInit", d.init) && one("cuDeviceGet", d.device_get) &&
         one("cuDevicePrimaryCtxRetain", d.retain) &&
         one("cuCtxSetCurrent", d.set_current) && one("cuMemAlloc", d.alloc) &&
         one("cuMemFree", d.free) && one("cuModuleLoadData", d.load) &&
         one("cuModuleGetFunction", d.function) &&
         one("cuLaunchKernel", d.launch) && one("cuCtxSynchronize", d.sync);
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

// ns per alloc+free pair, median over batches of 100 pairs.
double AllocFreePair(const Driver& d) {
  std::vector<double> batches;
  for (int batch = 0; batch < 60; ++batch) {
    auto start = Clock::now();
    for (int i = 0; i < 100; ++i) {
      CUdeviceptr pointer = 0;
      if (d.alloc(&pointer, 1 << 20) != CUDA_SUCCESS) return -1;
      d.free(pointer);
    }
    batches.push_back(
        std::chrono::duration<double, std::nano>(Clock::now() - start).count() /
        100);
  }
  return Median(batches);
}

int Child() {
  Driver d;
  CUdevice device = 0;
  CUcontext context = nullptr;
  if (!Resolve(d) || d.init(0) != CUDA_SUCCESS ||
      d.device_get(&device, 0) != CUDA_SUCCESS ||
      d.retain(&context, device) != CUDA_SUCCESS ||
      d.set_current(context) != CUDA_SUCCESS) {
    std::fprintf(stderr, "vgpu_overhead: the fake driver did not start\n");
    return 1;
  }
  double empty = AllocFreePair(d);
  std::vector<CUdeviceptr> live(10000);
  for (CUdeviceptr& pointer : live) {
    if (d.alloc(&pointer, 64 << 10) != CUDA_SUCCESS) return 1;
  }
  double crowded = AllocFreePair(d);
  for (CUdeviceptr pointer : live) d.free(pointer);

  CUmodule module = nullptr;
  CUfunction kernel = nullptr;
  static const char kImage[] = "fake";
  if (d.load(&module, kImage) != CUDA_SUCCESS ||
      d.function(&kernel, module, "spin_1us") != CUDA_SUCCESS) {
    return 1;
  }
  std::vector<double> batches;
  for (int batch = 0; batch < 40; ++batch) {
    auto start = Clock::now();
    for (int i = 0; i < 1000; ++i) {
      d.launch(kernel, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr);
    }
    batches.push_back(
        std::chrono::duration<double, std::nano>(Clock::now() - start).count() /
        1000);
    d.sync();
  }
  std::printf("%.1f %.1f %.1f\n", empty, crowded, Median(batches));
  return 0;
}

bool RunChild(const char* self, bool preload, const std::string& dir,
              double out[3]) {
  std::vector<std::string> env = {
      "VGPU_OVERHEAD_CHILD=1",
      std::string("LD_LIBRARY_PATH=") + DEVICESHARE_FAKE_CUDA_DIR,
      "FAKE_CUDA_DEVICES=GPU-0b0e0a0d-0000-4000-8000-000000000001:81920:132",
      "FAKE_CUDA_STATE=" + dir +
          (preload ? "/preloaded.state" : "/native.state"),
  };
  if (preload) {
    env.push_back(std::string("LD_PRELOAD=") + DEVICESHARE_VGPU_LIB);
    env.push_back("CUDA_DEVICE_MEMORY_LIMIT=60g");
    env.push_back("CUDA_DEVICE_MEMORY_SHARED_CACHE=" + dir + "/region.cache");
  }
  std::vector<char*> envp;
  for (std::string& entry : env) envp.push_back(entry.data());
  envp.push_back(nullptr);
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return false;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  char* argv[] = {const_cast<char*>(self), nullptr};
  pid_t pid = 0;
  int rc = posix_spawn(&pid, self, &actions, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&actions);
  close(pipe_fds[1]);
  if (rc != 0) {
    close(pipe_fds[0]);
    return false;
  }
  char text[256] = {};
  ssize_t length = read(pipe_fds[0], text, sizeof(text) - 1);
  close(pipe_fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return length > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 &&
         std::sscanf(text, "%lf %lf %lf", &out[0], &out[1], &out[2]) == 3;
}

}  // namespace

int main(int argc, char** argv) {
  if (std::getenv("VGPU_OVERHEAD_CHILD") != nullptr) return Child();
  int rounds = 7;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: vgpu_overhead [--rounds N]\n");
      return 2;
    }
  }
  if (rounds < 1) {
    std::fprintf(stderr, "vgpu_overhead: --rounds must be positive\n");
    return 2;
  }
  char pattern[] = "/tmp/vgpu-overhead-XXXXXX";
  if (mkdtemp(pattern) == nullptr) return 1;
  const std::string dir = pattern;
  char self[4096] = {};
  if (readlink("/proc/self/exe", self, sizeof(self) - 1) <= 0) return 1;
  std::vector<double> native[3];
  std::vector<double> preloaded[3];
  for (int round = 0; round < rounds; ++round) {
    double n[3];
    double p[3];
    if (!RunChild(self, false, dir, n) || !RunChild(self, true, dir, p)) {
      std::fprintf(stderr, "vgpu_overhead: a child failed\n");
      return 1;
    }
    for (int i = 0; i < 3; ++i) {
      native[i].push_back(n[i]);
      preloaded[i].push_back(p[i]);
    }
  }
  std::string cleanup = "rm -rf " + dir;
  if (std::system(cleanup.c_str()) != 0) return 1;
  static const char* const kNames[] = {
      "cuMemAlloc+cuMemFree 1 MiB, no other live allocation",
      "cuMemAlloc+cuMemFree 1 MiB, 10,000 live allocations",
      "cuLaunchKernel, SM limiter off"};
  std::printf("median of %d rounds, ns per call (pair)\n", rounds);
  std::printf("%-55s %10s %10s %10s\n", "", "native", "preloaded", "added");
  for (int i = 0; i < 3; ++i) {
    double base = Median(native[i]);
    double with = Median(preloaded[i]);
    std::printf("%-55s %10.1f %10.1f %10.1f\n", kNames[i], base, with,
                with - base);
  }
  return 0;
}
