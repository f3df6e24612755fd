// CUDA arrays (1D/2D/3D and mipmapped): charged as W * max(H,1) * max(D,1)
// * channels * element size (summed over levels for mipmaps), rounded to
// 2 MiB. They have no host backing: nothing copies into them here.
#include <algorithm>

#include "world.h"

using namespace fake_cuda;

namespace {

uint64_t FormatBytes(CUarray_format format) {
  switch (format) {
    case CU_AD_FORMAT_UNSIGNED_INT8:
    case CU_AD_FORMAT_SIGNED_INT8:
      return 1;
    case CU_AD_FORMAT_UNSIGNED_INT16:
    case CU_AD_FORMAT_SIGNED_INT16:
    case CU_AD_FORMAT_HALF:
      return 2;
    case CU_AD_FORMAT_UNSIGNED_INT32:
    case CU_AD_FORMAT_SIGNED_INT32:
    case CU_AD_FORMAT_FLOAT:
      return 4;
    default:
      return 0;
  }
}

// Bytes of one level, or 0 when the shape is invalid or overflows.
uint64_t LevelBytes(uint64_t width, uint64_t height, uint64_t depth,
                    uint64_t element_bytes) {
  const unsigned __int128 bytes = static_cast<unsigned __int128>(width) *
                                  std::max<uint64_t>(height, 1) *
                                  std::max<uint64_t>(depth, 1) * element_bytes;
  return bytes > (uint64_t{1} << 62) ? 0 : static_cast<uint64_t>(bytes);
}

bool ElementBytes(CUarray_format format, unsigned channels, uint64_t* bytes) {
  const uint64_t size = FormatBytes(format);
  if (size == 0 || (channels != 1 && channels != 2 && channels != 4)) {
    return false;
  }
  *bytes = size * channels;
  return true;
}

// Charges `bytes` (rounded) on the current device and registers a handle.
template <class Handle>
CUresult CreateArray(Tag tag, uint64_t bytes, Handle* out) {
  const int device = CurrentDevice();
  const uint64_t rounded = RoundUp(bytes, kGranularity);
  if (!ChargePhysical(device, rounded)) return CUDA_ERROR_OUT_OF_MEMORY;
  World& world = TheWorld();
  const uint64_t id = world.NewId();
  world.arrays[id] = Array{device, rounded};
  *out = MakeHandle<Handle>(tag, id);
  return CUDA_SUCCESS;
}

template <class Handle>
CUresult DestroyArray(Tag tag, Handle handle) {
  World& world = TheWorld();
  auto it = world.arrays.find(HandleId(tag, handle));
  if (it == world.arrays.end()) return CUDA_ERROR_INVALID_HANDLE;
  UnchargePhysical(it->second.device, it->second.charged);
  world.arrays.erase(it);
  return CUDA_SUCCESS;
}

CUresult Create3D(CUarray* array, const CUDA_ARRAY3D_DESCRIPTOR* desc) {
  if (CurrentDevice() < 0) return CUDA_ERROR_INVALID_CONTEXT;
  uint64_t element = 0;
  if (array == nullptr || desc == nullptr || desc->Width == 0 ||
      (desc->Depth != 0 && desc->Height == 0) ||
      !ElementBytes(desc->Format, desc->NumChannels, &element)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  const uint64_t bytes =
      LevelBytes(desc->Width, desc->Height, desc->Depth, element);
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  return CreateArray(Tag::kArray, bytes, array);
}

}  // namespace

FAKE_CUDA_EXPORT CUresult cuArrayCreate_v2(CUarray* array,
                                           const CUDA_ARRAY_DESCRIPTOR* desc) {
  FAKE_CUDA_ENTER();
  if (desc == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUDA_ARRAY3D_DESCRIPTOR as_3d{};
  as_3d.Width = desc->Width;
  as_3d.Height = desc->Height;
  as_3d.Format = desc->Format;
  as_3d.NumChannels = desc->NumChannels;
  return Create3D(array, &as_3d);
}

FAKE_CUDA_EXPORT CUresult
cuArray3DCreate_v2(CUarray* array, const CUDA_ARRAY3D_DESCRIPTOR* desc) {
  FAKE_CUDA_ENTER();
  return Create3D(array, desc);
}

FAKE_CUDA_EXPORT CUresult cuArrayDestroy(CUarray array) {
  FAKE_CUDA_ENTER();
  return DestroyArray(Tag::kArray, array);
}

FAKE_CUDA_EXPORT CUresult cuMipmappedArrayCreate(
    CUmipmappedArray* handle, const CUDA_ARRAY3D_DESCRIPTOR* desc,
    unsigned int levels) {
  FAKE_CUDA_ENTER();
  if (CurrentDevice() < 0) return CUDA_ERROR_INVALID_CONTEXT;
  uint64_t element = 0;
  if (handle == nullptr || desc == nullptr || desc->Width == 0 || levels == 0 ||
      levels > 64 || (desc->Depth != 0 && desc->Height == 0) ||
      !ElementBytes(desc->Format, desc->NumChannels, &element)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  // Each level halves every extent; no level may shrink below one texel
  // in all of them.
  const uint64_t largest = std::max({desc->Width, desc->Height, desc->Depth});
  if ((largest >> (levels - 1)) == 0) return CUDA_ERROR_INVALID_VALUE;
  uint64_t total = 0;
  for (unsigned level = 0; level < levels; ++level) {
    const auto extent = [level](uint64_t size) -> uint64_t {
      return size == 0 ? 0 : std::max<uint64_t>(size >> level, 1);
    };
    const uint64_t bytes = LevelBytes(extent(desc->Width), extent(desc->Height),
                                      extent(desc->Depth), element);
    if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
    total += bytes;
  }
  return CreateArray(Tag::kMipmappedArray, total, handle);
}

FAKE_CUDA_EXPORT CUresult cuMipmappedArrayDestroy(CUmipmappedArray handle) {
  FAKE_CUDA_ENTER();
  return DestroyArray(Tag::kMipmappedArray, handle);
}
