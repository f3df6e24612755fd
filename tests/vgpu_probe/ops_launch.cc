// launch-loop KERNEL GRID BLOCK SECONDS [sync-every N]: launches KERNEL
// (the fake's "spin_<N>us") with GRID blocks of BLOCK threads for SECONDS
// of wall time, the way --launch= says, synchronizing every N launches (8
// by default) so that the queue stays shallow, as a training loop's does.
#include "probe.h"

namespace vgpu_probe {
namespace {

constexpr long long kDefaultSyncEvery = 8;

struct LoopArgs {
  std::string kernel;
  long long grid = 0;
  long long block = 0;
  long long seconds = 0;
  long long sync_every = kDefaultSyncEvery;
};

bool Parse(const Args& args, LoopArgs& out, std::string& error) {
  if (args.size() != 4 && args.size() != 6) {
    error = "expects KERNEL GRID BLOCK SECONDS [sync-every N]";
    return false;
  }
  out.kernel = args[0];
  if (!ParseInt(args[1], out.grid) || out.grid <= 0) {
    error = "bad grid '" + args[1] + "'";
    return false;
  }
  if (!ParseInt(args[2], out.block) || out.block <= 0 || out.block > 1024) {
    error = "bad block '" + args[2] + "'";
    return false;
  }
  if (!ParseInt(args[3], out.seconds) || out.seconds <= 0) {
    error = "bad seconds '" + args[3] + "'";
    return false;
  }
  if (args.size() == 6) {
    if (args[4] != "sync-every") {
      error = "unknown option '" + args[4] + "' (expected sync-every)";
      return false;
    }
    if (!ParseInt(args[5], out.sync_every) || out.sync_every <= 0) {
      error = "bad sync-every count '" + args[5] + "'";
      return false;
    }
  }
  return true;
}

const char* LaunchName(Launch launch) {
  switch (launch) {
    case Launch::kKernel:
      return "kernel";
    case Launch::kEx:
      return "ex";
    case Launch::kCoop:
      return "coop";
    case Launch::kGraph:
      return "graph";
  }
  return "?";
}

}  // namespace

bool CheckLaunchLoop(const Args& args, std::string& error) {
  LoopArgs parsed;
  return Parse(args, parsed, error);
}

void RunLaunchLoop(Probe& probe, const Args& args) {
  LoopArgs loop;
  std::string ignored;
  Parse(args, loop, ignored);
  const Driver& cu = probe.cu;
  Line line("launch-loop");
  line.Str("kernel", loop.kernel).Str("launch", LaunchName(probe.launch));
  const long long start = NowUs();
  long long launches = 0;
  CUstream stream = nullptr;
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  CUgraph graph = nullptr;
  CUgraphExec exec = nullptr;
  static const char kImage[] = "vgpu_probe module";
  CUresult code = probe.Stream(stream);
  if (code == CUDA_SUCCESS) code = cu.cuModuleLoadData(&module, kImage);
  if (code == CUDA_SUCCESS) {
    code = cu.cuModuleGetFunction(&function, module, loop.kernel.c_str());
  }
  const unsigned grid = static_cast<unsigned>(loop.grid);
  const unsigned block = static_cast<unsigned>(loop.block);
  if (code == CUDA_SUCCESS && probe.launch == Launch::kGraph) {
    // One kernel node, instantiated once and launched over and over, as
    // CUDA-graph replay does.
    code = cu.cuGraphCreate(&graph, 0);
    CUDA_KERNEL_NODE_PARAMS params{};
    params.func = function;
    params.gridDimX = grid;
    params.gridDimY = params.gridDimZ = 1;
    params.blockDimX = block;
    params.blockDimY = params.blockDimZ = 1;
    CUgraphNode node = nullptr;
    if (code == CUDA_SUCCESS) {
      code = cu.cuGraphAddKernelNode(&node, graph, nullptr, 0, &params);
    }
    if (code == CUDA_SUCCESS) {
      code = cu.cuGraphInstantiateWithFlags(&exec, graph, 0);
    }
  }
  const long long end = start + loop.seconds * 1000000LL;
  while (code == CUDA_SUCCESS && NowUs() < end) {
    switch (probe.launch) {
      case Launch::kKernel:
        code = cu.cuLaunchKernel(function, grid, 1, 1, block, 1, 1, 0, stream,
                                 nullptr, nullptr);
        break;
      case Launch::kEx: {
        CUlaunchConfig config{};
        config.gridDimX = grid;
        config.gridDimY = config.gridDimZ = 1;
        config.blockDimX = block;
        config.blockDimY = config.blockDimZ = 1;
        config.hStream = stream;
        code = cu.cuLaunchKernelEx(&config, function, nullptr, nullptr);
        break;
      }
      case Launch::kCoop:
        code = cu.cuLaunchCooperativeKernel(function, grid, 1, 1, block, 1, 1,
                                            0, stream, nullptr);
        break;
      case Launch::kGraph:
        code = cu.cuGraphLaunch(exec, stream);
        break;
    }
    if (code != CUDA_SUCCESS) break;
    ++launches;
    if (launches % loop.sync_every == 0) code = cu.cuStreamSynchronize(stream);
  }
  if (code == CUDA_SUCCESS) code = cu.cuStreamSynchronize(stream);
  if (exec != nullptr) cu.cuGraphExecDestroy(exec);
  if (graph != nullptr) cu.cuGraphDestroy(graph);
  line.Int("code", code).Int("launches", launches).Us(NowUs() - start).Emit();
}

}  // namespace vgpu_probe
