// Allocate-until-out-of-memory on one allocation path, in fixed steps, and
// report how far it got and how it stopped. Run once per path, each in a
// fresh process, natively and under the interposer (run.sh judges):
//   alloc_paths --path cudaMalloc --step-mib 64 --cap-mib 5120
//   alloc_paths --path info --hold-mib 1024
// Paths: cudaMalloc cudaMallocManaged cudaMallocPitch cudaMalloc3DArray
//        cuMemCreate cudaMallocAsync cudaMallocFromPoolAsync graphMemNode
// The cap stops a path that is not limited at all (natively, or an uncharged
// path under the interposer) from taking the whole GPU.
#include <memory>

#include "driver_api.cuh"
#include "kit_common.cuh"

namespace {

using kit::kMiB;

// Where and how a fill stopped.
struct Stop {
  size_t bytes = 0;
  int code = 0;
  std::string err = "none";
  std::string where = "-";
  bool hit_cap = false;
};

bool Fail(Stop* s, cudaError_t e, const char* where) {
  s->code = static_cast<int>(e);
  s->err = cudaGetErrorName(e);
  s->where = where;
  return false;
}

// One allocation path: AllocOne grabs about `step` bytes (adding what it
// really got to *got) or records the failure; FreeAll returns everything.
class Path {
 public:
  virtual ~Path() = default;
  virtual bool AllocOne(size_t step, size_t* got, Stop* s) = 0;
  // Returns the first error while freeing, cudaSuccess if none.
  virtual cudaError_t FreeAll() = 0;
};

// Paths whose allocations all go back with cudaFree.
class CudaFreePath : public Path {
 public:
  cudaError_t FreeAll() override {
    cudaError_t first = cudaSuccess;
    for (void* p : ptrs_) {
      cudaError_t e = cudaFree(p);
      if (first == cudaSuccess) first = e;
    }
    ptrs_.clear();
    return first;
  }

 protected:
  std::vector<void*> ptrs_;
};

class MallocPath : public CudaFreePath {
 public:
  bool AllocOne(size_t step, size_t* got, Stop* s) override {
    void* p = nullptr;
    cudaError_t e = cudaMalloc(&p, step);
    if (e != cudaSuccess) return Fail(s, e, "cudaMalloc");
    ptrs_.push_back(p);
    *got = step;
    return true;
  }
};

class ManagedPath : public CudaFreePath {
 public:
  bool AllocOne(size_t step, size_t* got, Stop* s) override {
    void* p = nullptr;
    cudaError_t e = cudaMallocManaged(&p, step, cudaMemAttachGlobal);
    if (e != cudaSuccess) return Fail(s, e, "cudaMallocManaged");
    ptrs_.push_back(p);
    *got = step;
    return true;
  }
};

// A row width that is not a multiple of the pitch alignment, so the driver
// pads; the real bytes (pitch x height) are what counts against the limit.
class PitchPath : public CudaFreePath {
 public:
  bool AllocOne(size_t step, size_t* got, Stop* s) override {
    constexpr size_t kRowBytes = 8100;
    const size_t height = step / 8192;
    void* p = nullptr;
    size_t pitch = 0;
    cudaError_t e = cudaMallocPitch(&p, &pitch, kRowBytes, height);
    if (e != cudaSuccess) return Fail(s, e, "cudaMallocPitch");
    ptrs_.push_back(p);
    *got = pitch * height;
    return true;
  }
};

// 2048 x 2048 x depth floats. The layout is opaque, so the nominal size is
// counted; the driver's real footprint can only be larger.
class Array3DPath : public Path {
 public:
  bool AllocOne(size_t step, size_t* got, Stop* s) override {
    const size_t depth = std::max<size_t>(1, step / (2048 * 2048 * 4));
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaArray_t a = nullptr;
    cudaError_t e =
        cudaMalloc3DArray(&a, &desc, make_cudaExtent(2048, 2048, depth), 0);
    if (e != cudaSuccess) return Fail(s, e, "cudaMalloc3DArray");
    arrays_.push_back(a);
    *got = 2048 * 2048 * 4 * depth;
    return true;
  }
  cudaError_t FreeAll() override {
    cudaError_t first = cudaSuccess;
    for (cudaArray_t a : arrays_) {
      cudaError_t e = cudaFreeArray(a);
      if (first == cudaSuccess) first = e;
    }
    arrays_.clear();
    return first;
  }

