// Modules, functions and launches. Any non-null image loads; a function
// named "spin_<N>us" is a kernel that runs N µs per wave on the virtual
// clock (kernel_clock.cc); other names are not found.
#include <charconv>
#include <cstring>
#include <string_view>

#include "world.h"

using namespace fake_cuda;

namespace {

bool ParseSpin(std::string_view name, uint64_t* us) {
  constexpr std::string_view kPrefix = "spin_";
  constexpr std::string_view kSuffix = "us";
  if (name.size() <= kPrefix.size() + kSuffix.size() ||
      name.substr(0, kPrefix.size()) != kPrefix ||
      name.substr(name.size() - kSuffix.size()) != kSuffix) {
    return false;
  }
  const std::string_view digits = name.substr(
      kPrefix.size(), name.size() - kPrefix.size() - kSuffix.size());
  const auto [end, ec] =
      std::from_chars(digits.data(), digits.data() + digits.size(), *us);
  return ec == std::errc() && end == digits.data() + digits.size();
}

CUresult Launch(CUfunction f, unsigned grid_x, unsigned grid_y, unsigned grid_z,
                unsigned block_x, unsigned block_y, unsigned block_z,
                CUstream hstream) {
  CUresult error = CUDA_SUCCESS;
  Stream* stream = ResolveStream(hstream, &error);
  if (stream == nullptr) return error;
  KernelLaunch launch;
  launch.function = HandleId(Tag::kFunction, f);
  launch.grid[0] = grid_x;
  launch.grid[1] = grid_y;
  launch.grid[2] = grid_z;
  launch.block[0] = block_x;
  launch.block[1] = block_y;
  launch.block[2] = block_z;
  return EnqueueKernel(*stream, launch);
}

CUresult LaunchEx(const CUlaunchConfig* config, CUfunction f) {
  if (config == nullptr || (config->numAttrs > 0 && config->attrs == nullptr)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // Attributes (cooperative included) do not change how long it runs.
  return Launch(f, config->gridDimX, config->gridDimY, config->gridDimZ,
                config->blockDimX, config->blockDimY, config->blockDimZ,
                config->hStream);
}

}  // namespace

FAKE_CUDA_EXPORT CUresult cuModuleLoadData(CUmodule* module,
                                           const void* image) {
  FAKE_CUDA_ENTER();
  const int device = CurrentDevice();
  if (device < 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (module == nullptr || image == nullptr) return CUDA_ERROR_INVALID_VALUE;
  World& world = TheWorld();
  const uint64_t id = world.NewId();
  world.modules[id] = Module{device};
  *module = MakeHandle<CUmodule>(Tag::kModule, id);
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuModuleUnload(CUmodule module) {
  FAKE_CUDA_ENTER();
  World& world = TheWorld();
  const uint64_t id = HandleId(Tag::kModule, module);
  if (world.modules.erase(id) == 0) return CUDA_ERROR_INVALID_HANDLE;
  std::erase_if(world.functions,
                [id](const auto& entry) { return entry.second.module == id; });
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuModuleGetFunction(CUfunction* function,
                                              CUmodule module,
                                              const char* name) {
  FAKE_CUDA_ENTER();
  if (function == nullptr || name == nullptr) return CUDA_ERROR_INVALID_VALUE;
  World& world = TheWorld();
  const uint64_t module_id = HandleId(Tag::kModule, module);
  if (world.modules.count(module_id) == 0) return CUDA_ERROR_INVALID_HANDLE;
  uint64_t us = 0;
  if (!ParseSpin(name, &us)) return CUDA_ERROR_NOT_FOUND;
  const uint64_t id = world.NewId();
  world.functions[id] = Function{module_id, us};
  *function = MakeHandle<CUfunction>(Tag::kFunction, id);
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuLaunchKernel(
    CUfunction f, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
    unsigned int block_x, unsigned int block_y, unsigned int block_z,
    unsigned int shared_bytes, CUstream stream, void** params, void** extra) {
  FAKE_CUDA_ENTER();
  return Launch(f, grid_x, grid_y, grid_z, block_x, block_y, block_z, stream);
}

FAKE_CUDA_EXPORT CUresult cuLaunchKernel_ptsz(
    CUfunction f, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
    unsigned int block_x, unsigned int block_y, unsigned int block_z,
    unsigned int shared_bytes, CUstream stream, void** params, void** extra) {
  return cuLaunchKernel(f, grid_x, grid_y, grid_z, block_x, block_y, block_z,
                        shared_bytes, stream, params, extra);
}

FAKE_CUDA_EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig* config,
                                           CUfunction f, void** params,
                                           void** extra) {
  FAKE_CUDA_ENTER();
  return LaunchEx(config, f);
}

FAKE_CUDA_EXPORT CUresult cuLaunchKernelEx_ptsz(const CUlaunchConfig* config,
                                                CUfunction f, void** params,
                                                void** extra) {
  return cuLaunchKernelEx(config, f, params, extra);
}

FAKE_CUDA_EXPORT CUresult cuLaunchCooperativeKernel(
    CUfunction f, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
    unsigned int block_x, unsigned int block_y, unsigned int block_z,
    unsigned int shared_bytes, CUstream stream, void** params) {
  FAKE_CUDA_ENTER();
  return Launch(f, grid_x, grid_y, grid_z, block_x, block_y, block_z, stream);
}

FAKE_CUDA_EXPORT CUresult cuLaunchCooperativeKernel_ptsz(
    CUfunction f, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
    unsigned int block_x, unsigned int block_y, unsigned int block_z,
    unsigned int shared_bytes, CUstream stream, void** params) {
  return cuLaunchCooperativeKernel(f, grid_x, grid_y, grid_z, block_x, block_y,
                                   block_z, shared_bytes, stream, params);
}
