// cuGetErrorString / cuGetErrorName: the driver's texts for the codes of
// gpu_abi/cuda_abi.h. Both work before cuInit, as the driver's do.
#include "world.h"

namespace {

struct ErrorText {
  CUresult code;
  const char* name;
  const char* text;
};

constexpr ErrorText kErrors[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED",
     "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED",
     "driver shutting down"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE",
     "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE",
     "invalid device ordinal"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT",
     "invalid device context"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE",
     "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED",
     "operation not supported"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED,
     "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

const ErrorText* Find(CUresult code) {
  for (const ErrorText& error : kErrors) {
    if (error.code == code) return &error;
  }
  return nullptr;
}

}  // namespace

// An unknown code: *text = NULL and CUDA_ERROR_INVALID_VALUE, as the
// driver answers.
FAKE_CUDA_EXPORT CUresult cuGetErrorString(CUresult error, const char** text) {
  if (text == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const ErrorText* found = Find(error);
  *text = found != nullptr ? found->text : nullptr;
  return found != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_CUDA_EXPORT CUresult cuGetErrorName(CUresult error, const char** text) {
  if (text == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const ErrorText* found = Find(error);
  *text = found != nullptr ? found->name : nullptr;
  return found != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
