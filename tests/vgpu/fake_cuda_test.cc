// Tests of the fake CUDA driver (tests/fake_cuda) itself, loaded with
// dlopen the way the interposer's tests load it. The fake reads its
// environment at cuInit and keeps the first world it builds, so every
// scenario runs in a forked child with its own environment; the parent
// checks the exit status and, where processes share FAKE_CUDA_STATE, reads
// the state file with fake_cuda::StateReader.
#include <dlfcn.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "fake_cuda/fake_cuda_state.h"
#include "gpu_abi/cuda_abi.h"
#include "gpu_abi/nvml_abi.h"
#include "gtest/gtest.h"
#include "testing/temp_folder.h"

namespace {

constexpr uint64_t kMiB = uint64_t{1} << 20;
constexpr int kSms = 132;
constexpr char kUuid0[] = "GPU-8f6b1c2e-0000-4000-8000-000000000000";
constexpr char kUuid1[] = "GPU-1a2b3c4d-1111-4111-8111-111111111111";
constexpr char kUuid2[] = "GPU-8e000000-2222-4222-8222-222222222222";

std::string Devices(uint64_t total_mib = 1024) {
  std::string devices = kUuid0;
  devices += ":" + std::to_string(total_mib) + ":" + std::to_string(kSms);
  return devices;
}

// The fake's entry points, resolved from a fresh dlopen in the child.
struct Driver {
  void* handle = nullptr;
#define FAKE_CUDA_TEST_FN(name) name##_fn name = nullptr;
#define FAKE_CUDA_TEST_ALL(X)      \
  X(cuInit)                        \
  X(cuDriverGetVersion)            \
  X(cuGetErrorString)              \
  X(cuGetErrorName)                \
  X(cuGetProcAddress)              \
  X(cuGetProcAddress_v2)           \
  X(cuDeviceGet)                   \
  X(cuDeviceGetCount)              \
  X(cuDeviceGetName)               \
  X(cuDeviceGetUuid)               \
  X(cuDeviceTotalMem_v2)           \
  X(cuDeviceGetAttribute)          \
  X(cuDevicePrimaryCtxRetain)      \
  X(cuDevicePrimaryCtxRelease_v2)  \
  X(cuCtxGetCurrent)               \
  X(cuCtxSetCurrent)               \
  X(cuCtxGetDevice)                \
  X(cuCtxSynchronize)              \
  X(cuCtxPushCurrent_v2)           \
  X(cuCtxPopCurrent_v2)            \
  X(cuMemGetInfo_v2)               \
  X(cuMemAlloc_v2)                 \
  X(cuMemAllocPitch_v2)            \
  X(cuMemAllocManaged)             \
  X(cuMemFree_v2)                  \
  X(cuMemcpyHtoD_v2)               \
  X(cuMemcpyDtoH_v2)               \
  X(cuMemsetD8_v2)                 \
  X(cuArrayCreate_v2)              \
  X(cuArray3DCreate_v2)            \
  X(cuArrayDestroy)                \
  X(cuMipmappedArrayCreate)        \
  X(cuMipmappedArrayDestroy)       \
  X(cuMemCreate)                   \
  X(cuMemRelease)                  \
  X(cuMemGetAllocationGranularity) \
  X(cuMemAddressReserve)           \
  X(cuMemAddressFree)              \
  X(cuMemMap)                      \
  X(cuMemUnmap)                    \
  X(cuMemAllocAsync)               \
  X(cuMemAllocFromPoolAsync)       \
  X(cuMemFreeAsync)                \
  X(cuMemPoolCreate)               \
  X(cuMemPoolDestroy)              \
  X(cuMemPoolGetAttribute)         \
  X(cuMemPoolSetAttribute)         \
  X(cuMemPoolTrimTo)               \
  X(cuDeviceGetDefaultMemPool)     \
  X(cuDeviceGetMemPool)            \
  X(cuStreamCreate)                \
  X(cuStreamDestroy_v2)            \
  X(cuStreamSynchronize)           \
  X(cuStreamIsCapturing)           \
  X(cuEventCreate)                 \
  X(cuEventRecord)                 \
  X(cuEventQuery)                  \
  X(cuEventSynchronize)            \
  X(cuEventElapsedTime_v2)         \
  X(cuEventDestroy_v2)             \
  X(cuModuleLoadData)              \
  X(cuModuleGetFunction)           \
  X(cuLaunchKernel)                \
  X(cuLaunchKernelEx)              \
  X(cuGraphCreate)                 \
  X(cuGraphDestroy)                \
  X(cuGraphAddKernelNode_v2)       \
  X(cuGraphAddMemAllocNode)        \
  X(cuGraphInstantiateWithFlags)   \
  X(cuGraphLaunch)                 \
  X(cuGraphExecDestroy)            \
  X(cuDeviceGetGraphMemAttribute)  \
  X(cuDeviceGraphMemTrim)
  FAKE_CUDA_TEST_ALL(FAKE_CUDA_TEST_FN)

  // dlopens the fake (RTLD_LOCAL) and resolves everything above.
  bool Load() {
    handle = dlopen(DEVICESHARE_FAKE_CUDA_LIB, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) return false;
#define FAKE_CUDA_TEST_LOAD(name) \
  name = reinterpret_cast<name##_fn>(dlsym(handle, #name));
    FAKE_CUDA_TEST_ALL(FAKE_CUDA_TEST_LOAD)
    return cuDeviceGraphMemTrim != nullptr && cuInit != nullptr;
  }

  void* Symbol(const std::string& name) const {
    return dlsym(handle, name.c_str());
  }

  // cuInit, device 0's primary context made current.
  CUresult Start(CUcontext* ctx_out = nullptr) {
    CUresult result = cuInit(0);
    if (result != CUDA_SUCCESS) return result;
    CUcontext ctx = nullptr;
    result = cuDevicePrimaryCtxRetain(&ctx, 0);
    if (result != CUDA_SUCCESS) return result;
    if (ctx_out != nullptr) *ctx_out = ctx;
    return cuCtxSetCurrent(ctx);
  }

  uint64_t FreeBytes() {
    size_t free_bytes = 0;
    size_t total = 0;
    EXPECT_EQ(cuMemGetInfo_v2(&free_bytes, &total), CUDA_SUCCESS);
    return free_bytes;
  }
  uint64_t UsedBytes() {
    size_t free_bytes = 0;
    size_t total = 0;
    EXPECT_EQ(cuMemGetInfo_v2(&free_bytes, &total), CUDA_SUCCESS);
    return total - free_bytes;
  }
  uint64_t PoolAttr(CUmemoryPool pool, CUmemPool_attribute attr) {
    cuuint64_t value = ~cuuint64_t{0};
    EXPECT_EQ(cuMemPoolGetAttribute(pool, attr, &value), CUDA_SUCCESS);
    return value;
  }
  uint64_t GraphAttr(CUgraphMem_attribute attr) {
    cuuint64_t value = ~cuuint64_t{0};
    EXPECT_EQ(cuDeviceGetGraphMemAttribute(0, attr, &value), CUDA_SUCCESS);
    return value;
  }
  CUfunction Spin(const char* name) {
    CUmodule module = nullptr;
    static const char kImage[] = "fake cubin";
    EXPECT_EQ(cuModuleLoadData(&module, kImage), CUDA_SUCCESS);
    CUfunction function = nullptr;
    EXPECT_EQ(cuModuleGetFunction(&function, module, name), CUDA_SUCCESS);
    return function;
  }
};

// Runs `body` in a forked child with `env` set (nullptr values unset) and
// returns its exit status: 0 when no expectation failed there.
int RunInChild(const std::vector<std::pair<std::string, const char*>>& env,
               const std::function<void(Driver&)>& body) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    alarm(60);  // never hang the suite
    for (const auto& [name, value] : env) {
      if (value == nullptr) {
        unsetenv(name.c_str());
      } else {
        setenv(name.c_str(), value, 1);
      }
    }
    Driver driver;
    if (!driver.Load()) {
      std::fprintf(stderr, "dlopen %s: %s\n", DEVICESHARE_FAKE_CUDA_LIB,
                   dlerror());
      _exit(3);
    }
    body(driver);
    std::fflush(nullptr);
    _exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// RunInChild, expecting the child to pass (its own failures are printed
// where they happen).
void ExpectChildPasses(
    const std::vector<std::pair<std::string, const char*>>& env,
    const std::function<void(Driver&)>& body) {
  EXPECT_EQ(RunInChild(env, body), 0) << "the child failed; see above";
}

// The usual world: one 1 GiB GPU, no CUDA_VISIBLE_DEVICES, `state` shared.
std::vector<std::pair<std::string, const char*>> World(
    const std::string& devices, const std::string& state) {
  return {{"FAKE_CUDA_DEVICES", strdup(devices.c_str())},
          {"CUDA_VISIBLE_DEVICES", nullptr},
          {"FAKE_CUDA_STATE", state.empty() ? nullptr : strdup(state.c_str())}};
}

class FakeCudaTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = folder_.path();
    ASSERT_FALSE(dir_.empty());
    state_ = dir_ + "/state";
  }

  ::deviceshare::testing::TempFolder folder_{"fake_cuda_test."};
  std::string dir_;
  std::string state_;
};

