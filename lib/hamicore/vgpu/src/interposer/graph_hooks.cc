// Graph memory: a graph's memory-allocation nodes get physical memory when
// the graph is instantiated, so the bound -- the sum of its nodes' sizes --
// is reserved before cuGraphInstantiate and held until the exec is
// destroyed. (HAMi-core never charges graph memory.) Nodes that stream
// capture creates are not seen here; their pool's growth is settled by the
// stream-ordered path when the capturing cuMemAllocAsync runs.
#include "charge.h"
#include "hook_support.h"
#include "runtime.h"

using deviceshare::vgpu::Allocation;
using deviceshare::vgpu::AllocationKind;
using deviceshare::vgpu::ChargeFor;
using deviceshare::vgpu::Guarded;
using deviceshare::vgpu::VgpuRuntime;

VGPU_EXPORT CUresult cuGraphAddMemAllocNode(
    CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies,
    size_t dependency_count, CUDA_MEM_ALLOC_NODE_PARAMS* params) {
  VgpuRuntime& runtime = VgpuRuntime::Get();
  auto real = runtime.cuda().cuGraphAddMemAllocNode;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  CUresult rc = real(node, graph, dependencies, dependency_count, params);
  if (rc != CUDA_SUCCESS || runtime.passthrough() || params == nullptr) {
    return rc;
  }
  Guarded([&] {
    int device = params->poolProps.location.type == CU_MEM_LOCATION_TYPE_DEVICE
                     ? runtime.DeviceForOrdinal(params->poolProps.location.id)
                     : -1;
    if (device < 0) return CUDA_SUCCESS;
    uint64_t key = reinterpret_cast<uint64_t>(graph);
    Allocation bound{0, device, AllocationKind::kGraphExec, 0};
    runtime.graphs().Find(key, &bound);
    uint64_t add = ChargeFor(params->bytesize);
    bound.bytes = bound.bytes > ~0ULL - add ? ~0ULL : bound.bytes + add;
    runtime.graphs().Insert(key, bound);
    return CUDA_SUCCESS;
  });
  return rc;
}

VGPU_EXPORT CUresult cuGraphDestroy(CUgraph graph) {
  VgpuRuntime& runtime = VgpuRuntime::Get();
  auto real = runtime.cuda().cuGraphDestroy;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  CUresult rc = real(graph);
  if (rc == CUDA_SUCCESS && !runtime.passthrough()) {
    Allocation ignored;
    runtime.graphs().Take(reinterpret_cast<uint64_t>(graph), &ignored);
  }
  return rc;
}

VGPU_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec* exec,
                                                 CUgraph graph,
                                                 unsigned long long flags) {
  VgpuRuntime& runtime = VgpuRuntime::Get();
  auto real = runtime.cuda().cuGraphInstantiateWithFlags;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  if (runtime.passthrough()) return real(exec, graph, flags);
  return Guarded([&]() -> CUresult {
    Allocation bound;
    if (exec == nullptr ||
        !runtime.graphs().Find(reinterpret_cast<uint64_t>(graph), &bound) ||
        bound.bytes == 0) {
      return real(exec, graph, flags);
    }
    if (!runtime.region()->Reserve(bound.device, bound.bytes)) {
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    CUresult rc = real(exec, graph, flags);
    if (rc != CUDA_SUCCESS) {
      runtime.region()->Release(bound.device, bound.bytes);
      return rc;
    }
    if (!runtime.allocations().Insert(reinterpret_cast<uint64_t>(*exec),
                                      bound)) {
      runtime.cuda().cuGraphExecDestroy(*exec);
      runtime.region()->Release(bound.device, bound.bytes);
      return CUDA_ERROR_OUT_OF_MEMORY;
    }
    return CUDA_SUCCESS;
  });
}

VGPU_EXPORT CUresult cuGraphExecDestroy(CUgraphExec exec) {
  VgpuRuntime& runtime = VgpuRuntime::Get();
  auto real = runtime.cuda().cuGraphExecDestroy;
  if (real == nullptr) return CUDA_ERROR_NOT_FOUND;
  CUresult rc = real(exec);
  if (rc == CUDA_SUCCESS && !runtime.passthrough()) {
    Guarded([&] {
      deviceshare::vgpu::Refund(runtime, reinterpret_cast<uint64_t>(exec));
      return CUDA_SUCCESS;
    });
  }
  return rc;
}