 private:
  std::vector<cudaArray_t> arrays_;
};

// VMM: physical handle at the allocation granularity, mapped and made
// accessible as frameworks do (the map must not be charged a second time).
class VmmPath : public Path {
 public:
  explicit VmmPath(int dev) : dev_(dev) {}
  bool AllocOne(size_t step, size_t* got, Stop* s) override {
    if (!loaded_) {
      if (!drv_.Load()) {
        s->code = -1;
        s->err = "driver_entry_point_missing";
        s->where = "cudaGetDriverEntryPoint";
        return false;
      }
      loaded_ = true;
    }
    CUmemAllocationProp prop{};
    prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = dev_;
    size_t gran = 0;
    CUresult r = drv_.MemGetAllocationGranularity(
        &gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM);
    if (r != CUDA_SUCCESS)
      return DrvFail(s, r, "cuMemGetAllocationGranularity");
    const size_t size = (step + gran - 1) / gran * gran;
    CUmemGenericAllocationHandle h{};
    r = drv_.MemCreate(&h, size, &prop, 0);
    if (r != CUDA_SUCCESS) return DrvFail(s, r, "cuMemCreate");
    CUdeviceptr va = 0;
    r = drv_.MemAddressReserve(&va, size, 0, 0, 0);
    if (r != CUDA_SUCCESS) {
      drv_.MemRelease(h);
      return DrvFail(s, r, "cuMemAddressReserve");
    }
    r = drv_.MemMap(va, size, 0, h, 0);
    if (r != CUDA_SUCCESS) {
      drv_.MemAddressFree(va, size);
      drv_.MemRelease(h);
      return DrvFail(s, r, "cuMemMap");
    }
    CUmemAccessDesc access{};
    access.location = prop.location;
    access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    maps_.push_back({va, size, h});
    r = drv_.MemSetAccess(va, size, &access, 1);
    if (r != CUDA_SUCCESS) return DrvFail(s, r, "cuMemSetAccess");
    *got = size;
    return true;
  }
  cudaError_t FreeAll() override {
    bool ok = true;
    for (const Mapping& m : maps_) {
      ok &= drv_.MemUnmap(m.va, m.size) == CUDA_SUCCESS;
      ok &= drv_.MemAddressFree(m.va, m.size) == CUDA_SUCCESS;
      ok &= drv_.MemRelease(m.handle) == CUDA_SUCCESS;
    }
    maps_.clear();
    return ok ? cudaSuccess : cudaErrorUnknown;
  }

 private:
  struct Mapping {
    CUdeviceptr va;
    size_t size;
    CUmemGenericAllocationHandle handle;
  };
  bool DrvFail(Stop* s, CUresult r, const char* where) {
    s->code = static_cast<int>(r);
    s->err = drv_.Name(r);
    s->where = where;
    return false;
  }
  int dev_;
  bool loaded_ = false;
  kit::Driver drv_;
  std::vector<Mapping> maps_;
};

// Stream-ordered allocation, from the device's default pool or from a pool
// of our own (nullptr pool_ means the default one).
class AsyncPath : public Path {
 public:
  AsyncPath(int dev, bool own_pool) {
    KIT_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    if (own_pool) {
      cudaMemPoolProps props{};
      props.allocType = cudaMemAllocationTypePinned;
      props.handleTypes = cudaMemHandleTypeNone;
      props.location.type = cudaMemLocationTypeDevice;
      props.location.id = dev;
      KIT_CHECK(cudaMemPoolCreate(&pool_, &props));
    } else {
      KIT_CHECK(cudaDeviceGetDefaultMemPool(&default_pool_, dev));
    }
  }
  bool AllocOne(size_t step, size_t* got, Stop* s) override {
    void* p = nullptr;
    cudaError_t e = pool_ ? cudaMallocFromPoolAsync(&p, step, pool_, stream_)
                          : cudaMallocAsync(&p, step, stream_);
    if (e != cudaSuccess) {
      return Fail(s, e, pool_ ? "cudaMallocFromPoolAsync" : "cudaMallocAsync");
    }
    ptrs_.push_back(p);
    // An error that only shows at execution would be a non-clean stop.
    e = cudaStreamSynchronize(stream_);
    if (e != cudaSuccess) return Fail(s, e, "cudaStreamSynchronize");
    *got = step;
    return true;
  }
  cudaError_t FreeAll() override {
    cudaError_t first = cudaSuccess;
    for (void* p : ptrs_) {
      cudaError_t e = cudaFreeAsync(p, stream_);
      if (first == cudaSuccess) first = e;
    }
    ptrs_.clear();
    cudaError_t e = cudaStreamSynchronize(stream_);
    if (first == cudaSuccess) first = e;
    e = cudaMemPoolTrimTo(pool_ ? pool_ : default_pool_, 0);
    if (first == cudaSuccess) first = e;
    if (pool_) {
      e = cudaMemPoolDestroy(pool_);
      if (first == cudaSuccess) first = e;
      pool_ = nullptr;
    }
    return first;
  }