// One pipe whose read end a child blocks on until the parent closes the
// write end (or writes).
struct Gate {
  int fds[2] = {-1, -1};
  Gate() { EXPECT_EQ(pipe(fds), 0); }
  ~Gate() {
    Close(0);
    Close(1);
  }
  void Close(int end) {
    if (fds[end] >= 0) close(fds[end]);
    fds[end] = -1;
  }
  void Wait() {
    char byte;
    while (read(fds[0], &byte, 1) < 0 && errno == EINTR) {
    }
  }
  void Signal() { EXPECT_EQ(write(fds[1], "x", 1), 1); }
};

TEST_F(FakeCudaTest, ExportsEveryFunctionTypeOfTheAbiHeader) {
  std::ifstream header(std::string(DEVICESHARE_EXAMPLES_DIR) +
                       "/../lib/gpu_abi/include/gpu_abi/cuda_abi.h");
  ASSERT_TRUE(header);
  std::stringstream text;
  text << header.rdbuf();
  const std::string content = text.str();
  std::set<std::string> names;
  const std::regex typedef_re(R"(\(\*(cu\w+)_fn\))");
  for (std::sregex_iterator it(content.begin(), content.end(), typedef_re);
       it != std::sregex_iterator(); ++it) {
    names.insert((*it)[1]);
  }
  ASSERT_GT(names.size(), 70u);
  ExpectChildPasses({}, [&](Driver& cuda) {
    for (const std::string& name : names) {
      void* exported = cuda.Symbol(name);
      EXPECT_NE(exported, nullptr) << name << " is not exported";
      void* found = nullptr;
      EXPECT_EQ(
          cuda.cuGetProcAddress_v2(name.c_str(), &found, 13000, 0, nullptr),
          CUDA_SUCCESS)
          << name;
      // A base name may be bound to its newer version.
      EXPECT_TRUE(found == exported || found == cuda.Symbol(name + "_v2"))
          << name;
    }
    for (const char* name :
         {"cuLaunchKernel", "cuLaunchKernelEx", "cuLaunchCooperativeKernel",
          "cuGraphLaunch", "cuMemAllocAsync", "cuMemAllocFromPoolAsync",
          "cuMemFreeAsync", "cuEventRecord", "cuStreamSynchronize"}) {
      EXPECT_NE(cuda.Symbol(std::string(name) + "_ptsz"), nullptr) << name;
    }
    // Nothing but the driver's names leaks out.
    EXPECT_EQ(cuda.Symbol("_ZN9fake_cuda8TheWorldEv"), nullptr);
  });
}

TEST_F(FakeCudaTest, GetProcAddressBindsBaseNamesLikeTheDriver) {
  ExpectChildPasses({}, [](Driver& cuda) {
    // Works before cuInit, as the runtime needs.
    const auto get = [&](const char* name, int version,
                         cuuint64_t flags = 0) -> void* {
      void* fn = reinterpret_cast<void*>(1);
      CUdriverProcAddressQueryResult status = -1;
      const CUresult result =
          cuda.cuGetProcAddress_v2(name, &fn, version, flags, &status);
      EXPECT_EQ(result == CUDA_SUCCESS, status == CU_GET_PROC_ADDRESS_SUCCESS)
          << name;
      if (result != CUDA_SUCCESS) {
        EXPECT_EQ(fn, nullptr) << name;
      }
      return fn;
    };
    const auto sym = [&](const char* name) { return cuda.Symbol(name); };
    EXPECT_EQ(get("cuMemAlloc", 12000), sym("cuMemAlloc_v2"));
    EXPECT_EQ(get("cuMemAlloc", 3020), sym("cuMemAlloc_v2"));
    EXPECT_EQ(get("cuMemAlloc_v2", 12000), sym("cuMemAlloc_v2"));
    EXPECT_EQ(get("cuMemFree", 13000), sym("cuMemFree_v2"));
    EXPECT_EQ(get("cuMemGetInfo", 13000), sym("cuMemGetInfo_v2"));
    EXPECT_EQ(get("cuDeviceTotalMem", 13000), sym("cuDeviceTotalMem_v2"));
    EXPECT_EQ(get("cuMemsetD8", 13000), sym("cuMemsetD8_v2"));
    EXPECT_EQ(get("cuStreamDestroy", 4000), sym("cuStreamDestroy_v2"));
    EXPECT_EQ(get("cuCtxPopCurrent", 12000), sym("cuCtxPopCurrent_v2"));
    EXPECT_EQ(get("cuDevicePrimaryCtxRelease", 11000),
              sym("cuDevicePrimaryCtxRelease_v2"));
    EXPECT_EQ(get("cuDeviceGetUuid", 11040), sym("cuDeviceGetUuid_v2"));
    EXPECT_EQ(get("cuDeviceGetUuid", 11030), sym("cuDeviceGetUuid"));
    EXPECT_EQ(get("cuGraphAddKernelNode", 12000),
              sym("cuGraphAddKernelNode_v2"));
    EXPECT_EQ(get("cuGraphInstantiate", 12000),
              sym("cuGraphInstantiateWithFlags"));
    EXPECT_EQ(get("cuEventElapsedTime", 12080), sym("cuEventElapsedTime_v2"));
    EXPECT_EQ(get("cuEventElapsedTime", 12060), sym("cuEventElapsedTime"));
    EXPECT_EQ(get("cuGetProcAddress", 12000), sym("cuGetProcAddress_v2"));
    EXPECT_EQ(get("cuGetProcAddress", 11080), sym("cuGetProcAddress"));
    // Per-thread default stream: the _ptsz twin where one exists.
    const cuuint64_t ptsz = CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM;
    EXPECT_EQ(get("cuLaunchKernel", 12000, ptsz), sym("cuLaunchKernel_ptsz"));
    EXPECT_EQ(get("cuStreamSynchronize", 12000, ptsz),
              sym("cuStreamSynchronize_ptsz"));
    EXPECT_EQ(get("cuMemAllocAsync", 12000, ptsz), sym("cuMemAllocAsync_ptsz"));
    EXPECT_EQ(get("cuLaunchKernel", 12000, CU_GET_PROC_ADDRESS_LEGACY_STREAM),
              sym("cuLaunchKernel"));
    EXPECT_EQ(get("cuMemAlloc", 12000, ptsz), sym("cuMemAlloc_v2"));

    // The legacy ABI the fake does not have, and unknown names.
    void* fn = reinterpret_cast<void*>(1);
    CUdriverProcAddressQueryResult status = -1;
    EXPECT_EQ(cuda.cuGetProcAddress_v2("cuMemAlloc", &fn, 3010, 0, &status),
              CUDA_ERROR_NOT_FOUND);
    EXPECT_EQ(fn, nullptr);
    EXPECT_EQ(status, CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT);
    fn = reinterpret_cast<void*>(1);
    EXPECT_EQ(cuda.cuGetProcAddress_v2("cuNoSuchCall", &fn, 13000, 0, &status),
              CUDA_ERROR_NOT_FOUND);
    EXPECT_EQ(fn, nullptr);
    EXPECT_EQ(status, CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND);
    EXPECT_EQ(cuda.cuGetProcAddress("cuNoSuchCall", &fn, 13000, 0),
              CUDA_ERROR_NOT_FOUND);
    EXPECT_EQ(cuda.cuGetProcAddress("cuInit", nullptr, 13000, 0),
              CUDA_ERROR_INVALID_VALUE);
  });
}

