#include "testing/vgpu_region.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>

namespace deviceshare::testing {

VgpuRegionReader::~VgpuRegionReader() {
  if (layout_ != nullptr) {
    munmap(const_cast<vgpu::RegionLayout*>(layout_),
           sizeof(vgpu::RegionLayout));
  }
}

bool VgpuRegionReader::Open(const std::string& path, std::string* error) {
  std::string ignored;
  if (layout_ != nullptr) return true;
  layout_ = vgpu::SharedRegion::MapForReading(
      path, error != nullptr ? error : &ignored);
  return layout_ != nullptr;
}

int VgpuRegionReader::Device(const std::string& uuid) const {
  if (layout_ == nullptr) return -1;
  const uint32_t count = std::min<uint32_t>(
      layout_->device_count.load(std::memory_order_acquire), vgpu::kMaxDevices);
  for (uint32_t i = 0; i < count; ++i) {
    if (std::strncmp(layout_->devices[i].uuid, uuid.c_str(),
                     vgpu::kUuidBytes) == 0) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

uint64_t VgpuRegionReader::Limit(int device) const {
  return layout_->devices[device].limit_bytes;
}

uint64_t VgpuRegionReader::Charged(int device) const {
  return layout_->devices[device].charged.load(std::memory_order_acquire);
}

uint64_t VgpuRegionReader::SlotSum(int device) const {
  uint64_t sum = 0;
  for (const vgpu::RegionSlot& slot : layout_->slots) {
    if (slot.pid.load(std::memory_order_acquire) > 0) {
      sum += slot.charged[device].load(std::memory_order_acquire);
    }
  }
  return sum;
}

int VgpuRegionReader::LiveSlots() const {
  int live = 0;
  for (const vgpu::RegionSlot& slot : layout_->slots) {
    live += slot.pid.load(std::memory_order_acquire) > 0;
  }
  return live;
}

}  // namespace deviceshare::testing
