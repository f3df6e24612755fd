// CUDA graphs: kernel and memory-allocation nodes. A graph's allocations
// come from its device's graph memory pool when it is instantiated
// (USED grows; RESERVED grows to cover it, charged as physical memory);
// destroying the exec lowers USED while RESERVED stays until
// cuDeviceGraphMemTrim, as on the driver. A launch runs the graph's
// kernels in the order they were added, on the stream's timeline.
#include <algorithm>
#include <map>

#include "world.h"

using namespace fake_cuda;

namespace {

// cudaGraphInstantiateFlag*: auto-free, upload, device launch, priority.
constexpr unsigned long long kKnownInstantiateFlags = 0x1 | 0x2 | 0x4 | 0x8;

Graph* FindGraph(CUgraph handle) {
  auto& graphs = TheWorld().graphs;
  auto it = graphs.find(HandleId(Tag::kGraph, handle));
  return it == graphs.end() ? nullptr : &it->second;
}

// Dependencies must be nodes of the same graph.
bool ValidDependencies(uint64_t graph_id, const CUgraphNode* dependencies,
                       size_t count) {
  if (count == 0) return true;
  if (dependencies == nullptr) return false;
  const auto& nodes = TheWorld().graph_nodes;
  for (size_t i = 0; i < count; ++i) {
    auto it = nodes.find(HandleId(Tag::kGraphNode, dependencies[i]));
    if (it == nodes.end() || it->second != graph_id) {
      return false;
    }
  }
  return true;
}

CUgraphNode AddNode(uint64_t graph_id, Graph& graph) {
  World& world = TheWorld();
  const uint64_t id = world.NewId();
  world.graph_nodes[id] = graph_id;
  graph.nodes.push_back(id);
  return MakeHandle<CUgraphNode>(Tag::kGraphNode, id);
}

void UpdateGraphHighs(Device& device) {
  device.graph_used_high = std::max(device.graph_used_high, device.graph_used);
  device.graph_reserved_high =
      std::max(device.graph_reserved_high, device.graph_reserved);
}

// Takes `bytes` from `device`'s graph pool, growing its reserve. False
// (nothing changed) when physical memory cannot cover the growth.
bool TakeGraphMemory(int ordinal, uint64_t bytes) {
  Device& device = TheWorld().devices[ordinal];
  const uint64_t used = device.graph_used + bytes;
  if (used > device.graph_reserved) {
    if (!ChargePhysical(ordinal, used - device.graph_reserved)) return false;
    device.graph_reserved = used;
  }
  device.graph_used = used;
  UpdateGraphHighs(device);
  return true;
}

CUresult GraphLaunch(CUgraphExec exec, CUstream hstream) {
  FAKE_CUDA_ENTER();
  World& world = TheWorld();
  auto it = world.graph_execs.find(HandleId(Tag::kGraphExec, exec));
  if (it == world.graph_execs.end()) return CUDA_ERROR_INVALID_HANDLE;
  CUresult error = CUDA_SUCCESS;
  Stream* stream = ResolveStream(hstream, &error);
  if (stream == nullptr) return error;
  for (const KernelLaunch& launch : it->second.kernels) {
    const CUresult result = EnqueueKernel(*stream, launch);
    if (result != CUDA_SUCCESS) return result;
  }
  return CUDA_SUCCESS;
}

}  // namespace