TEST_F(FakeCudaTest, InitReadsTheEnvironmentAndGuardsEveryCall) {
  const std::string err_path = dir_ + "/stderr";
  ExpectChildPasses(
      {{"FAKE_CUDA_DEVICES", nullptr},
       {"CUDA_VISIBLE_DEVICES", nullptr},
       {"FAKE_CUDA_STATE", nullptr}},
      [&](Driver& cuda) {
        int count = -1;
        EXPECT_EQ(cuda.cuDeviceGetCount(&count), CUDA_ERROR_NOT_INITIALIZED);
        CUdeviceptr ptr = 0;
        EXPECT_EQ(cuda.cuMemAlloc_v2(&ptr, 1), CUDA_ERROR_NOT_INITIALIZED);
        int version = 0;
        EXPECT_EQ(cuda.cuDriverGetVersion(&version), CUDA_SUCCESS);
        EXPECT_EQ(version, 13000);
        const char* text = nullptr;
        EXPECT_EQ(cuda.cuGetErrorString(CUDA_ERROR_OUT_OF_MEMORY, &text),
                  CUDA_SUCCESS);
        EXPECT_STREQ(text, "out of memory");
        EXPECT_EQ(cuda.cuGetErrorName(CUDA_ERROR_NOT_READY, &text),
                  CUDA_SUCCESS);
        EXPECT_STREQ(text, "CUDA_ERROR_NOT_READY");
        EXPECT_EQ(cuda.cuGetErrorName(12345, &text), CUDA_ERROR_INVALID_VALUE);
        EXPECT_EQ(text, nullptr);

        EXPECT_EQ(cuda.cuInit(0), CUDA_ERROR_NO_DEVICE);
        // A malformed world is refused, loudly.
        setenv("FAKE_CUDA_DEVICES", "GPU-1234:80:1", 1);
        const int saved = dup(2);
        const int err =
            open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
        dup2(err, 2);
        EXPECT_EQ(cuda.cuInit(0), CUDA_ERROR_INVALID_VALUE);
        dup2(saved, 2);
        close(err);
        std::ifstream in(err_path);
        std::stringstream message;
        message << in.rdbuf();
        EXPECT_NE(message.str().find("GPU-1234:80:1"), std::string::npos)
            << message.str();

        setenv("FAKE_CUDA_DEVICES", Devices().c_str(), 1);
        EXPECT_EQ(cuda.cuInit(1), CUDA_ERROR_INVALID_VALUE);
        ASSERT_EQ(cuda.cuInit(0), CUDA_SUCCESS);
        EXPECT_EQ(cuda.cuDeviceGetCount(nullptr), CUDA_ERROR_INVALID_VALUE);
        EXPECT_EQ(cuda.cuDeviceGetCount(&count), CUDA_SUCCESS);
        EXPECT_EQ(count, 1);
        // Needs a context.
        EXPECT_EQ(cuda.cuMemAlloc_v2(&ptr, 1), CUDA_ERROR_INVALID_CONTEXT);
        CUdevice device = -1;
        EXPECT_EQ(cuda.cuCtxGetDevice(&device), CUDA_ERROR_INVALID_CONTEXT);
        EXPECT_EQ(cuda.cuStreamSynchronize(nullptr),
                  CUDA_ERROR_INVALID_CONTEXT);

        size_t total = 0;
        EXPECT_EQ(cuda.cuDeviceTotalMem_v2(&total, 0), CUDA_SUCCESS);
        EXPECT_EQ(total, 1024 * kMiB);
        EXPECT_EQ(cuda.cuDeviceTotalMem_v2(&total, 1),
                  CUDA_ERROR_INVALID_DEVICE);
        int value = 0;
        EXPECT_EQ(cuda.cuDeviceGetAttribute(
                      &value, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, 0),
                  CUDA_SUCCESS);
        EXPECT_EQ(value, kSms);
        EXPECT_EQ(
            cuda.cuDeviceGetAttribute(
                &value, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, 0),
            CUDA_SUCCESS);
        EXPECT_EQ(value, 2048);
        EXPECT_EQ(cuda.cuDeviceGetAttribute(
                      &value, CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT, 0),
                  CUDA_SUCCESS);
        EXPECT_EQ(value, 512);
        EXPECT_EQ(cuda.cuDeviceGetAttribute(&value, 1, 0),
                  CUDA_ERROR_INVALID_VALUE);
        char name[64] = {};
        EXPECT_EQ(cuda.cuDeviceGetName(name, sizeof(name), 0), CUDA_SUCCESS);
        EXPECT_STREQ(name, "NVIDIA H100 80GB HBM3");
        CUuuid uuid{};
        EXPECT_EQ(cuda.cuDeviceGetUuid(&uuid, 0), CUDA_SUCCESS);
        EXPECT_EQ(static_cast<unsigned char>(uuid.bytes[0]), 0x8f);
        EXPECT_EQ(static_cast<unsigned char>(uuid.bytes[15]), 0x00);
      });
}

TEST_F(FakeCudaTest, ContextsArePerThreadStacksOfRetainedPrimaries) {
  ExpectChildPasses(
      World(Devices() + "," + kUuid1 + ":512:66", ""), [](Driver& cuda) {
        ASSERT_EQ(cuda.cuInit(0), CUDA_SUCCESS);
        CUcontext ctx0 = nullptr;
        CUcontext ctx1 = nullptr;
        ASSERT_EQ(cuda.cuDevicePrimaryCtxRetain(&ctx0, 0), CUDA_SUCCESS);
        ASSERT_EQ(cuda.cuDevicePrimaryCtxRetain(&ctx1, 1), CUDA_SUCCESS);
        EXPECT_NE(ctx0, ctx1);
        CUcontext current = ctx1;
        EXPECT_EQ(cuda.cuCtxGetCurrent(&current), CUDA_SUCCESS);
        EXPECT_EQ(current, nullptr);
        EXPECT_EQ(cuda.cuCtxPushCurrent_v2(ctx0), CUDA_SUCCESS);
        EXPECT_EQ(cuda.cuCtxPushCurrent_v2(ctx1), CUDA_SUCCESS);
        CUdevice device = -1;
        EXPECT_EQ(cuda.cuCtxGetDevice(&device), CUDA_SUCCESS);
        EXPECT_EQ(device, 1);
        size_t free_bytes = 0, total = 0;
        EXPECT_EQ(cuda.cuMemGetInfo_v2(&free_bytes, &total), CUDA_SUCCESS);
        EXPECT_EQ(total, 512 * kMiB);
        EXPECT_EQ(cuda.cuCtxPopCurrent_v2(&current), CUDA_SUCCESS);
        EXPECT_EQ(current, ctx1);
        EXPECT_EQ(cuda.cuCtxGetDevice(&device), CUDA_SUCCESS);
        EXPECT_EQ(device, 0);
        // Another thread starts with no context.
        std::thread([&] {
          CUdevice other = -1;
          EXPECT_EQ(cuda.cuCtxGetDevice(&other), CUDA_ERROR_INVALID_CONTEXT);
        }).join();
        // Released to zero: invalid where still current.
        EXPECT_EQ(cuda.cuDevicePrimaryCtxRelease_v2(0), CUDA_SUCCESS);
        EXPECT_EQ(cuda.cuCtxGetDevice(&device), CUDA_ERROR_INVALID_CONTEXT);
        EXPECT_EQ(cuda.cuDevicePrimaryCtxRelease_v2(0),
                  CUDA_ERROR_INVALID_CONTEXT);
        EXPECT_EQ(cuda.cuCtxSetCurrent(ctx0), CUDA_ERROR_INVALID_CONTEXT);
        EXPECT_EQ(cuda.cuCtxSetCurrent(reinterpret_cast<CUcontext>(0x1234)),
                  CUDA_ERROR_INVALID_CONTEXT);
        EXPECT_EQ(cuda.cuCtxSetCurrent(ctx1), CUDA_SUCCESS);
        EXPECT_EQ(cuda.cuCtxGetDevice(&device), CUDA_SUCCESS);
        EXPECT_EQ(device, 1);
      });
}

