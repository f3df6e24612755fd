// File: gpu_abi/cuda_abi.h
//
// The part of the CUDA driver API's C ABI (cuda.h, CUDA 12.x/13.0) that
// libvgpu.so interposes on and the fake libcuda.so.1 of the tests
// implements. deviceshare may not depend on the CUDA toolkit, so the
// declarations are written here by hand; values, layouts and versioned
// symbol names are the driver's exactly. Where the toolkit is installed,
// tests/gpu_abi_check compiles this header next to the real cuda.h and
// static_asserts every value, size and offset below against it.
//
// Function pointer types are named `<symbol>_fn` after the versioned symbol
// they point to (`cuMemAlloc_v2_fn`), because interposition works on the
// exported, versioned names.
#ifndef DEVICESHARE_GPU_ABI_CUDA_ABI_H_
#define DEVICESHARE_GPU_ABI_CUDA_ABI_H_

#include <cstddef>
#include <cstdint>

extern "C" {

typedef int CUresult;  // an enum in cuda.h; int-sized on every ABI
enum : int {
  CUDA_SUCCESS = 0,
  CUDA_ERROR_INVALID_VALUE = 1,
  CUDA_ERROR_OUT_OF_MEMORY = 2,
  CUDA_ERROR_NOT_INITIALIZED = 3,
  CUDA_ERROR_DEINITIALIZED = 4,
  CUDA_ERROR_NO_DEVICE = 100,
  CUDA_ERROR_INVALID_DEVICE = 101,
  CUDA_ERROR_INVALID_CONTEXT = 201,
  CUDA_ERROR_INVALID_HANDLE = 400,
  CUDA_ERROR_NOT_FOUND = 500,
  CUDA_ERROR_NOT_READY = 600,
  CUDA_ERROR_NOT_SUPPORTED = 801,
  CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED = 900,
  CUDA_ERROR_UNKNOWN = 999,
};

typedef int CUdevice;
typedef unsigned long long CUdeviceptr;
typedef unsigned long long CUmemGenericAllocationHandle;
typedef uint64_t cuuint64_t;
typedef struct CUctx_st* CUcontext;
typedef struct CUmod_st* CUmodule;
typedef struct CUfunc_st* CUfunction;
typedef struct CUstream_st* CUstream;
typedef struct CUevent_st* CUevent;
typedef struct CUarray_st* CUarray;
typedef struct CUmipmappedArray_st* CUmipmappedArray;
typedef struct CUmemPoolHandle_st* CUmemoryPool;
typedef struct CUgraph_st* CUgraph;
typedef struct CUgraphNode_st* CUgraphNode;
typedef struct CUgraphExec_st* CUgraphExec;

typedef struct CUuuid_st {
  char bytes[16];
} CUuuid;

typedef int CUdevice_attribute;
enum : int {
  CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16,
  CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR = 39,
  CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT = 51,
};

typedef int CUarray_format;
enum : int {
  CU_AD_FORMAT_UNSIGNED_INT8 = 0x01,
  CU_AD_FORMAT_UNSIGNED_INT16 = 0x02,
  CU_AD_FORMAT_UNSIGNED_INT32 = 0x03,
  CU_AD_FORMAT_SIGNED_INT8 = 0x08,
  CU_AD_FORMAT_SIGNED_INT16 = 0x09,
  CU_AD_FORMAT_SIGNED_INT32 = 0x0a,
  CU_AD_FORMAT_HALF = 0x10,
  CU_AD_FORMAT_FLOAT = 0x20,
};

typedef struct CUDA_ARRAY_DESCRIPTOR_st {
  size_t Width;
  size_t Height;
  CUarray_format Format;
  unsigned int NumChannels;
} CUDA_ARRAY_DESCRIPTOR;

typedef struct CUDA_ARRAY3D_DESCRIPTOR_st {
  size_t Width;
  size_t Height;
  size_t Depth;
  CUarray_format Format;
  unsigned int NumChannels;
  unsigned int Flags;
} CUDA_ARRAY3D_DESCRIPTOR;

// Virtual memory management (cuMemCreate).
typedef int CUmemLocationType;
enum : int {
  CU_MEM_LOCATION_TYPE_INVALID = 0,
  CU_MEM_LOCATION_TYPE_DEVICE = 1,
  CU_MEM_LOCATION_TYPE_HOST = 2,
};
typedef int CUmemAllocationType;
enum : int { CU_MEM_ALLOCATION_TYPE_PINNED = 1 };
typedef int CUmemAllocationHandleType;
typedef int CUmemAllocationGranularity_flags;
enum : int {
  CU_MEM_ALLOC_GRANULARITY_MINIMUM = 0,
  CU_MEM_ALLOC_GRANULARITY_RECOMMENDED = 1,
};

typedef struct CUmemLocation_st {
  CUmemLocationType type;
  int id;
} CUmemLocation;

typedef struct CUmemAllocationProp_st {
  CUmemAllocationType type;
  CUmemAllocationHandleType requestedHandleTypes;
  CUmemLocation location;
  void* win32HandleMetaData;
  struct {
    unsigned char compressionType;
    unsigned char gpuDirectRDMACapable;
    unsigned short usage;
    unsigned char reserved[4];
  } allocFlags;
} CUmemAllocationProp;

typedef struct CUmemAccessDesc_st {
  CUmemLocation location;
  int flags;
} CUmemAccessDesc;

// Stream-ordered allocation (memory pools).
typedef int CUmemPool_attribute;
enum : int {
  CU_MEMPOOL_ATTR_RELEASE_THRESHOLD = 4,
  CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT = 5,
  CU_MEMPOOL_ATTR_RESERVED_MEM_HIGH = 6,
  CU_MEMPOOL_ATTR_USED_MEM_CURRENT = 7,
  CU_MEMPOOL_ATTR_USED_MEM_HIGH = 8,
};

typedef struct CUmemPoolProps_st {
  CUmemAllocationType allocType;
  CUmemAllocationHandleType handleTypes;
  CUmemLocation location;
  void* win32SecurityAttributes;
  size_t maxSize;
  unsigned short usage;
  unsigned char reserved[54];
} CUmemPoolProps;

// Graphs.
typedef int CUgraphMem_attribute;
enum : int {
  CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT = 0,
  CU_GRAPH_MEM_ATTR_USED_MEM_HIGH = 1,
  CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT = 2,
  CU_GRAPH_MEM_ATTR_RESERVED_MEM_HIGH = 3,
};

typedef struct CUDA_MEM_ALLOC_NODE_PARAMS_st {
  CUmemPoolProps poolProps;
  const CUmemAccessDesc* accessDescs;
  size_t accessDescCount;
  size_t bytesize;
  CUdeviceptr dptr;
} CUDA_MEM_ALLOC_NODE_PARAMS;

typedef struct CUDA_KERNEL_NODE_PARAMS_st {
  CUfunction func;
  unsigned int gridDimX;
  unsigned int gridDimY;
  unsigned int gridDimZ;
  unsigned int blockDimX;
  unsigned int blockDimY;
  unsigned int blockDimZ;
  unsigned int sharedMemBytes;
  void** kernelParams;
  void** extra;
  void* kern;               // CUkernel; used only when func is null
  CUcontext ctx;            // null: the current context
} CUDA_KERNEL_NODE_PARAMS;  // cuda.h's CUDA_KERNEL_NODE_PARAMS_v2

typedef int CUstreamCaptureStatus;
enum : int {
  CU_STREAM_CAPTURE_STATUS_NONE = 0,
  CU_STREAM_CAPTURE_STATUS_ACTIVE = 1,
  CU_STREAM_CAPTURE_STATUS_INVALIDATED = 2,
};

// cuLaunchKernelEx. The attribute value is a 64-byte union in cuda.h; only
// the id matters here (CU_LAUNCH_ATTRIBUTE_COOPERATIVE).
typedef int CUlaunchAttributeID;
enum : int { CU_LAUNCH_ATTRIBUTE_COOPERATIVE = 2 };
typedef struct CUlaunchAttribute_st {
  CUlaunchAttributeID id;
  char pad[4];
  union {
    char storage[64];
    int cooperative;
  } value;
} CUlaunchAttribute;

typedef struct CUlaunchConfig_st {
  unsigned int gridDimX;
  unsigned int gridDimY;
  unsigned int gridDimZ;
  unsigned int blockDimX;
  unsigned int blockDimY;
  unsigned int blockDimZ;
  unsigned int sharedMemBytes;
  CUstream hStream;
  CUlaunchAttribute* attrs;
  unsigned int numAttrs;
} CUlaunchConfig;

// Events.
enum : unsigned int {
  CU_EVENT_DEFAULT = 0,
  CU_EVENT_BLOCKING_SYNC = 1,
  CU_EVENT_DISABLE_TIMING = 2,
};
// Streams.
enum : unsigned int { CU_STREAM_DEFAULT = 0, CU_STREAM_NON_BLOCKING = 1 };

// cuGetProcAddress.
typedef int CUdriverProcAddressQueryResult;
enum : int {
  CU_GET_PROC_ADDRESS_SUCCESS = 0,
  CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND = 1,
  CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT = 2,
};
enum : unsigned long long {
  CU_GET_PROC_ADDRESS_DEFAULT = 0,
  CU_GET_PROC_ADDRESS_LEGACY_STREAM = 1,
  CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM = 2,
};

// ---- Function types, one per versioned symbol -----------------------------
typedef CUresult (*cuInit_fn)(unsigned int flags);
typedef CUresult (*cuDriverGetVersion_fn)(int* version);
typedef CUresult (*cuGetErrorString_fn)(CUresult error, const char** text);
typedef CUresult (*cuGetErrorName_fn)(CUresult error, const char** text);
typedef CUresult (*cuGetProcAddress_fn)(const char* symbol, void** pfn,
                                        int cuda_version, cuuint64_t flags);
typedef CUresult (*cuGetProcAddress_v2_fn)(
    const char* symbol, void** pfn, int cuda_version, cuuint64_t flags,
    CUdriverProcAddressQueryResult* symbol_status);

typedef CUresult (*cuDeviceGet_fn)(CUdevice* device, int ordinal);
typedef CUresult (*cuDeviceGetCount_fn)(int* count);
typedef CUresult (*cuDeviceGetName_fn)(char* name, int length, CUdevice dev);
typedef CUresult (*cuDeviceGetUuid_fn)(CUuuid* uuid, CUdevice dev);
typedef CUresult (*cuDeviceGetUuid_v2_fn)(CUuuid* uuid, CUdevice dev);
typedef CUresult (*cuDeviceTotalMem_v2_fn)(size_t* bytes, CUdevice dev);
typedef CUresult (*cuDeviceGetAttribute_fn)(int* value,
                                            CUdevice_attribute attribute,
                                            CUdevice dev);

typedef CUresult (*cuDevicePrimaryCtxRetain_fn)(CUcontext* ctx, CUdevice dev);
typedef CUresult (*cuDevicePrimaryCtxRelease_v2_fn)(CUdevice dev);
typedef CUresult (*cuCtxGetCurrent_fn)(CUcontext* ctx);
typedef CUresult (*cuCtxSetCurrent_fn)(CUcontext ctx);
typedef CUresult (*cuCtxGetDevice_fn)(CUdevice* device);
typedef CUresult (*cuCtxSynchronize_fn)();
typedef CUresult (*cuCtxPushCurrent_v2_fn)(CUcontext ctx);
typedef CUresult (*cuCtxPopCurrent_v2_fn)(CUcontext* ctx);

typedef CUresult (*cuMemGetInfo_v2_fn)(size_t* free_bytes, size_t* total_bytes);
typedef CUresult (*cuMemAlloc_v2_fn)(CUdeviceptr* dptr, size_t bytesize);
typedef CUresult (*cuMemAllocPitch_v2_fn)(CUdeviceptr* dptr, size_t* pitch,
                                          size_t width_bytes, size_t height,
                                          unsigned int element_size_bytes);
typedef CUresult (*cuMemAllocManaged_fn)(CUdeviceptr* dptr, size_t bytesize,
                                         unsigned int flags);
typedef CUresult (*cuMemFree_v2_fn)(CUdeviceptr dptr);
typedef CUresult (*cuMemcpyHtoD_v2_fn)(CUdeviceptr dst, const void* src,
                                       size_t bytes);
typedef CUresult (*cuMemcpyDtoH_v2_fn)(void* dst, CUdeviceptr src,
                                       size_t bytes);
typedef CUresult (*cuMemsetD8_v2_fn)(CUdeviceptr dst, unsigned char value,
                                     size_t count);

typedef CUresult (*cuArrayCreate_v2_fn)(CUarray* array,
                                        const CUDA_ARRAY_DESCRIPTOR* desc);
typedef CUresult (*cuArray3DCreate_v2_fn)(CUarray* array,
                                          const CUDA_ARRAY3D_DESCRIPTOR* desc);
typedef CUresult (*cuArrayDestroy_fn)(CUarray array);
typedef CUresult (*cuMipmappedArrayCreate_fn)(
    CUmipmappedArray* handle, const CUDA_ARRAY3D_DESCRIPTOR* desc,
    unsigned int levels);
typedef CUresult (*cuMipmappedArrayDestroy_fn)(CUmipmappedArray handle);

typedef CUresult (*cuMemCreate_fn)(CUmemGenericAllocationHandle* handle,
                                   size_t size, const CUmemAllocationProp* prop,
                                   unsigned long long flags);
typedef CUresult (*cuMemRelease_fn)(CUmemGenericAllocationHandle handle);
typedef CUresult (*cuMemGetAllocationGranularity_fn)(
    size_t* granularity, const CUmemAllocationProp* prop,
    CUmemAllocationGranularity_flags option);
typedef CUresult (*cuMemAddressReserve_fn)(CUdeviceptr* ptr, size_t size,
                                           size_t alignment, CUdeviceptr addr,
                                           unsigned long long flags);
typedef CUresult (*cuMemAddressFree_fn)(CUdeviceptr ptr, size_t size);
typedef CUresult (*cuMemMap_fn)(CUdeviceptr ptr, size_t size, size_t offset,
                                CUmemGenericAllocationHandle handle,
                                unsigned long long flags);
typedef CUresult (*cuMemUnmap_fn)(CUdeviceptr ptr, size_t size);

typedef CUresult (*cuMemAllocAsync_fn)(CUdeviceptr* dptr, size_t bytesize,
                                       CUstream stream);
typedef CUresult (*cuMemAllocFromPoolAsync_fn)(CUdeviceptr* dptr,
                                               size_t bytesize,
                                               CUmemoryPool pool,
                                               CUstream stream);
typedef CUresult (*cuMemFreeAsync_fn)(CUdeviceptr dptr, CUstream stream);
typedef CUresult (*cuMemPoolCreate_fn)(CUmemoryPool* pool,
                                       const CUmemPoolProps* props);
typedef CUresult (*cuMemPoolDestroy_fn)(CUmemoryPool pool);
typedef CUresult (*cuMemPoolGetAttribute_fn)(CUmemoryPool pool,
                                             CUmemPool_attribute attr,
                                             void* value);
typedef CUresult (*cuMemPoolSetAttribute_fn)(CUmemoryPool pool,
                                             CUmemPool_attribute attr,
                                             void* value);
typedef CUresult (*cuMemPoolTrimTo_fn)(CUmemoryPool pool, size_t keep_bytes);
typedef CUresult (*cuDeviceGetDefaultMemPool_fn)(CUmemoryPool* pool,
                                                 CUdevice dev);
typedef CUresult (*cuDeviceGetMemPool_fn)(CUmemoryPool* pool, CUdevice dev);

typedef CUresult (*cuStreamCreate_fn)(CUstream* stream, unsigned int flags);
typedef CUresult (*cuStreamDestroy_v2_fn)(CUstream stream);
typedef CUresult (*cuStreamSynchronize_fn)(CUstream stream);
typedef CUresult (*cuStreamIsCapturing_fn)(CUstream stream,
                                           CUstreamCaptureStatus* status);
typedef CUresult (*cuEventCreate_fn)(CUevent* event, unsigned int flags);
typedef CUresult (*cuEventRecord_fn)(CUevent event, CUstream stream);
typedef CUresult (*cuEventQuery_fn)(CUevent event);
typedef CUresult (*cuEventSynchronize_fn)(CUevent event);
typedef CUresult (*cuEventElapsedTime_fn)(float* ms, CUevent start,
                                          CUevent end);
typedef CUresult (*cuEventElapsedTime_v2_fn)(float* ms, CUevent start,
                                             CUevent end);
typedef CUresult (*cuEventDestroy_v2_fn)(CUevent event);

typedef CUresult (*cuModuleLoadData_fn)(CUmodule* module, const void* image);
typedef CUresult (*cuModuleUnload_fn)(CUmodule module);
typedef CUresult (*cuModuleGetFunction_fn)(CUfunction* function,
                                           CUmodule module, const char* name);
typedef CUresult (*cuLaunchKernel_fn)(
    CUfunction f, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
    unsigned int block_x, unsigned int block_y, unsigned int block_z,
    unsigned int shared_bytes, CUstream stream, void** params, void** extra);
typedef CUresult (*cuLaunchKernelEx_fn)(const CUlaunchConfig* config,
                                        CUfunction f, void** params,
                                        void** extra);
typedef CUresult (*cuLaunchCooperativeKernel_fn)(
    CUfunction f, unsigned int grid_x, unsigned int grid_y, unsigned int grid_z,
    unsigned int block_x, unsigned int block_y, unsigned int block_z,
    unsigned int shared_bytes, CUstream stream, void** params);

typedef CUresult (*cuGraphCreate_fn)(CUgraph* graph, unsigned int flags);
typedef CUresult (*cuGraphDestroy_fn)(CUgraph graph);
typedef CUresult (*cuGraphAddKernelNode_v2_fn)(
    CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies,
    size_t dependency_count, const CUDA_KERNEL_NODE_PARAMS* params);
typedef CUresult (*cuGraphAddMemAllocNode_fn)(
    CUgraphNode* node, CUgraph graph, const CUgraphNode* dependencies,
    size_t dependency_count, CUDA_MEM_ALLOC_NODE_PARAMS* params);
typedef CUresult (*cuGraphInstantiateWithFlags_fn)(CUgraphExec* exec,
                                                   CUgraph graph,
                                                   unsigned long long flags);
typedef CUresult (*cuGraphLaunch_fn)(CUgraphExec exec, CUstream stream);
typedef CUresult (*cuGraphExecDestroy_fn)(CUgraphExec exec);
typedef CUresult (*cuDeviceGetGraphMemAttribute_fn)(CUdevice device,
                                                    CUgraphMem_attribute attr,
                                                    void* value);
typedef CUresult (*cuDeviceGraphMemTrim_fn)(CUdevice device);

}  // extern "C"

static_assert(sizeof(CUuuid) == 16);
static_assert(sizeof(CUDA_ARRAY_DESCRIPTOR) == 24);
static_assert(sizeof(CUDA_ARRAY3D_DESCRIPTOR) == 40);
static_assert(sizeof(CUmemAllocationProp) == 32);
static_assert(sizeof(CUmemPoolProps) == 88);
static_assert(sizeof(CUDA_MEM_ALLOC_NODE_PARAMS) == 120);
static_assert(offsetof(CUDA_MEM_ALLOC_NODE_PARAMS, bytesize) == 104);
static_assert(sizeof(CUDA_KERNEL_NODE_PARAMS) == 72);
static_assert(sizeof(CUlaunchAttribute) == 72);
static_assert(sizeof(CUlaunchConfig) == 56);
static_assert(offsetof(CUlaunchConfig, hStream) == 32);

#endif  // DEVICESHARE_GPU_ABI_CUDA_ABI_H_
