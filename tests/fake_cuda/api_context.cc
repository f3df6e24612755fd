// Primary contexts and the per-thread context stack. The fake has only
// primary contexts (one per device, retain-counted); a released context
// (count 0) is invalid wherever it is still current.
#include "world.h"

using namespace fake_cuda;

FAKE_CUDA_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx,
                                                   CUdevice dev) {
  FAKE_CUDA_ENTER();
  if (ctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  Device* device = DeviceAt(dev);
  if (device == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  ++device->primary_retains;
  *ctx = PrimaryContextHandle(dev);
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev) {
  FAKE_CUDA_ENTER();
  Device* device = DeviceAt(dev);
  if (device == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  if (device->primary_retains <= 0) return CUDA_ERROR_INVALID_CONTEXT;
  --device->primary_retains;
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuCtxGetCurrent(CUcontext* ctx) {
  FAKE_CUDA_ENTER();
  if (ctx == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const std::vector<CUcontext>& stack = ContextStack();
  *ctx = stack.empty() ? nullptr : stack.back();
  return CUDA_SUCCESS;
}

// With a stack, replaces its top; NULL pops (a no-op on an empty stack).
FAKE_CUDA_EXPORT CUresult cuCtxSetCurrent(CUcontext ctx) {
  FAKE_CUDA_ENTER();
  std::vector<CUcontext>& stack = ContextStack();
  if (ctx == nullptr) {
    if (!stack.empty()) stack.pop_back();
    return CUDA_SUCCESS;
  }
  if (ContextDevice(ctx) < 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (stack.empty()) {
    stack.push_back(ctx);
  } else {
    stack.back() = ctx;
  }
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuCtxPushCurrent_v2(CUcontext ctx) {
  FAKE_CUDA_ENTER();
  if (ContextDevice(ctx) < 0) return CUDA_ERROR_INVALID_CONTEXT;
  ContextStack().push_back(ctx);
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuCtxPopCurrent_v2(CUcontext* ctx) {
  FAKE_CUDA_ENTER();
  std::vector<CUcontext>& stack = ContextStack();
  if (stack.empty()) return CUDA_ERROR_INVALID_CONTEXT;
  if (ctx != nullptr) *ctx = stack.back();
  stack.pop_back();
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuCtxGetDevice(CUdevice* device) {
  FAKE_CUDA_ENTER();
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const int current = CurrentDevice();
  if (current < 0) return CUDA_ERROR_INVALID_CONTEXT;
  *device = current;
  return CUDA_SUCCESS;
}