TEST_F(FakeCudaTest, VisibleDevicesByIndexAndUuidPrefix) {
  const std::string devices = std::string(kUuid0) + ":1024:10," + kUuid1 +
                              ":2048:20," + kUuid2 + ":4096:30";
  // Expects the SM counts (which name the physical GPUs) in CUDA order.
  const auto expect = [&](const char* visible, std::vector<int> sms) {
    auto env = World(devices, "");
    env[1].second = visible;
    return RunInChild(env, [&](Driver& cuda) {
      if (sms.empty()) {
        EXPECT_EQ(cuda.cuInit(0), CUDA_ERROR_NO_DEVICE) << visible;
        return;
      }
      ASSERT_EQ(cuda.cuInit(0), CUDA_SUCCESS) << visible;
      int count = 0;
      EXPECT_EQ(cuda.cuDeviceGetCount(&count), CUDA_SUCCESS);
      ASSERT_EQ(count, static_cast<int>(sms.size())) << visible;
      for (int i = 0; i < count; ++i) {
        int value = 0;
        EXPECT_EQ(cuda.cuDeviceGetAttribute(
                      &value, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, i),
                  CUDA_SUCCESS);
        EXPECT_EQ(value, sms[i]) << visible << " ordinal " << i;
      }
      CUdevice device = 0;
      EXPECT_EQ(cuda.cuDeviceGet(&device, count), CUDA_ERROR_INVALID_DEVICE);
    });
  };
  EXPECT_EQ(expect(nullptr, {10, 20, 30}), 0);
  EXPECT_EQ(expect("2,0", {30, 10}), 0);
  EXPECT_EQ(expect("GPU-1a,2", {20, 30}), 0);
  EXPECT_EQ(expect(kUuid2, {30}), 0);
  // An invalid entry hides itself and all after it.
  EXPECT_EQ(expect("1,7,0", {20}), 0);
  EXPECT_EQ(expect("0,GPU-8,1", {10}), 0);  // ambiguous prefix
  EXPECT_EQ(expect("1,1,0", {20}), 0);      // repeated
  EXPECT_EQ(expect("-1", {}), 0);
  EXPECT_EQ(expect("", {}), 0);
}

TEST_F(FakeCudaTest, MemcpyRoundTripThroughDeviceMemory) {
  ExpectChildPasses(World(Devices(), ""), [](Driver& cuda) {
    ASSERT_EQ(cuda.Start(), CUDA_SUCCESS);
    EXPECT_EQ(cuda.UsedBytes(), 0u);
    CUdeviceptr ptr = 0;
    EXPECT_EQ(cuda.cuMemAlloc_v2(nullptr, 16), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cuda.cuMemAlloc_v2(&ptr, 0), CUDA_ERROR_INVALID_VALUE);
    ASSERT_EQ(cuda.cuMemAlloc_v2(&ptr, 3 * kMiB), CUDA_SUCCESS);
    EXPECT_EQ(cuda.UsedBytes(), 4 * kMiB);  // 2 MiB pages
    std::vector<unsigned char> in(3 * kMiB);
    for (size_t i = 0; i < in.size(); ++i) in[i] = i * 7 + 3;
    EXPECT_EQ(cuda.cuMemcpyHtoD_v2(ptr, in.data(), in.size()), CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuMemsetD8_v2(ptr + 100, 0xAB, 50), CUDA_SUCCESS);
    std::vector<unsigned char> out(in.size());
    EXPECT_EQ(cuda.cuMemcpyDtoH_v2(out.data(), ptr, out.size()), CUDA_SUCCESS);
    std::fill(in.begin() + 100, in.begin() + 150, 0xAB);
    EXPECT_EQ(in, out);
    // Past the end of the allocation, or not one at all.
    EXPECT_EQ(cuda.cuMemcpyHtoD_v2(ptr + 1, in.data(), in.size()),
              CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cuda.cuMemcpyDtoH_v2(
                  out.data(), reinterpret_cast<CUdeviceptr>(out.data()), 8),
              CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cuda.cuMemsetD8_v2(ptr + 3 * kMiB, 0, 1),
              CUDA_ERROR_INVALID_VALUE);

    CUdeviceptr pitched = 0;
    size_t pitch = 0;
    EXPECT_EQ(cuda.cuMemAllocPitch_v2(&pitched, &pitch, 1000, 100, 3),
              CUDA_ERROR_INVALID_VALUE);
    ASSERT_EQ(cuda.cuMemAllocPitch_v2(&pitched, &pitch, 1000, 3000, 4),
              CUDA_SUCCESS);
    EXPECT_EQ(pitch, 1024u);
    EXPECT_EQ(cuda.UsedBytes(), 8 * kMiB);  // 3000 KiB -> 4 MiB
    CUdeviceptr managed = 0;
    EXPECT_EQ(cuda.cuMemAllocManaged(&managed, 10, 0),
              CUDA_ERROR_INVALID_VALUE);
    ASSERT_EQ(cuda.cuMemAllocManaged(&managed, 10, 1), CUDA_SUCCESS);
    EXPECT_EQ(cuda.UsedBytes(), 10 * kMiB);

    EXPECT_EQ(cuda.cuMemFree_v2(ptr), CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuMemFree_v2(ptr), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cuda.cuMemFree_v2(pitched + 8), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cuda.cuMemFree_v2(pitched), CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuMemFree_v2(managed), CUDA_SUCCESS);
    EXPECT_EQ(cuda.UsedBytes(), 0u);
  });
}

