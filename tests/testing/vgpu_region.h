// File: testing/vgpu_region.h
//
// VgpuRegionReader: a read-only view of libvgpu.so's shared region file
// (CUDA_DEVICE_MEMORY_SHARED_CACHE), for tests that check the ledger
// itself: per GPU its limit and what the container is charged, and what
// each process slot holds. It maps the file once and reads it live, so a
// sampler can watch it while processes run.
//
// Thread safety: reads only; safe from any thread once opened.
#ifndef DEVICESHARE_TESTS_TESTING_VGPU_REGION_H_
#define DEVICESHARE_TESTS_TESTING_VGPU_REGION_H_

#include <cstdint>
#include <string>

#include "shared_region.h"

namespace deviceshare::testing {

class VgpuRegionReader {
 public:
  VgpuRegionReader() = default;
  ~VgpuRegionReader();
  VgpuRegionReader(const VgpuRegionReader&) = delete;
  VgpuRegionReader& operator=(const VgpuRegionReader&) = delete;

  // False (with `error`) while the file is absent or not yet a complete
  // region of the current layout.
  bool Open(const std::string& path, std::string* error = nullptr);
  bool is_open() const { return layout_ != nullptr; }

  // The region's index of `uuid`; -1 when no process entered it.
  int Device(const std::string& uuid) const;
  uint64_t Limit(int device) const;
  // The GPU's counter, what Reserve checks against the limit.
  uint64_t Charged(int device) const;
  // Σ of the per-process charges of `device` over slots with a pid.
  uint64_t SlotSum(int device) const;
  // Slots that have a pid.
  int LiveSlots() const;

 private:
  const vgpu::RegionLayout* layout_ = nullptr;
};

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_VGPU_REGION_H_
