// Ops that take device memory through one of the allocation paths and give
// it back: alloc, alloc-until-oom, free-all.
#include "probe.h"

namespace vgpu_probe {
namespace {

constexpr unsigned long long kMiB = 1ull << 20;
// Shapes of the array paths: rows of 16384 float4 texels (256 KiB), 3D
// layers of 256x256 float4 (1 MiB); both well inside the driver's limits
// on dimensions for the sizes tests use.
constexpr size_t kRowTexels = 16384;
constexpr size_t kLayerSide = 256;
constexpr size_t kTexelBytes = 16;  // FLOAT x 4 channels
constexpr size_t kPitchWidth = 64 * 1024;

CUmemAllocationProp DeviceProp(CUdevice device) {
  CUmemAllocationProp prop{};
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  return prop;
}

CUmemPoolProps PoolProps(CUdevice device) {
  CUmemPoolProps props{};
  props.allocType = CU_MEM_ALLOCATION_TYPE_PINNED;
  props.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  props.location.id = device;
  return props;
}

// One allocation of `bytes` by `path`; on success it joins probe.live and
// `obtained` is what the driver handed out (the real pitch, the VMM size
// rounded to the granularity).
CUresult AllocOne(Probe& probe, Path path, unsigned long long bytes,
                  unsigned long long& obtained) {
  const Driver& cu = probe.cu;
  Allocation a;
  a.path = path;
  obtained = 0;
  CUresult code = CUDA_SUCCESS;
  switch (path) {
    case Path::kMemAlloc:
      code = cu.cuMemAlloc(&a.ptr, bytes);
      obtained = bytes;
      break;
    case Path::kManaged:
      code = cu.cuMemAllocManaged(&a.ptr, bytes, /*CU_MEM_ATTACH_GLOBAL=*/1);
      obtained = bytes;
      break;
    case Path::kPitch: {
      size_t pitch = 0;
      const size_t height = bytes / kPitchWidth;
      code = cu.cuMemAllocPitch(&a.ptr, &pitch, kPitchWidth, height, 16);
      obtained = static_cast<unsigned long long>(pitch) * height;
      break;
    }
    case Path::kArray: {
      CUDA_ARRAY_DESCRIPTOR desc{};
      desc.Width = kRowTexels;
      desc.Height = bytes / (kRowTexels * kTexelBytes);
      desc.Format = CU_AD_FORMAT_FLOAT;
      desc.NumChannels = 4;
      code = cu.cuArrayCreate(&a.array, &desc);
      obtained = bytes;
      break;
    }
    case Path::kArray3D:
    case Path::kMipmapped: {
      CUDA_ARRAY3D_DESCRIPTOR desc{};
      desc.Width = kLayerSide;
      desc.Height = kLayerSide;
      desc.Depth = bytes / (kLayerSide * kLayerSide * kTexelBytes);
      desc.Format = CU_AD_FORMAT_FLOAT;
      desc.NumChannels = 4;
      code = path == Path::kArray3D
                 ? cu.cuArray3DCreate(&a.array, &desc)
                 : cu.cuMipmappedArrayCreate(&a.mipmapped, &desc, 1);
      obtained = bytes;
      break;
    }
    case Path::kVmm: {
      const CUmemAllocationProp prop = DeviceProp(probe.device);
      size_t granularity = 0;
      code = cu.cuMemGetAllocationGranularity(&granularity, &prop,
                                              CU_MEM_ALLOC_GRANULARITY_MINIMUM);
      if (code != CUDA_SUCCESS) break;
      if (granularity == 0) granularity = 1;
      a.size = (bytes + granularity - 1) / granularity * granularity;
      code = cu.cuMemCreate(&a.handle, a.size, &prop, 0);
      if (code != CUDA_SUCCESS) break;
      // Reserve and map as a program would; only the handle is memory.
      code = cu.cuMemAddressReserve(&a.ptr, a.size, 0, 0, 0);
      if (code == CUDA_SUCCESS) {
        code = cu.cuMemMap(a.ptr, a.size, 0, a.handle, 0);
        if (code != CUDA_SUCCESS) cu.cuMemAddressFree(a.ptr, a.size);
      }
      if (code != CUDA_SUCCESS) {
        cu.cuMemRelease(a.handle);
        break;
      }
      obtained = a.size;
      break;
    }
    case Path::kAsync:
    case Path::kFromPool: {
      CUstream stream = nullptr;
      code = probe.Stream(stream);
      if (code != CUDA_SUCCESS) break;
      if (path == Path::kAsync) {
        code = cu.cuMemAllocAsync(&a.ptr, bytes, stream);
      } else {
        if (probe.pool == nullptr) {
          const CUmemPoolProps props = PoolProps(probe.device);
          code = cu.cuMemPoolCreate(&probe.pool, &props);
          if (code != CUDA_SUCCESS) {
            probe.pool = nullptr;
            break;
          }
        }
        code = cu.cuMemAllocFromPoolAsync(&a.ptr, bytes, probe.pool, stream);
      }
      obtained = bytes;
      break;
    }
    case Path::kGraph: {
      CUstream stream = nullptr;
      code = probe.Stream(stream);
      if (code == CUDA_SUCCESS) code = cu.cuGraphCreate(&a.graph, 0);
      if (code != CUDA_SUCCESS) break;
      CUDA_MEM_ALLOC_NODE_PARAMS params{};
      params.poolProps = PoolProps(probe.device);
      params.bytesize = bytes;
      CUgraphNode node = nullptr;
      code = cu.cuGraphAddMemAllocNode(&node, a.graph, nullptr, 0, &params);
      if (code == CUDA_SUCCESS) {
        code = cu.cuGraphInstantiateWithFlags(&a.exec, a.graph, 0);
      }
      if (code == CUDA_SUCCESS) code = cu.cuGraphLaunch(a.exec, stream);
      if (code == CUDA_SUCCESS) code = cu.cuStreamSynchronize(stream);
      if (code != CUDA_SUCCESS) {
        if (a.exec != nullptr) cu.cuGraphExecDestroy(a.exec);
        cu.cuGraphDestroy(a.graph);
        break;
      }
      a.ptr = params.dptr;
      obtained = bytes;
      break;
    }
  }
  if (code != CUDA_SUCCESS) {
    obtained = 0;
    return code;
  }
  probe.live.push_back(a);
  return CUDA_SUCCESS;
}

CUresult FreeOne(Probe& probe, const Allocation& a) {
  const Driver& cu = probe.cu;
  switch (a.path) {
    case Path::kMemAlloc:
    case Path::kManaged:
    case Path::kPitch:
      return cu.cuMemFree(a.ptr);
    case Path::kArray:
    case Path::kArray3D:
      return cu.cuArrayDestroy(a.array);
    case Path::kMipmapped:
      return cu.cuMipmappedArrayDestroy(a.mipmapped);
    case Path::kVmm: {
      CUresult code = cu.cuMemUnmap(a.ptr, a.size);
      const CUresult freed = cu.cuMemAddressFree(a.ptr, a.size);
      const CUresult released = cu.cuMemRelease(a.handle);
      if (code == CUDA_SUCCESS) code = freed;
      return code == CUDA_SUCCESS ? released : code;
    }
    case Path::kAsync:
    case Path::kFromPool:
      return cu.cuMemFreeAsync(a.ptr, probe.stream);
    case Path::kGraph: {
      const CUresult code = cu.cuGraphExecDestroy(a.exec);
      const CUresult destroyed = cu.cuGraphDestroy(a.graph);
      return code == CUDA_SUCCESS ? destroyed : code;
    }
  }
  return CUDA_ERROR_INVALID_VALUE;
}

// Paths whose shapes need whole MiB (rows, layers, pitched rows).
bool NeedsWholeMiB(Path path) {
  return path == Path::kPitch || path == Path::kArray ||
         path == Path::kArray3D || path == Path::kMipmapped;
}

}  // namespace

// alloc PATH BYTES / alloc-until-oom PATH STEP
bool CheckAlloc(const Args& args, std::string& error) {
  if (args.size() != 2) {
    error = "expects PATH BYTES";
    return false;
  }
  const std::optional<Path> path = ParsePath(args[0]);
  if (!path) {
    error = "unknown allocation path '" + args[0] + "'";
    return false;
  }
  unsigned long long bytes = 0;
  if (!ParseBytes(args[1], bytes) || bytes == 0) {
    error = "bad byte count '" + args[1] + "'";
    return false;
  }
  if (NeedsWholeMiB(*path) && bytes % kMiB != 0) {
    error =
        "byte count '" + args[1] + "' must be whole MiB for path " + args[0];
    return false;
  }
  return true;
}

void RunAlloc(Probe& probe, const Args& args) {
  const Path path = *ParsePath(args[0]);
  unsigned long long bytes = 0, obtained = 0;
  ParseBytes(args[1], bytes);
  const long long start = NowUs();
  const CUresult code = AllocOne(probe, path, bytes, obtained);
  Line("alloc")
      .Str("path", PathName(path))
      .Int("bytes", static_cast<long long>(bytes))
      .Int("obtained", static_cast<long long>(obtained))
      .Int("code", code)
      .Us(NowUs() - start)
      .Emit();
}

// Allocates STEP at a time until the driver refuses; reports the total and
// the code that stopped it.
void RunAllocUntilOom(Probe& probe, const Args& args) {
  const Path path = *ParsePath(args[0]);
  unsigned long long step = 0, total = 0;
  ParseBytes(args[1], step);
  const long long start = NowUs();
  CUresult code = CUDA_SUCCESS;
  long long count = 0;
  // A bound on iterations so that a driver that never refuses cannot make
  // the probe run forever.
  for (; count < (1 << 20); ++count) {
    unsigned long long obtained = 0;
    code = AllocOne(probe, path, step, obtained);
    if (code != CUDA_SUCCESS) break;
    total += obtained;
  }
  Line("alloc-until-oom")
      .Str("path", PathName(path))
      .Int("step", static_cast<long long>(step))
      .Int("bytes", static_cast<long long>(total))
      .Int("count", count)
      .Int("code", code)
      .Us(NowUs() - start)
      .Emit();
}

// Frees everything, newest first, then synchronizes and trims so that pool
// and graph reserves go back too.
void RunFreeAll(Probe& probe, const Args&) {
  const long long start = NowUs();
  CUresult first = CUDA_SUCCESS;
  long long count = 0;
  bool graphs = false;
  for (auto it = probe.live.rbegin(); it != probe.live.rend(); ++it) {
    const CUresult code = FreeOne(probe, *it);
    if (first == CUDA_SUCCESS) first = code;
    graphs = graphs || it->path == Path::kGraph;
    ++count;
  }
  probe.live.clear();
  if (probe.stream_created) {
    const CUresult code = probe.cu.cuStreamSynchronize(probe.stream);
    if (first == CUDA_SUCCESS) first = code;
  }
  if (graphs) {
    const CUresult code = probe.cu.cuDeviceGraphMemTrim(probe.device);
    if (first == CUDA_SUCCESS) first = code;
  }
  Line("free-all")
      .Int("code", first)
      .Int("count", count)
      .Us(NowUs() - start)
      .Emit();
}

}  // namespace vgpu_probe