TEST_F(FakeCudaTest, OutOfMemoryAtThePhysicalTotalAcrossProcesses) {
  const auto env = World(Devices(1024), state_);
  Gate holding;
  Gate release;
  const pid_t holder = fork();
  if (holder == 0) {
    holding.Close(0);
    release.Close(1);
    const int status = RunInChild(env, [&](Driver& cuda) {
      ASSERT_EQ(cuda.Start(), CUDA_SUCCESS);
      CUdeviceptr ptr = 0;
      // 599 MiB takes 600 MiB of 2 MiB pages.
      ASSERT_EQ(cuda.cuMemAlloc_v2(&ptr, 599 * kMiB), CUDA_SUCCESS);
      holding.Signal();
      release.Wait();
    });
    _exit(status);
  }
  holding.Close(1);
  release.Close(0);
  holding.Wait();

  fake_cuda::StateReader reader;
  ASSERT_TRUE(reader.Open(state_));
  EXPECT_EQ(reader.PhysicalUsed(kUuid0), 600 * kMiB);
  ExpectChildPasses(env, [](Driver& cuda) {
    ASSERT_EQ(cuda.Start(), CUDA_SUCCESS);
    EXPECT_EQ(cuda.FreeBytes(), 424 * kMiB);
    CUdeviceptr ptr = 0;
    EXPECT_EQ(cuda.cuMemAlloc_v2(&ptr, 425 * kMiB), CUDA_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(cuda.cuMemAlloc_v2(&ptr, 424 * kMiB), CUDA_SUCCESS);
    EXPECT_EQ(cuda.FreeBytes(), 0u);
    EXPECT_EQ(cuda.cuMemAlloc_v2(&ptr, 1), CUDA_ERROR_OUT_OF_MEMORY);
    CUDA_ARRAY_DESCRIPTOR desc{1024, 1, CU_AD_FORMAT_FLOAT, 1};
    CUarray array = nullptr;
    EXPECT_EQ(cuda.cuArrayCreate_v2(&array, &desc), CUDA_ERROR_OUT_OF_MEMORY);
    // Exits holding it: the driver frees a dead
    // process's memory.
  });
  EXPECT_EQ(reader.PhysicalUsed(kUuid0), 600 * kMiB);

  release.Close(1);
  int status = 0;
  waitpid(holder, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_EQ(reader.PhysicalUsed(kUuid0), 0u);
  ExpectChildPasses(env, [](Driver& cuda) {
    ASSERT_EQ(cuda.Start(), CUDA_SUCCESS);
    EXPECT_EQ(cuda.FreeBytes(), 1024 * kMiB);
  });
}

TEST_F(FakeCudaTest, RacingProcessesNeverExceedThePhysicalTotal) {
  constexpr int kProcesses = 4;
  const auto env = World(Devices(256), state_);
  Gate counts;
  Gate release;
  std::vector<pid_t> pids;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = fork();
    if (pid == 0) {
      counts.Close(0);
      release.Close(1);
      _exit(RunInChild(env, [&](Driver& cuda) {
        ASSERT_EQ(cuda.Start(), CUDA_SUCCESS);
        unsigned char got = 0;
        CUdeviceptr ptr = 0;
        while (cuda.cuMemAlloc_v2(&ptr, 1 + got % 3) == CUDA_SUCCESS) ++got;
        EXPECT_EQ(write(counts.fds[1], &got, 1), 1);
        release.Wait();
      }));
    }
    pids.push_back(pid);
  }
  counts.Close(1);
  release.Close(0);
  int total = 0;
  for (int p = 0; p < kProcesses; ++p) {
    unsigned char got = 0;
    ASSERT_EQ(read(counts.fds[0], &got, 1), 1);
    total += got;
  }
  // Every 2 MiB page handed out exactly once.
  EXPECT_EQ(total, 128);
  fake_cuda::StateReader reader;
  ASSERT_TRUE(reader.Open(state_));
  EXPECT_EQ(reader.PhysicalUsed(kUuid0), 256 * kMiB);
  release.Close(1);
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  EXPECT_EQ(reader.PhysicalUsed(kUuid0), 0u);
}

TEST_F(FakeCudaTest, PoolsGrowIn32MiBChunksAndReleaseAtSync) {
  ExpectChildPasses(World(Devices(256), ""), [](Driver& cuda) {
    ASSERT_EQ(cuda.Start(), CUDA_SUCCESS);
    CUmemoryPool pool = nullptr;
    CUmemoryPool current = nullptr;
    ASSERT_EQ(cuda.cuDeviceGetDefaultMemPool(&pool, 0), CUDA_SUCCESS);
    ASSERT_EQ(cuda.cuDeviceGetMemPool(&current, 0), CUDA_SUCCESS);
    EXPECT_EQ(pool, current);
    CUstream stream = nullptr;
    ASSERT_EQ(cuda.cuStreamCreate(&stream, 0), CUDA_SUCCESS);

    CUdeviceptr small = 0;
    CUdeviceptr large = 0;
    ASSERT_EQ(cuda.cuMemAllocAsync(&small, 1 * kMiB, stream), CUDA_SUCCESS);
    EXPECT_EQ(cuda.PoolAttr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 2 * kMiB);
    EXPECT_EQ(cuda.PoolAttr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT),
              32 * kMiB);
    EXPECT_EQ(cuda.UsedBytes(), 32 * kMiB);
    ASSERT_EQ(cuda.cuMemAllocAsync(&large, 40 * kMiB, stream), CUDA_SUCCESS);
    EXPECT_EQ(cuda.PoolAttr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 42 * kMiB);
    EXPECT_EQ(cuda.PoolAttr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT),
              64 * kMiB);
    // Pool memory is real memory too.
    const char text[] = "pool";
    EXPECT_EQ(cuda.cuMemcpyHtoD_v2(large, text, sizeof(text)), CUDA_SUCCESS);

    ASSERT_EQ(cuda.cuMemFreeAsync(small, stream), CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuMemFreeAsync(small, stream), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cuda.PoolAttr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 40 * kMiB);
    EXPECT_EQ(cuda.PoolAttr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT),
              64 * kMiB);
    ASSERT_EQ(cuda.cuStreamSynchronize(stream), CUDA_SUCCESS);
    EXPECT_EQ(cuda.PoolAttr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT),
              40 * kMiB);
    EXPECT_EQ(cuda.UsedBytes(), 40 * kMiB);

    // Above the threshold only is given back.
    cuuint64_t threshold = 100 * kMiB;
    ASSERT_EQ(cuda.cuMemPoolSetAttribute(
                  pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD, &threshold),
              CUDA_SUCCESS);
    EXPECT_EQ(cuda.PoolAttr(pool, CU_MEMPOOL_ATTR_RELEASE_THRESHOLD),
              100 * kMiB);
    ASSERT_EQ(cuda.cuMemFreeAsync(large, nullptr), CUDA_SUCCESS);
    ASSERT_EQ(cuda.cuCtxSynchronize(), CUDA_SUCCESS);
    EXPECT_EQ(cuda.PoolAttr(pool, CU_MEMPOOL_ATTR_USED_MEM_CURRENT), 0u);
    EXPECT_EQ(cuda.PoolAttr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT),
              40 * kMiB);
    ASSERT_EQ(cuda.cuMemPoolTrimTo(pool, 0), CUDA_SUCCESS);
    EXPECT_EQ(cuda.PoolAttr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT), 0u);
    EXPECT_EQ(cuda.UsedBytes(), 0u);

    EXPECT_EQ(cuda.PoolAttr(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH), 42 * kMiB);
    EXPECT_EQ(cuda.PoolAttr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH),
              64 * kMiB);
    cuuint64_t zero = 0;
    cuuint64_t five = 5;
    EXPECT_EQ(
        cuda.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &five),
        CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(
        cuda.cuMemPoolSetAttribute(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH, &zero),
        CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuMemPoolSetAttribute(
                  pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH, &zero),
              CUDA_SUCCESS);
    EXPECT_EQ(cuda.PoolAttr(pool, CU_MEMPOOL_ATTR_USED_MEM_HIGH), 0u);
    EXPECT_EQ(cuda.PoolAttr(pool, CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH), 0u);
    EXPECT_EQ(cuda.cuMemPoolSetAttribute(
                  pool, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, &zero),
              CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cuda.cuMemPoolDestroy(pool), CUDA_ERROR_INVALID_VALUE);

    // An explicit pool: growth that physical memory cannot cover is
    // OOM.
    CUmemPoolProps props{};
    props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    props.location.id = 1;
    CUmemoryPool mine = nullptr;
    EXPECT_EQ(cuda.cuMemPoolCreate(&mine, &props), CUDA_ERROR_INVALID_VALUE);
    props.location.id = 0;
    ASSERT_EQ(cuda.cuMemPoolCreate(&mine, &props), CUDA_SUCCESS);
    CUdeviceptr a = 0;
    CUdeviceptr b = 0;
    ASSERT_EQ(cuda.cuMemAllocFromPoolAsync(&a, 250 * kMiB, mine, stream),
              CUDA_SUCCESS);
    // 250 + 6 MiB still fit the 256 MiB reserve; 8 more need a chunk.
    CUdeviceptr c = 0;
    ASSERT_EQ(cuda.cuMemAllocFromPoolAsync(&c, 6 * kMiB, mine, stream),
              CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuMemFreeAsync(c, stream), CUDA_SUCCESS);
    EXPECT_EQ(cuda.PoolAttr(mine, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT),
              256 * kMiB);
    EXPECT_EQ(cuda.cuMemAllocFromPoolAsync(&b, 8 * kMiB, mine, stream),
              CUDA_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(cuda.cuMemAllocAsync(&b, 1, stream), CUDA_ERROR_OUT_OF_MEMORY);
    // Destroyed with an allocation outstanding: the memory goes when
    // the allocation does.
    EXPECT_EQ(cuda.cuMemPoolDestroy(mine), CUDA_SUCCESS);
    EXPECT_EQ(cuda.UsedBytes(), 250 * kMiB);
    EXPECT_EQ(cuda.cuMemFreeAsync(a, stream), CUDA_SUCCESS);
    EXPECT_EQ(cuda.UsedBytes(), 0u);
    EXPECT_EQ(cuda.cuMemPoolTrimTo(mine, 0), CUDA_ERROR_INVALID_HANDLE);
  });
}

