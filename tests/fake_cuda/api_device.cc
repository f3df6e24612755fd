// cuInit, the driver version and the device queries.
#include <cstdio>
#include <cstring>

#include "world.h"

using namespace fake_cuda;

namespace {

constexpr int kDriverVersion = 13000;
constexpr const char kDeviceName[] = "NVIDIA H100 80GB HBM3";
constexpr int kThreadsPerSm = 2048;
constexpr int kTexturePitchAlignment = 512;

}  // namespace

FAKE_CUDA_EXPORT CUresult cuInit(unsigned int flags) {
  std::lock_guard<std::mutex> lock(WorldMutex());
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  // Like the driver, later calls keep the first successful world, whatever
  // the environment says now.
  if (TheWorld().initialized) return CUDA_SUCCESS;
  return InitializeWorld();
}

// Works before cuInit, as the driver's does.
FAKE_CUDA_EXPORT CUresult cuDriverGetVersion(int* version) {
  if (version == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *version = kDriverVersion;
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuDeviceGetCount(int* count) {
  FAKE_CUDA_ENTER();
  if (count == nullptr) return CUDA_ERROR_INVALID_VALUE;
  *count = static_cast<int>(TheWorld().devices.size());
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  FAKE_CUDA_ENTER();
  if (device == nullptr) return CUDA_ERROR_INVALID_VALUE;
  if (DeviceAt(ordinal) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  *device = ordinal;
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuDeviceGetName(char* name, int length,
                                          CUdevice dev) {
  FAKE_CUDA_ENTER();
  if (name == nullptr || length <= 0) return CUDA_ERROR_INVALID_VALUE;
  if (DeviceAt(dev) == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  std::snprintf(name, static_cast<size_t>(length), "%s", kDeviceName);
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuDeviceGetUuid(CUuuid* uuid, CUdevice dev) {
  FAKE_CUDA_ENTER();
  if (uuid == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const Device* device = DeviceAt(dev);
  if (device == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  *uuid = device->uuid_bytes;
  return CUDA_SUCCESS;
}

// The _v2 differs from the original only for MIG instances, which the
// fake does not have.
FAKE_CUDA_EXPORT CUresult cuDeviceGetUuid_v2(CUuuid* uuid, CUdevice dev) {
  return cuDeviceGetUuid(uuid, dev);
}

FAKE_CUDA_EXPORT CUresult cuDeviceTotalMem_v2(size_t* bytes, CUdevice dev) {
  FAKE_CUDA_ENTER();
  if (bytes == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const Device* device = DeviceAt(dev);
  if (device == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  *bytes = device->total_bytes;
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuDeviceGetAttribute(int* value,
                                               CUdevice_attribute attribute,
                                               CUdevice dev) {
  FAKE_CUDA_ENTER();
  if (value == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const Device* device = DeviceAt(dev);
  if (device == nullptr) return CUDA_ERROR_INVALID_DEVICE;
  switch (attribute) {
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
      *value = device->sm_count;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
      *value = kThreadsPerSm;
      return CUDA_SUCCESS;
    case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT:
      *value = kTexturePitchAlignment;
      return CUDA_SUCCESS;
    default:
      return CUDA_ERROR_INVALID_VALUE;
  }
}