 private:
  cudaStream_t stream_ = nullptr;
  cudaMemPool_t pool_ = nullptr;
  cudaMemPool_t default_pool_ = nullptr;
  std::vector<void*> ptrs_;
};

// One graph per step holding a single memory-allocation node and no free
// node, so each launch leaves `step` bytes of graph memory allocated.
class GraphMemPath : public Path {
 public:
  explicit GraphMemPath(int dev) : dev_(dev) {
    KIT_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  }
  bool AllocOne(size_t step, size_t* got, Stop* s) override {
    cudaGraph_t g = nullptr;
    cudaError_t e = cudaGraphCreate(&g, 0);
    if (e != cudaSuccess) return Fail(s, e, "cudaGraphCreate");
    graphs_.push_back(g);
    cudaMemAllocNodeParams params{};
    params.poolProps.allocType = cudaMemAllocationTypePinned;
    params.poolProps.location.type = cudaMemLocationTypeDevice;
    params.poolProps.location.id = dev_;
    params.bytesize = step;
    cudaGraphNode_t node = nullptr;
    e = cudaGraphAddMemAllocNode(&node, g, nullptr, 0, &params);
    if (e != cudaSuccess) return Fail(s, e, "cudaGraphAddMemAllocNode");
    cudaGraphExec_t exec = nullptr;
    e = cudaGraphInstantiate(&exec, g, 0);
    if (e != cudaSuccess) return Fail(s, e, "cudaGraphInstantiate");
    execs_.push_back(exec);
    e = cudaGraphLaunch(exec, stream_);
    if (e != cudaSuccess) return Fail(s, e, "cudaGraphLaunch");
    e = cudaStreamSynchronize(stream_);
    if (e != cudaSuccess) return Fail(s, e, "cudaStreamSynchronize");
    ptrs_.push_back(params.dptr);
    *got = step;
    return true;
  }
  cudaError_t FreeAll() override {
    cudaError_t first = cudaSuccess;
    auto keep = [&first](cudaError_t e) {
      if (first == cudaSuccess) first = e;
    };
    for (void* p : ptrs_) keep(cudaFreeAsync(p, stream_));
    keep(cudaStreamSynchronize(stream_));
    for (cudaGraphExec_t x : execs_) keep(cudaGraphExecDestroy(x));
    for (cudaGraph_t g : graphs_) keep(cudaGraphDestroy(g));
    keep(cudaDeviceGraphMemTrim(dev_));
    ptrs_.clear();
    execs_.clear();
    graphs_.clear();
    return first;
  }