FAKE_CUDA_EXPORT CUresult cuGraphCreate(CUgraph* graph, unsigned int flags) {
  FAKE_CUDA_ENTER();
  if (graph == nullptr || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  World& world = TheWorld();
  const uint64_t id = world.NewId();
  world.graphs[id];
  *graph = MakeHandle<CUgraph>(Tag::kGraph, id);
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuGraphDestroy(CUgraph graph) {
  FAKE_CUDA_ENTER();
  World& world = TheWorld();
  auto it = world.graphs.find(HandleId(Tag::kGraph, graph));
  if (it == world.graphs.end()) return CUDA_ERROR_INVALID_HANDLE;
  for (const GraphAlloc& alloc : it->second.allocs) {
    world.allocations.erase(alloc.address);
    UnmapHostMemory(alloc.address, alloc.bytes);
  }
  for (uint64_t node : it->second.nodes) world.graph_nodes.erase(node);
  world.graphs.erase(it);
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuGraphAddKernelNode_v2(
    CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies,
    size_t dependency_count, const CUDA_KERNEL_NODE_PARAMS* params) {
  FAKE_CUDA_ENTER();
  if (node == nullptr || params == nullptr || params->func == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  Graph* found = FindGraph(graph);
  if (found == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  const uint64_t graph_id = HandleId(Tag::kGraph, graph);
  if (!ValidDependencies(graph_id, dependencies, dependency_count)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (params->ctx != nullptr && ContextDevice(params->ctx) < 0) {
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  KernelLaunch launch;
  launch.function = HandleId(Tag::kFunction, params->func);
  launch.grid[0] = params->gridDimX;
  launch.grid[1] = params->gridDimY;
  launch.grid[2] = params->gridDimZ;
  launch.block[0] = params->blockDimX;
  launch.block[1] = params->blockDimY;
  launch.block[2] = params->blockDimZ;
  const CUresult valid = ValidateLaunch(launch);
  if (valid != CUDA_SUCCESS) return valid;
  found->kernels.push_back(launch);
  *node = AddNode(graph_id, *found);
  return CUDA_SUCCESS;
}

// Fills params->dptr with the address the allocation will have; the memory
// is charged when the graph is instantiated.
FAKE_CUDA_EXPORT CUresult cuGraphAddMemAllocNode(
    CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies,
    size_t dependency_count, CUDA_MEM_ALLOC_NODE_PARAMS* params) {
  FAKE_CUDA_ENTER();
  if (node == nullptr || params == nullptr || params->bytesize == 0 ||
      params->poolProps.allocType != CU_MEM_ALLOCATION_TYPE_PINNED ||
      params->poolProps.location.type != CU_MEM_LOCATION_TYPE_DEVICE ||
      DeviceAt(params->poolProps.location.id) == nullptr) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  Graph* found = FindGraph(graph);
  if (found == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  const uint64_t graph_id = HandleId(Tag::kGraph, graph);
  if (!ValidDependencies(graph_id, dependencies, dependency_count)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const uint64_t rounded = RoundUp(params->bytesize, kGranularity);
  const uintptr_t address = MapHostMemory(rounded);
  if (address == 0) return CUDA_ERROR_OUT_OF_MEMORY;
  const int device = params->poolProps.location.id;
  Allocation allocation;
  allocation.bytes = params->bytesize;
  allocation.mapped = rounded;
  allocation.device = device;
  allocation.kind = AllocKind::kGraph;
  TheWorld().allocations[address] = allocation;
  found->allocs.push_back(GraphAlloc{device, rounded, address});
  params->dptr = address;
  *node = AddNode(graph_id, *found);
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuGraphInstantiateWithFlags(
    CUgraphExec* exec, CUgraph graph, unsigned long long flags) {
  FAKE_CUDA_ENTER();
  if (exec == nullptr || (flags & ~kKnownInstantiateFlags) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const Graph* found = FindGraph(graph);
  if (found == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  std::map<int, uint64_t> per_device;
  for (const GraphAlloc& alloc : found->allocs) {
    per_device[alloc.device] += alloc.bytes;
  }
  World& world = TheWorld();
  for (auto it = per_device.begin(); it != per_device.end(); ++it) {
    if (!TakeGraphMemory(it->first, it->second)) {
      // Give back what the devices before this one took.
      for (auto undo = per_device.begin(); undo != it; ++undo) {
        world.devices[undo->first].graph_used -= undo->second;
      }
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
  }
  const uint64_t id = world.NewId();
  world.graph_execs[id] = GraphExec{found->kernels, found->allocs};
  *exec = MakeHandle<CUgraphExec>(Tag::kGraphExec, id);
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuGraphLaunch(CUgraphExec exec, CUstream stream) {
  return GraphLaunch(exec, stream);
}

FAKE_CUDA_EXPORT CUresult cuGraphLaunch_ptsz(CUgraphExec exec,
                                             CUstream stream) {
  return GraphLaunch(exec, stream);
}

FAKE_CUDA_EXPORT CUresult cuGraphExecDestroy(CUgraphExec exec) {
  FAKE_CUDA_ENTER();
  World& world = TheWorld();
  auto it = world.graph_execs.find(HandleId(Tag::kGraphExec, exec));
  if (it == world.graph_execs.end()) return CUDA_ERROR_INVALID_HANDLE;
  for (const GraphAlloc& alloc : it->second.allocs) {
    Device& device = world.devices[alloc.device];
    device.graph_used -= std::min(device.graph_used, alloc.bytes);
  }
  world.graph_execs.erase(it);
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuDeviceGetGraphMemAttribute(
    CUdevice device, CUgraphMem_attribute attr, void* value) {
  FAKE_CUDA_ENTER();
  const Device* found = DeviceAt(device);
  if (found == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  cuuint64_t* out = static_cast<cuuint64_t*>(value);
  switch (attr) {
    case CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT:
      *out = found->graph_used;
      return CUDA_SUCCESS;
    case CU_GRAPH_MEM_ATTR_USED_MEM_HIGH:
      *out = found->graph_used_high;
      return CUDA_SUCCESS;
    case CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT:
      *out = found->graph_reserved;
      return CUDA_SUCCESS;
    case CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH:
      *out = found->graph_reserved_high;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}

FAKE_CUDA_EXPORT CUresult cuDeviceGraphMemTrim(CUdevice device) {
  FAKE_CUDA_ENTER();
  Device* found = DeviceAt(device);
  if (found == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  if (found->graph_reserved > found->graph_used) {
    UnchargePhysical(device, found->graph_reserved - found->graph_used);
    found->graph_reserved = found->graph_used;
  }
  return CUDA_SUCCESS;
}
