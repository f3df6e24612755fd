// File: lib/hamicore/vgpu/src/shared_region.h
//
// The memory ledger all processes of one container share: a file
// (CUDA_DEVICE_MEMORY_SHARED_CACHE) mapped MAP_SHARED, holding per GPU the
// limit and the bytes charged, and per process a slot with what that
// process charged. Allocation hooks Reserve() before they allocate and
// Release() after a free, so the container's total can never pass the
// limit, whatever the interleaving of its processes.
//
// Crash safety, the point of this layout (HAMi-core deadlocks when a process
// dies holding its semaphore, docs/reference/upstream-hamicore.md §4.2):
//  - The header is versioned (magic, ABI version, size) and written under
//    flock(2), which the kernel drops when its holder dies; `ready` is set
//    last, so a half-written header is rebuilt by the next process.
//  - Each GPU's counters change under a process-shared robust mutex. A
//    process that dies holding it hands the next locker EOWNERDEAD; that
//    locker recomputes the GPU's total from the slots, drops the dead
//    processes' charges and marks the mutex consistent.
//  - Slots are claimed lock-free (CAS on the pid). A dead process's slot
//    (kill(pid, 0) fails, or the pid now names a process with another start
//    time) is reclaimed at the next init or whenever a Reserve would fail.
//  - Nothing here ever exits or aborts the process.
//
// GPUs are entered by UUID, so processes that number them differently
// (CUDA_VISIBLE_DEVICES) still charge the same counters.
//
// Thread safety: all methods are safe to call from any thread of any
// process mapping the region.
#ifndef DEVICESHARE_VGPU_SHARED_REGION_H_
#define DEVICESHARE_VGPU_SHARED_REGION_H_

#include <pthread.h>
#include <sys/types.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "env_config.h"

namespace deviceshare::vgpu {

inline constexpr uint64_t kRegionMagic = 0x0155504756534444ULL;  // "DDSVGPU\1"
inline constexpr uint32_t kRegionAbiVersion = 1;
inline constexpr int kMaxSlots = 1024;
inline constexpr int kUuidBytes = 96;

struct RegionDevice {
  char uuid[kUuidBytes];
  uint64_t limit_bytes;  // 0 = unlimited
  int32_t sm_limit_percent;
  uint32_t reserved0;
  pthread_mutex_t lock;  // robust, process-shared; guards `charged`
  std::atomic<uint64_t> charged;
};

struct RegionSlot {
  std::atomic<int32_t> pid;
  uint32_t reserved0;
  // Start time of `pid` (clock ticks since boot, /proc/<pid>/stat field 22),
  // to tell a reused pid from the process that claimed the slot.
  std::atomic<uint64_t> start_time;
  std::atomic<uint64_t> charged[kMaxDevices];
  // GPU time this process's kernels ran, for the SM limiter.
  std::atomic<uint64_t> gpu_ns[kMaxDevices];
};

struct RegionLayout {
  uint64_t magic;
  uint32_t abi_version;
  uint32_t header_bytes;
  uint64_t region_bytes;
  std::atomic<uint32_t> ready;
  std::atomic<uint32_t> device_count;
  std::atomic<uint32_t> slot_high_water;
  uint32_t reserved0;
  // GPU time of processes whose slots were freed, so the container's total
  // never goes backwards when one exits.
  std::atomic<uint64_t> retired_gpu_ns[kMaxDevices];
  RegionDevice devices[kMaxDevices];
  RegionSlot slots[kMaxSlots];
};

// Test-only crash points (DEVICESHARE_VGPU_FAILPOINT): the library SIGKILLs
// itself there so tests can prove recovery from a death in each critical
// section.
enum class Failpoint {
  kNone,
  kRegionInit,
  kSlotClaim,
  kReserve,
  kRelease,
  kReclaim
};
Failpoint ParseFailpoint(const char* name);

class SharedRegion {
 public:
  // Opens (creating or rebuilding if absent, torn or of another version)
  // the region at `path`. Null with `error` set when the file cannot be
  // opened or mapped. `failpoint` is for tests.
  static SharedRegion* Open(const std::string& path, Failpoint failpoint,
                            std::string* error);
  // A region in this process's memory only, for when the file cannot be
  // used: limits still hold per process, just not across the container.
  static SharedRegion* OpenPrivate(Failpoint failpoint);
  // Maps an existing region read-only, for monitors and tests. Null when it
  // is absent or not a current-version region.
  static const RegionLayout* MapForReading(const std::string& path,
                                           std::string* error);

  // The region's index for `uuid`, entering it with these limits if new.
  // If the region already holds other limits for it, the region's stay
  // (the container's first process set them) unless no live process is
  // attached, in which case ours replace them; `*mismatch` tells which.
  // -1 when the table is full.
  int DeviceIndex(const char* uuid, uint64_t limit_bytes, int sm_percent,
                  bool* mismatch);

  // Claims this process's slot; Reserve() does it on first use. False when
  // all are taken by live processes.
  bool AttachProcess();
  // In a forked child: the slot is the parent's; the child claims its own.
  void ForgetSlotAfterFork() { slot_ = -1; }
  // Refunds everything this process still holds and frees the slot.
  void DetachProcess();

  // Charges `bytes` to `device` for this process unless that would pass
  // the limit (after reclaiming dead processes). Unlimited devices always
  // succeed.
  bool Reserve(int device, uint64_t bytes);
  void Release(int device, uint64_t bytes);

  uint64_t Charged(int device) const;
  uint64_t Limit(int device) const;
  int slot() const { return slot_; }
  RegionLayout* layout() { return layout_; }

  // The SM limiter's view: this process's measured GPU time and the sum
  // over the container's live processes.
  void AddGpuTime(int device, uint64_t ns);
  uint64_t ContainerGpuTime(int device) const;

  // Reclaims the slots of dead processes; returns how many.
  int ReclaimDead();

 private:
  SharedRegion(RegionLayout* layout, int fd, Failpoint failpoint)
      : layout_(layout), fd_(fd), failpoint_(failpoint) {}
  bool Lock(int device);
  void Unlock(int device);
  void RepairAfterOwnerDeath(int device);
  bool SlotDead(int slot) const;
  void ReclaimSlotLocked(int device, int slot);
  void Crash(Failpoint where) const;

  RegionLayout* layout_;
  int fd_;
  Failpoint failpoint_;
  int slot_ = -1;
  pid_t slot_pid_ = 0;
};

// Start time of `pid` in clock ticks since boot; 0 when unknown.
uint64_t ProcessStartTime(pid_t pid);

}  // namespace deviceshare::vgpu

#endif  // DEVICESHARE_VGPU_SHARED_REGION_H_