TEST_F(FakeCudaTest, GraphMemoryComesFromTheDeviceGraphPool) {
  ExpectChildPasses(World(Devices(256), ""), [](Driver& cuda) {
    ASSERT_EQ(cuda.Start(), CUDA_SUCCESS);
    CUfunction spin = cuda.Spin("spin_100us");
    CUgraph graph = nullptr;
    ASSERT_EQ(cuda.cuGraphCreate(&graph, 0), CUDA_SUCCESS);
    CUDA_MEM_ALLOC_NODE_PARAMS alloc{};
    alloc.poolProps.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
    alloc.poolProps.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    alloc.poolProps.location.id = 0;
    alloc.bytesize = 10 * kMiB + 1;
    CUgraphNode alloc_node = nullptr;
    ASSERT_EQ(
        cuda.cuGraphAddMemAllocNode(&alloc_node, graph, nullptr, 0, &alloc),
        CUDA_SUCCESS);
    EXPECT_NE(alloc.dptr, 0u);
    CUDA_KERNEL_NODE_PARAMS kernel{};
    kernel.func = spin;
    kernel.gridDimX = kernel.gridDimY = kernel.gridDimZ = 1;
    kernel.blockDimX = 128;
    kernel.blockDimY = kernel.blockDimZ = 1;
    CUgraphNode kernel_node = nullptr;
    ASSERT_EQ(cuda.cuGraphAddKernelNode_v2(&kernel_node, graph, &alloc_node, 1,
                                           &kernel),
              CUDA_SUCCESS);
    EXPECT_EQ(cuda.GraphAttr(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT), 0u);
    EXPECT_EQ(cuda.UsedBytes(), 0u);

    CUgraphExec exec = nullptr;
    ASSERT_EQ(cuda.cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);
    EXPECT_EQ(cuda.GraphAttr(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT), 12 * kMiB);
    EXPECT_EQ(cuda.GraphAttr(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT),
              12 * kMiB);
    EXPECT_EQ(cuda.UsedBytes(), 12 * kMiB);
    const uint64_t value = 42;
    EXPECT_EQ(cuda.cuMemcpyHtoD_v2(alloc.dptr, &value, sizeof(value)),
              CUDA_SUCCESS);
    ASSERT_EQ(cuda.cuGraphLaunch(exec, nullptr), CUDA_SUCCESS);
    ASSERT_EQ(cuda.cuCtxSynchronize(), CUDA_SUCCESS);

    ASSERT_EQ(cuda.cuGraphExecDestroy(exec), CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuGraphExecDestroy(exec), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(cuda.GraphAttr(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT), 0u);
    EXPECT_EQ(cuda.GraphAttr(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT),
              12 * kMiB);
    EXPECT_EQ(cuda.GraphAttr(CU_GRAPH_MEM_ATTR_USED_MEM_HIGH), 12 * kMiB);
    EXPECT_EQ(cuda.GraphAttr(CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH), 12 * kMiB);
    EXPECT_EQ(cuda.UsedBytes(), 12 * kMiB);
    // A second instantiation reuses the reserve.
    ASSERT_EQ(cuda.cuGraphInstantiateWithFlags(&exec, graph, 0), CUDA_SUCCESS);
    EXPECT_EQ(cuda.GraphAttr(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT),
              12 * kMiB);
    ASSERT_EQ(cuda.cuGraphExecDestroy(exec), CUDA_SUCCESS);
    ASSERT_EQ(cuda.cuDeviceGraphMemTrim(0), CUDA_SUCCESS);
    EXPECT_EQ(cuda.GraphAttr(CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT), 0u);
    EXPECT_EQ(cuda.UsedBytes(), 0u);
    cuuint64_t ignored = 0;
    EXPECT_EQ(cuda.cuDeviceGetGraphMemAttribute(0, 99, &ignored),
              CUDA_ERROR_INVALID_VALUE);

    // A graph whose allocations do not fit.
    CUgraph big = nullptr;
    ASSERT_EQ(cuda.cuGraphCreate(&big, 0), CUDA_SUCCESS);
    alloc.bytesize = 300 * kMiB;
    ASSERT_EQ(cuda.cuGraphAddMemAllocNode(&alloc_node, big, nullptr, 0, &alloc),
              CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuGraphInstantiateWithFlags(&exec, big, 0),
              CUDA_ERROR_OUT_OF_MEMORY);
    EXPECT_EQ(cuda.GraphAttr(CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT), 0u);
    EXPECT_EQ(cuda.cuGraphDestroy(big), CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuGraphDestroy(graph), CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuGraphDestroy(graph), CUDA_ERROR_INVALID_HANDLE);
  });
}

TEST_F(FakeCudaTest, VmmChargesCreateNotMapAndArraysChargeTheirShape) {
  ExpectChildPasses(World(Devices(256), ""), [](Driver& cuda) {
    ASSERT_EQ(cuda.Start(), CUDA_SUCCESS);
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = 0;
    size_t granularity = 0;
    ASSERT_EQ(cuda.cuMemGetAllocationGranularity(
                  &granularity, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
              CUDA_SUCCESS);
    EXPECT_EQ(granularity, 2 * kMiB);
    CUmemGenericAllocationHandle handle = 0;
    EXPECT_EQ(cuda.cuMemCreate(&handle, 3 * kMiB, &prop, 0),
              CUDA_ERROR_INVALID_VALUE);
    prop.location.id = 3;
    EXPECT_EQ(cuda.cuMemCreate(&handle, 4 * kMiB, &prop, 0),
              CUDA_ERROR_INVALID_VALUE);
    prop.location.id = 0;
    EXPECT_EQ(cuda.cuMemCreate(&handle, 258 * kMiB, &prop, 0),
              CUDA_ERROR_OUT_OF_MEMORY);
    ASSERT_EQ(cuda.cuMemCreate(&handle, 4 * kMiB, &prop, 0), CUDA_SUCCESS);
    EXPECT_EQ(cuda.UsedBytes(), 4 * kMiB);
    CUdeviceptr va = 0;
    ASSERT_EQ(cuda.cuMemAddressReserve(&va, 8 * kMiB, 0, 0, 0), CUDA_SUCCESS);
    EXPECT_EQ(va % (2 * kMiB), 0u);
    ASSERT_EQ(cuda.cuMemMap(va + 2 * kMiB, 4 * kMiB, 0, handle, 0),
              CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuMemMap(va, 4 * kMiB, 0, handle, 0),
              CUDA_ERROR_INVALID_VALUE);  // overlaps
    EXPECT_EQ(cuda.UsedBytes(), 4 * kMiB);
    const uint32_t word = 0xC0FFEE;
    uint32_t back = 0;
    EXPECT_EQ(cuda.cuMemcpyHtoD_v2(va + 3 * kMiB, &word, 4), CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuMemcpyDtoH_v2(&back, va + 3 * kMiB, 4), CUDA_SUCCESS);
    EXPECT_EQ(back, word);
    EXPECT_EQ(cuda.cuMemcpyHtoD_v2(va, &word, 4), CUDA_ERROR_INVALID_VALUE);
    // Released while mapped: uncharged once unmapped.
    ASSERT_EQ(cuda.cuMemRelease(handle), CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuMemRelease(handle), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cuda.UsedBytes(), 4 * kMiB);
    ASSERT_EQ(cuda.cuMemUnmap(va + 2 * kMiB, 4 * kMiB), CUDA_SUCCESS);
    EXPECT_EQ(cuda.UsedBytes(), 0u);
    EXPECT_EQ(cuda.cuMemAddressFree(va, 4 * kMiB), CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cuda.cuMemAddressFree(va, 8 * kMiB), CUDA_SUCCESS);

    // 1024 x 1024 x float4 = 16 MiB.
    CUDA_ARRAY_DESCRIPTOR desc{1024, 1024, CU_AD_FORMAT_FLOAT, 4};
    CUarray array = nullptr;
    ASSERT_EQ(cuda.cuArrayCreate_v2(&array, &desc), CUDA_SUCCESS);
    EXPECT_EQ(cuda.UsedBytes(), 16 * kMiB);
    desc.NumChannels = 3;
    CUarray bad = nullptr;
    EXPECT_EQ(cuda.cuArrayCreate_v2(&bad, &desc), CUDA_ERROR_INVALID_VALUE);
    // 100 x 100 x 100 x half = 1.9 MB -> 2 MiB.
    CUDA_ARRAY3D_DESCRIPTOR desc3{100, 100, 100, CU_AD_FORMAT_HALF, 1, 0};
    CUarray volume = nullptr;
    ASSERT_EQ(cuda.cuArray3DCreate_v2(&volume, &desc3), CUDA_SUCCESS);
    EXPECT_EQ(cuda.UsedBytes(), 18 * kMiB);
    // Levels of 2048^2 bytes: 4 MiB + 1 MiB + 256 KiB -> 6 MiB.
    CUDA_ARRAY3D_DESCRIPTOR mip{2048, 2048, 0, CU_AD_FORMAT_UNSIGNED_INT8,
                                1,    0};
    CUmipmappedArray mipmapped = nullptr;
    ASSERT_EQ(cuda.cuMipmappedArrayCreate(&mipmapped, &mip, 3), CUDA_SUCCESS);
    EXPECT_EQ(cuda.UsedBytes(), 24 * kMiB);
    EXPECT_EQ(cuda.cuArrayDestroy(reinterpret_cast<CUarray>(mipmapped)),
              CUDA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(cuda.cuMipmappedArrayDestroy(mipmapped), CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuArrayDestroy(volume), CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuArrayDestroy(array), CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuArrayDestroy(array), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(cuda.UsedBytes(), 0u);
  });
}

TEST_F(FakeCudaTest, KernelsRunForTheirWavesOnTheVirtualClock) {
  ExpectChildPasses(World(Devices(), state_), [&](Driver& cuda) {
    ASSERT_EQ(cuda.Start(), CUDA_SUCCESS);
    CUmodule module = nullptr;
    EXPECT_EQ(cuda.cuModuleLoadData(&module, nullptr),
              CUDA_ERROR_INVALID_VALUE);
    ASSERT_EQ(cuda.cuModuleLoadData(&module, "x"), CUDA_SUCCESS);
    CUfunction other = nullptr;
    EXPECT_EQ(cuda.cuModuleGetFunction(&other, module, "gemm"),
              CUDA_ERROR_NOT_FOUND);
    CUfunction spin = cuda.Spin("spin_1000us");
    CUstream stream = nullptr;
    ASSERT_EQ(cuda.cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING),
              CUDA_SUCCESS);
    CUevent start = nullptr;
    CUevent end = nullptr;
    ASSERT_EQ(cuda.cuEventCreate(&start, CU_EVENT_DEFAULT), CUDA_SUCCESS);
    ASSERT_EQ(cuda.cuEventCreate(&end, CU_EVENT_DEFAULT), CUDA_SUCCESS);

    // Not done until the virtual clock passes its end (20 ms on).
    CUfunction long_spin = cuda.Spin("spin_20000us");
    EXPECT_EQ(cuda.cuEventRecord(start, stream), CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuLaunchKernel(long_spin, 1, 1, 1, 1, 1, 1, 0, stream,
                                  nullptr, nullptr),
              CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuEventRecord(end, stream), CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuEventQuery(end), CUDA_ERROR_NOT_READY);
    float pending = -1;
    EXPECT_EQ(cuda.cuEventElapsedTime_v2(&pending, start, end),
              CUDA_ERROR_NOT_READY);
    EXPECT_EQ(cuda.cuEventSynchronize(end), CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuEventQuery(end), CUDA_SUCCESS);

    // Elapsed virtual time of one launch, in ms.
    const auto time = [&](unsigned grid, unsigned block) {
      EXPECT_EQ(cuda.cuEventRecord(start, stream), CUDA_SUCCESS);
      EXPECT_EQ(cuda.cuLaunchKernel(spin, grid, 1, 1, block, 1, 1, 0, stream,
                                    nullptr, nullptr),
                CUDA_SUCCESS);
      EXPECT_EQ(cuda.cuEventRecord(end, stream), CUDA_SUCCESS);
      float ms = -1;
      EXPECT_EQ(cuda.cuEventSynchronize(end), CUDA_SUCCESS);
      EXPECT_EQ(cuda.cuEventQuery(end), CUDA_SUCCESS);
      EXPECT_EQ(cuda.cuEventElapsedTime_v2(&ms, start, end), CUDA_SUCCESS);
      return ms;
    };
    // 1024-thread blocks: 2 per SM, so 2 x SM blocks are one wave.
    EXPECT_NEAR(time(2 * kSms, 1024), 1.0, 0.2);
    EXPECT_NEAR(time(4 * kSms, 1024), 2.0, 0.2);
    EXPECT_NEAR(time(4 * kSms + 1, 1024), 3.0, 0.2);
    // 256-thread blocks: 8 per SM.
    EXPECT_NEAR(time(8 * kSms, 256), 1.0, 0.2);
    // Tiny blocks: at most 32 per SM.
    EXPECT_NEAR(time(33 * kSms, 32), 2.0, 0.2);

    EXPECT_EQ(cuda.cuLaunchKernel(spin, 0, 1, 1, 1, 1, 1, 0, stream, nullptr,
                                  nullptr),
              CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cuda.cuLaunchKernel(spin, 1, 1, 1, 2048, 1, 1, 0, stream, nullptr,
                                  nullptr),
              CUDA_ERROR_INVALID_VALUE);
    EXPECT_EQ(cuda.cuLaunchKernel(reinterpret_cast<CUfunction>(0x99), 1, 1, 1,
                                  1, 1, 1, 0, stream, nullptr, nullptr),
              CUDA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(
        cuda.cuLaunchKernel(spin, 1, 1, 1, 1, 1, 1, 0,
                            reinterpret_cast<CUstream>(0x77), nullptr, nullptr),
        CUDA_ERROR_INVALID_HANDLE);

    // cuLaunchKernelEx on its config's stream; the legacy default
    // stream.
    CUlaunchConfig config{};
    config.gridDimX = 2 * kSms;
    config.gridDimY = config.gridDimZ = 1;
    config.blockDimX = 1024;
    config.blockDimY = config.blockDimZ = 1;
    config.hStream = reinterpret_cast<CUstream>(0x1);
    EXPECT_EQ(cuda.cuEventRecord(start, reinterpret_cast<CUstream>(0x1)),
              CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuLaunchKernelEx(&config, spin, nullptr, nullptr),
              CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuEventRecord(end, nullptr), CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuStreamSynchronize(reinterpret_cast<CUstream>(0x2)),
              CUDA_SUCCESS);
    float ms = 0;
    EXPECT_EQ(cuda.cuEventElapsedTime_v2(&ms, start, end), CUDA_SUCCESS);
    EXPECT_NEAR(ms, 1.0, 0.2);
    CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_ACTIVE;
    EXPECT_EQ(cuda.cuStreamIsCapturing(stream, &capture), CUDA_SUCCESS);
    EXPECT_EQ(capture, CU_STREAM_CAPTURE_STATUS_NONE);

    CUevent untimed = nullptr;
    ASSERT_EQ(cuda.cuEventCreate(&untimed, CU_EVENT_DISABLE_TIMING),
              CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuEventRecord(untimed, stream), CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuEventSynchronize(untimed), CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuEventElapsedTime_v2(&ms, start, untimed),
              CUDA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(cuda.cuEventDestroy_v2(untimed), CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuEventDestroy_v2(untimed), CUDA_ERROR_INVALID_HANDLE);
    EXPECT_EQ(cuda.cuStreamDestroy_v2(stream), CUDA_SUCCESS);
    EXPECT_EQ(cuda.cuStreamDestroy_v2(stream), CUDA_ERROR_INVALID_HANDLE);
  });
  // The ring has the kernels, of the durations their waves give.
  fake_cuda::StateReader reader;
  ASSERT_TRUE(reader.Open(state_));
  std::vector<uint64_t> durations;
  reader.ForEachKernel([&](const fake_cuda::KernelView& kernel) {
    EXPECT_EQ(reader.DeviceUuid(kernel.device), kUuid0);
    durations.push_back(kernel.end_ns - kernel.start_ns);
  });
  EXPECT_EQ(durations,
            (std::vector<uint64_t>{20000000, 1000000, 2000000, 3000000, 1000000,
                                   2000000, 1000000}));
}

TEST_F(FakeCudaTest, TwoProcessesKernelsSerializeOnOneDevice) {
  constexpr int kKernels = 5;
  const auto env = World(Devices(), state_);
  Gate ready;
  Gate go;
  std::vector<pid_t> pids;
  for (int p = 0; p < 2; ++p) {
    const pid_t pid = fork();
    if (pid == 0) {
      ready.Close(0);
      go.Close(1);
      _exit(RunInChild(env, [&](Driver& cuda) {
        ASSERT_EQ(cuda.Start(), CUDA_SUCCESS);
        CUfunction spin = cuda.Spin("spin_2000us");
        ready.Signal();
        go.Wait();
        for (int i = 0; i < kKernels; ++i) {
          EXPECT_EQ(cuda.cuLaunchKernel(spin, kSms, 1, 1, 256, 1, 1, 0, nullptr,
                                        nullptr, nullptr),
                    CUDA_SUCCESS);
        }
        EXPECT_EQ(cuda.cuCtxSynchronize(), CUDA_SUCCESS);
      }));
    }
    pids.push_back(pid);
  }
  ready.Close(1);
  go.Close(0);
  ready.Wait();
  ready.Wait();
  go.Close(1);
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  fake_cuda::StateReader reader;
  ASSERT_TRUE(reader.Open(state_));
  std::vector<fake_cuda::KernelView> kernels;
  std::set<int32_t> processes;
  reader.ForEachKernel([&](const fake_cuda::KernelView& kernel) {
    kernels.push_back(kernel);
    processes.insert(kernel.pid);
  });
  ASSERT_EQ(kernels.size(), 2u * kKernels);
  EXPECT_EQ(processes.size(), 2u);
  std::sort(kernels.begin(), kernels.end(), [](const auto& a, const auto& b) {
    return a.start_ns < b.start_ns;
  });
  for (size_t i = 1; i < kernels.size(); ++i) {
    EXPECT_GE(kernels[i].start_ns, kernels[i - 1].end_ns) << "overlap at " << i;
  }
  EXPECT_GE(kernels.back().end_ns - kernels.front().start_ns,
            2u * kKernels * 2000000);
  EXPECT_GE(reader.BusyUntil(kUuid0).value_or(0), kernels.back().end_ns);
}

TEST_F(FakeCudaTest, NvmlReportsThePhysicalUseOfTheSharedState) {
  const std::string inventory = dir_ + "/inventory.yaml";
  {
    std::ofstream out(inventory);
    out << "gpus:\n- uuid: " << kUuid0
        << "\n  model: NVIDIA H100 80GB HBM3\n  memory_mib: 1024\n"
        << "  sm_count: 132\n";
  }
  auto env = World(Devices(), state_);
  env.push_back({"FAKE_NVML_INVENTORY", inventory.c_str()});
  env.push_back({"FAKE_NVML_STATE", nullptr});
  ExpectChildPasses(env, [](Driver& cuda) {
    ASSERT_EQ(cuda.Start(), CUDA_SUCCESS);
    CUdeviceptr ptr = 0;
    ASSERT_EQ(cuda.cuMemAlloc_v2(&ptr, 99 * kMiB), CUDA_SUCCESS);

    void* nvml = dlopen(DEVICESHARE_FAKE_NVML_LIB, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(nvml, nullptr) << dlerror();
    using Init = nvmlReturn_t (*)();
    using ByIndex = nvmlReturn_t (*)(unsigned, nvmlDevice_t*);
    using MemoryV1 = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_t*);
    using MemoryV2 = nvmlReturn_t (*)(nvmlDevice_t, nvmlMemory_v2_t*);
    auto init = reinterpret_cast<Init>(dlsym(nvml, "nvmlInit"));
    auto by_index =
        reinterpret_cast<ByIndex>(dlsym(nvml, "nvmlDeviceGetHandleByIndex"));
    auto v1 =
        reinterpret_cast<MemoryV1>(dlsym(nvml, "nvmlDeviceGetMemoryInfo"));
    auto v2 =
        reinterpret_cast<MemoryV2>(dlsym(nvml, "nvmlDeviceGetMemoryInfo_v2"));
    ASSERT_TRUE(init && by_index && v1 && v2 &&
                dlsym(nvml, "nvmlInitWithFlags") != nullptr);
    ASSERT_EQ(init(), NVML_SUCCESS);
    nvmlDevice_t device = nullptr;
    ASSERT_EQ(by_index(0, &device), NVML_SUCCESS);
    nvmlMemory_t memory{};
    ASSERT_EQ(v1(device, &memory), NVML_SUCCESS);
    EXPECT_EQ(memory.total, 1024 * kMiB);
    EXPECT_EQ(memory.used, 100 * kMiB);
    EXPECT_EQ(memory.free, 924 * kMiB);
    nvmlMemory_v2_t memory2{};
    EXPECT_EQ(v2(device, &memory2), NVML_ERROR_ARGUMENT_VERSION_MISMATCH);
    memory2.version = nvmlMemory_v2;
    ASSERT_EQ(v2(device, &memory2), NVML_SUCCESS);
    EXPECT_EQ(memory2.used, 100 * kMiB);
    EXPECT_EQ(memory2.reserved + memory2.used + memory2.free, memory2.total);
    EXPECT_EQ(cuda.cuMemFree_v2(ptr), CUDA_SUCCESS);
    ASSERT_EQ(v2(device, &memory2), NVML_SUCCESS);
    EXPECT_EQ(memory2.used, 0u);
  });
}

}  // namespace