 private:
  int dev_;
  cudaStream_t stream_ = nullptr;
  std::vector<void*> ptrs_;
  std::vector<cudaGraphExec_t> execs_;
  std::vector<cudaGraph_t> graphs_;
};

std::unique_ptr<Path> MakePath(const std::string& name, int dev) {
  if (name == "cudaMalloc") return std::make_unique<MallocPath>();
  if (name == "cudaMallocManaged") return std::make_unique<ManagedPath>();
  if (name == "cudaMallocPitch") return std::make_unique<PitchPath>();
  if (name == "cudaMalloc3DArray") return std::make_unique<Array3DPath>();
  if (name == "cuMemCreate") return std::make_unique<VmmPath>(dev);
  if (name == "cudaMallocAsync") return std::make_unique<AsyncPath>(dev, false);
  if (name == "cudaMallocFromPoolAsync") {
    return std::make_unique<AsyncPath>(dev, true);
  }
  if (name == "graphMemNode") return std::make_unique<GraphMemPath>(dev);
  return nullptr;
}

// Coarse steps until the first failure, then 2 MiB steps until the next, so
// the figure is what is allocatable to 2 MiB, not rounded down to a step.
// The fine stop is the one reported; the coarse one must be an OOM as well.
Stop Fill(Path& path, size_t step, size_t cap, int* coarse_code = nullptr) {
  Stop s;
  for (size_t cur : {step, std::min(step, 2 * kMiB)}) {
    bool failed = false;
    while (!failed && s.bytes + cur <= cap) {
      size_t got = 0;
      failed = !path.AllocOne(cur, &got, &s);
      if (!failed) s.bytes += got;
    }
    if (!failed) {
      s.hit_cap = true;
      return s;
    }
    if (coarse_code && cur == step) *coarse_code = s.code;
    // The runtime keeps the failure as its last error; clear it so that
    // nothing later mistakes it for a new one.
    cudaGetLastError();
  }
  return s;
}

std::string GpuUuid(int dev) {
  cudaDeviceProp prop{};
  KIT_CHECK(cudaGetDeviceProperties(&prop, dev));
  const unsigned char* u =
      reinterpret_cast<const unsigned char*>(prop.uuid.bytes);
  char buf[64];
  std::snprintf(buf, sizeof buf,
                "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
                "%02x%02x%02x%02x%02x%02x",
                u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
                u[10], u[11], u[12], u[13], u[14], u[15]);
  return buf;
}

// nvidia-smi started from inside this process inherits LD_PRELOAD and the
// interposer's environment, so it shows what a tool in the container sees.
bool QuerySmi(const std::string& uuid, long* total_mib, long* used_mib) {
  std::string cmd =
      "nvidia-smi --query-gpu=memory.total,memory.used "
      "--format=csv,noheader,nounits -i " +
      uuid + " 2>&1";
  FILE* f = popen(cmd.c_str(), "r");
  if (!f) return false;
  char line[512] = {0};
  bool ok = std::fgets(line, sizeof line, f) != nullptr &&
            std::sscanf(line, "%ld , %ld", total_mib, used_mib) == 2;
  int rc = pclose(f);
  if (!ok || rc != 0) {
    std::fprintf(stderr, "nvidia-smi query failed (rc %d): %s\n", rc, line);
    return false;
  }
  return true;
}

int Info(int dev, const kit::Args& args) {
  const size_t hold = static_cast<size_t>(args.Num("hold-mib", 1024)) * kMiB;
  size_t free0 = 0, total0 = 0, free1 = 0, total1 = 0;
  KIT_CHECK(cudaMemGetInfo(&free0, &total0));
  MallocPath held;
  Stop s = Fill(held, 64 * kMiB, hold);
  cudaGetLastError();
  KIT_CHECK(cudaMemGetInfo(&free1, &total1));
  long smi_total = -1, smi_used = -1;
  const std::string uuid = GpuUuid(dev);
  bool smi_ok = QuerySmi(uuid, &smi_total, &smi_used);
  kit::Result r;
  r.Add("path", "info")
      .Add("uuid", uuid)
      .Add("total_bytes", total0)
      .Fixed("total_mib", double(total0) / kMiB, 1)
      .Fixed("free0_mib", double(free0) / kMiB, 1)
      .Fixed("held_mib", double(s.bytes) / kMiB, 1)
      .Fixed("free1_mib", double(free1) / kMiB, 1)
      .Fixed("total1_mib", double(total1) / kMiB, 1)
      .Add("smi_ok", smi_ok ? 1 : 0)
      .Add("smi_total_mib", smi_total)
      .Add("smi_used_mib", smi_used);
  r.Print();
  held.FreeAll();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  kit::Args args(argc, argv);
  const int dev = kit::RequireDevice();
  const std::string name = args.Str("path", "cudaMalloc");
  if (name == "info") return Info(dev, args);
  const size_t step = static_cast<size_t>(args.Num("step-mib", 64)) * kMiB;
  const size_t cap = static_cast<size_t>(args.Num("cap-mib", 5120)) * kMiB;
  std::unique_ptr<Path> path = MakePath(name, dev);
  if (!path) {
    std::fprintf(stderr, "unknown --path %s\n", name.c_str());
    return 2;
  }

  int coarse_code = 0;
  Stop stop = Fill(*path, step, cap, &coarse_code);
  // The runtime remembers the OOM as its last error; clear it so that the
  // recovery check below sees only new errors.
  cudaGetLastError();
  size_t free_at_stop = 0, total = 0;
  cudaError_t info_err = cudaMemGetInfo(&free_at_stop, &total);
  cudaError_t free_err = path->FreeAll();
  cudaError_t sync_err = cudaDeviceSynchronize();

  // A clean stop leaves a working context and gives the memory back: the
  // same amount must be allocatable again with plain cudaMalloc.
  MallocPath again;
  Stop refill = Fill(again, step, cap);
  cudaGetLastError();
  cudaError_t again_free = again.FreeAll();
  cudaError_t final_sync = cudaDeviceSynchronize();
  const bool recovered = free_err == cudaSuccess && sync_err == cudaSuccess &&
                         again_free == cudaSuccess &&
                         final_sync == cudaSuccess && refill.bytes > 0;

  kit::Result r;
  r.Add("path", name)
      .Add("step_mib", step / kMiB)
      .Add("cap_mib", cap / kMiB)
      .Fixed("obtained_mib", double(stop.bytes) / kMiB, 1)
      .Add("hit_cap", stop.hit_cap ? 1 : 0)
      .Add("coarse_code", coarse_code)
      .Add("code", stop.code)
      .Add("err", stop.err)
      .Add("where", stop.where)
      .Fixed("free_at_stop_mib",
             info_err == cudaSuccess ? double(free_at_stop) / kMiB : -1.0, 1)
      .Fixed("total_mib", info_err == cudaSuccess ? double(total) / kMiB : -1.0,
             1)
      .Add("free_err", cudaGetErrorName(free_err))
      .Fixed("refill_mib", double(refill.bytes) / kMiB, 1)
      .Add("refill_err", refill.hit_cap ? "cap" : refill.err)
      .Add("recovered", recovered ? 1 : 0);
  r.Print();
  return 0;
}
