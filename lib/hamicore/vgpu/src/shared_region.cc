#include "shared_region.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <new>

#include "log.h"

namespace deviceshare::vgpu {
namespace {

struct ProcessInfo {
  bool exists = false;
  char state = '?';
  uint64_t start_time = 0;
};

ProcessInfo ReadProcess(pid_t pid) {
  ProcessInfo info;
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return info;
  char text[1024];
  ssize_t length = read(fd, text, sizeof(text) - 1);
  close(fd);
  if (length <= 0) return info;
  text[length] = '\0';
  // The command name may hold spaces and parentheses; fields resume after
  // the last ')'.
  const char* rest = std::strrchr(text, ')');
  if (rest == nullptr) return info;
  info.exists = true;
  // Field 3 is the state; field 22 the start time.
  int field = 2;
  for (const char* p = rest + 1; *p != '\0'; ++p) {
    if (*p != ' ') continue;
    ++field;
    if (field == 3) info.state = p[1];
    if (field == 22) {
      info.start_time = std::strtoull(p + 1, nullptr, 10);
      break;
    }
  }
  return info;
}

bool LockFile(int fd) {
  while (flock(fd, LOCK_EX) != 0) {
    if (errno != EINTR) return false;
  }
  return true;
}

void UnlockFile(int fd) { flock(fd, LOCK_UN); }

bool InitMutex(pthread_mutex_t* mutex) {
  pthread_mutexattr_t attributes;
  if (pthread_mutexattr_init(&attributes) != 0) return false;
  pthread_mutexattr_setpshared(&attributes, PTHREAD_PROCESS_SHARED);
  pthread_mutexattr_setrobust(&attributes, PTHREAD_MUTEX_ROBUST);
  int rc = pthread_mutex_init(mutex, &attributes);
  pthread_mutexattr_destroy(&attributes);
  return rc == 0;
}

bool HeaderValid(const RegionLayout* layout) {
  return layout->magic == kRegionMagic &&
         layout->abi_version == kRegionAbiVersion &&
         layout->header_bytes == sizeof(RegionLayout) &&
         layout->region_bytes == sizeof(RegionLayout) &&
         layout->ready.load(std::memory_order_acquire) == 1;
}

}  // namespace

uint64_t ProcessStartTime(pid_t pid) { return ReadProcess(pid).start_time; }

Failpoint ParseFailpoint(const char* name) {
  if (name == nullptr) return Failpoint::kNone;
  if (std::strcmp(name, "region-init") == 0) return Failpoint::kRegionInit;
  if (std::strcmp(name, "slot-claim") == 0) return Failpoint::kSlotClaim;
  if (std::strcmp(name, "reserve") == 0) return Failpoint::kReserve;
  if (std::strcmp(name, "release") == 0) return Failpoint::kRelease;
  if (std::strcmp(name, "reclaim") == 0) return Failpoint::kReclaim;
  return Failpoint::kNone;
}

SharedRegion* SharedRegion::Open(const std::string& path, Failpoint failpoint,
                                 std::string* error) {
  int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) {
    *error = "cannot open " + path + ": " + std::strerror(errno);
    return nullptr;
  }
  // Every process of the container, whatever its uid, must share the file.
  fchmod(fd, 0666);
  if (!LockFile(fd)) {
    *error = "cannot lock " + path + ": " + std::strerror(errno);
    close(fd);
    return nullptr;
  }
  struct stat info;
  bool sized = fstat(fd, &info) == 0 &&
               static_cast<size_t>(info.st_size) == sizeof(RegionLayout);
  if (!sized && ftruncate(fd, sizeof(RegionLayout)) != 0) {
    *error = "cannot size " + path + ": " + std::strerror(errno);
    UnlockFile(fd);
    close(fd);
    return nullptr;
  }
  void* memory = mmap(nullptr, sizeof(RegionLayout), PROT_READ | PROT_WRITE,
                      MAP_SHARED, fd, 0);
  if (memory == MAP_FAILED) {
    *error = "cannot map " + path + ": " + std::strerror(errno);
    UnlockFile(fd);
    close(fd);
    return nullptr;
  }
  auto* layout = static_cast<RegionLayout*>(memory);
  auto* region = new (std::nothrow) SharedRegion(layout, fd, failpoint);
  if (region == nullptr) {
    munmap(memory, sizeof(RegionLayout));
    UnlockFile(fd);
    close(fd);
    *error = "out of memory";
    return nullptr;
  }
  if (!sized || !HeaderValid(layout)) {
    if (sized) {
      VGPU_LOG(kWarning, "rebuilding region %s (torn, foreign or old)",
               path.c_str());
    }
    layout->ready.store(0, std::memory_order_relaxed);
    std::memset(static_cast<void*>(layout), 0, sizeof(RegionLayout));
    region->Crash(Failpoint::kRegionInit);
    for (RegionDevice& device : layout->devices) InitMutex(&device.lock);
    layout->magic = kRegionMagic;
    layout->abi_version = kRegionAbiVersion;
    layout->header_bytes = sizeof(RegionLayout);
    layout->region_bytes = sizeof(RegionLayout);
    layout->ready.store(1, std::memory_order_release);
  }
  UnlockFile(fd);
  return region;
}

SharedRegion* SharedRegion::OpenPrivate(Failpoint failpoint) {
  void* memory = mmap(nullptr, sizeof(RegionLayout), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) return nullptr;
  int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);  // flock target only
  auto* layout = static_cast<RegionLayout*>(memory);
  for (RegionDevice& device : layout->devices) InitMutex(&device.lock);
  layout->magic = kRegionMagic;
  layout->abi_version = kRegionAbiVersion;
  layout->header_bytes = sizeof(RegionLayout);
  layout->region_bytes = sizeof(RegionLayout);
  layout->ready.store(1, std::memory_order_release);
  return new (std::nothrow) SharedRegion(layout, fd, failpoint);
}

const RegionLayout* SharedRegion::MapForReading(const std::string& path,
                                                std::string* error) {
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    *error = "cannot open " + path + ": " + std::strerror(errno);
    return nullptr;
  }
  struct stat info;
  if (fstat(fd, &info) != 0 ||
      static_cast<size_t>(info.st_size) != sizeof(RegionLayout)) {
    *error = path + " is not a deviceshare vgpu region (size)";
    close(fd);
    return nullptr;
  }
  void* memory =
      mmap(nullptr, sizeof(RegionLayout), PROT_READ, MAP_SHARED, fd, 0);
  close(fd);
  if (memory == MAP_FAILED) {
    *error = "cannot map " + path + ": " + std::strerror(errno);
    return nullptr;
  }
  const auto* layout = static_cast<const RegionLayout*>(memory);
  if (!HeaderValid(layout)) {
    *error = path + " is not a current deviceshare vgpu region (header)";
    munmap(memory, sizeof(RegionLayout));
    return nullptr;
  }
  return layout;
}

void SharedRegion::Crash(Failpoint where) const {
  if (failpoint_ == where && where != Failpoint::kNone) {
    kill(getpid(), SIGKILL);
  }
}

bool SharedRegion::SlotDead(int slot) const {
  const RegionSlot& entry = layout_->slots[slot];
  pid_t pid = entry.pid.load(std::memory_order_acquire);
  if (pid == 0) return false;
  if (kill(pid, 0) != 0 && errno == ESRCH) return true;
  ProcessInfo info = ReadProcess(pid);
  if (!info.exists) return false;  // another pid namespace: trust kill()
  if (info.state == 'Z' || info.state == 'X') return true;
  uint64_t start = entry.start_time.load(std::memory_order_acquire);
  return start != 0 && info.start_time != 0 && info.start_time != start;
}

bool SharedRegion::Lock(int device) {
  pthread_mutex_t* mutex = &layout_->devices[device].lock;
  int rc = pthread_mutex_lock(mutex);
  if (rc == ENOTRECOVERABLE) {
    // A previous repairer died too; nobody can hold it now.
    InitMutex(mutex);
    rc = pthread_mutex_lock(mutex);
    if (rc == 0) rc = EOWNERDEAD;
  }
  if (rc == EOWNERDEAD) {
    VGPU_LOG(kWarning, "device %d: lock holder died; repairing the ledger",
             device);
    RepairAfterOwnerDeath(device);
    pthread_mutex_consistent(mutex);
    return true;
  }
  return rc == 0;
}

void SharedRegion::Unlock(int device) {
  pthread_mutex_unlock(&layout_->devices[device].lock);
}

void SharedRegion::RepairAfterOwnerDeath(int device) {
  uint32_t high_water =
      layout_->slot_high_water.load(std::memory_order_acquire);
  uint64_t total = 0;
  for (uint32_t slot = 0; slot < high_water && slot < kMaxSlots; ++slot) {
    RegionSlot& entry = layout_->slots[slot];
    if (entry.pid.load(std::memory_order_acquire) == 0 ||
        SlotDead(static_cast<int>(slot))) {
      entry.charged[device].store(0, std::memory_order_relaxed);
      continue;
    }
    total += entry.charged[device].load(std::memory_order_relaxed);
  }
  layout_->devices[device].charged.store(total, std::memory_order_release);
}

void SharedRegion::ReclaimSlotLocked(int device, int slot) {
  RegionSlot& entry = layout_->slots[slot];
  uint64_t held = entry.charged[device].load(std::memory_order_relaxed);
  std::atomic<uint64_t>& charged = layout_->devices[device].charged;
  uint64_t total = charged.load(std::memory_order_relaxed);
  charged.store(total > held ? total - held : 0, std::memory_order_release);
  Crash(Failpoint::kReclaim);
  entry.charged[device].store(0, std::memory_order_relaxed);
}

int SharedRegion::ReclaimDead() {
  int reclaimed = 0;
  uint32_t high_water =
      layout_->slot_high_water.load(std::memory_order_acquire);
  uint32_t devices = layout_->device_count.load(std::memory_order_acquire);
  for (uint32_t slot = 0; slot < high_water && slot < kMaxSlots; ++slot) {
    if (static_cast<int>(slot) == slot_ || !SlotDead(static_cast<int>(slot))) {
      continue;
    }
    RegionSlot& entry = layout_->slots[slot];
    pid_t dead = entry.pid.load(std::memory_order_acquire);
    for (uint32_t device = 0; device < devices; ++device) {
      if (entry.charged[device].load(std::memory_order_relaxed) == 0) continue;
      if (!Lock(static_cast<int>(device))) continue;
      ReclaimSlotLocked(static_cast<int>(device), static_cast<int>(slot));
      Unlock(static_cast<int>(device));
    }
    for (uint32_t device = 0; device < kMaxDevices; ++device) {
      uint64_t ns = entry.gpu_ns[device].exchange(0, std::memory_order_relaxed);
      layout_->retired_gpu_ns[device].fetch_add(ns, std::memory_order_relaxed);
    }
    entry.start_time.store(0, std::memory_order_relaxed);
    if (entry.pid.compare_exchange_strong(dead, 0)) {
      ++reclaimed;
      VGPU_LOG(kInfo, "reclaimed the slot of dead process %d",
               static_cast<int>(dead));
    }
  }
  return reclaimed;
}

bool SharedRegion::AttachProcess() {
  if (slot_ >= 0) return true;
  pid_t pid = getpid();
  uint64_t start = ProcessStartTime(pid);
  for (int attempt = 0; attempt < 2; ++attempt) {
    for (int slot = 0; slot < kMaxSlots; ++slot) {
      RegionSlot& entry = layout_->slots[slot];
      int32_t expected = 0;
      if (!entry.pid.compare_exchange_strong(expected, pid)) continue;
      Crash(Failpoint::kSlotClaim);
      entry.start_time.store(start, std::memory_order_release);
      uint32_t high_water = layout_->slot_high_water.load();
      while (high_water < static_cast<uint32_t>(slot + 1) &&
             !layout_->slot_high_water.compare_exchange_weak(
                 high_water, static_cast<uint32_t>(slot + 1))) {
      }
      slot_ = slot;
      slot_pid_ = pid;
      return true;
    }
    if (ReclaimDead() == 0) break;
  }
  VGPU_LOG(kError, "all %d process slots of the region are taken", kMaxSlots);
  return false;
}

void SharedRegion::DetachProcess() {
  if (slot_ < 0 || slot_pid_ != getpid()) return;
  RegionSlot& entry = layout_->slots[slot_];
  uint32_t devices = layout_->device_count.load(std::memory_order_acquire);
  for (uint32_t device = 0; device < devices; ++device) {
    if (entry.charged[device].load(std::memory_order_relaxed) == 0) continue;
    if (!Lock(static_cast<int>(device))) continue;
    ReclaimSlotLocked(static_cast<int>(device), slot_);
    Unlock(static_cast<int>(device));
  }
  for (uint32_t device = 0; device < kMaxDevices; ++device) {
    uint64_t ns = entry.gpu_ns[device].exchange(0, std::memory_order_relaxed);
    layout_->retired_gpu_ns[device].fetch_add(ns, std::memory_order_relaxed);
  }
  entry.start_time.store(0, std::memory_order_relaxed);
  entry.pid.store(0, std::memory_order_release);
  slot_ = -1;
}

int SharedRegion::DeviceIndex(const char* uuid, uint64_t limit_bytes,
                              int sm_percent, bool* mismatch) {
  *mismatch = false;
  auto find = [&]() -> int {
    uint32_t count = layout_->device_count.load(std::memory_order_acquire);
    for (uint32_t i = 0; i < count && i < kMaxDevices; ++i) {
      if (std::strncmp(layout_->devices[i].uuid, uuid, kUuidBytes) == 0) {
        return static_cast<int>(i);
      }
    }
    return -1;
  };
  int index = find();
  if (index >= 0 && layout_->devices[index].limit_bytes == limit_bytes &&
      layout_->devices[index].sm_limit_percent == sm_percent) {
    return index;
  }
  if (!LockFile(fd_)) return index;
  index = find();
  if (index < 0) {
    uint32_t count = layout_->device_count.load(std::memory_order_acquire);
    if (count >= kMaxDevices) {
      UnlockFile(fd_);
      return -1;
    }
    RegionDevice& device = layout_->devices[count];
    std::strncpy(device.uuid, uuid, kUuidBytes - 1);
    device.uuid[kUuidBytes - 1] = '\0';
    device.limit_bytes = limit_bytes;
    device.sm_limit_percent = sm_percent;
    layout_->device_count.store(count + 1, std::memory_order_release);
    index = static_cast<int>(count);
  } else {
    RegionDevice& device = layout_->devices[index];
    if (device.limit_bytes != limit_bytes ||
        device.sm_limit_percent != sm_percent) {
      ReclaimDead();
      bool others_alive = false;
      uint32_t high_water = layout_->slot_high_water.load();
      for (uint32_t slot = 0; slot < high_water && slot < kMaxSlots; ++slot) {
        if (static_cast<int>(slot) != slot_ &&
            layout_->slots[slot].pid.load() != 0) {
          others_alive = true;
        }
      }
      if (others_alive) {
        *mismatch = true;
      } else {
        device.limit_bytes = limit_bytes;
        device.sm_limit_percent = sm_percent;
      }
    }
  }
  UnlockFile(fd_);
  return index;
}

bool SharedRegion::Reserve(int device, uint64_t bytes) {
  if (device < 0) return true;
  if (slot_ < 0 && !AttachProcess()) {
    return layout_->devices[device].limit_bytes == 0;
  }
  RegionDevice& entry = layout_->devices[device];
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (!Lock(device)) return false;
    uint64_t charged = entry.charged.load(std::memory_order_relaxed);
    if (entry.limit_bytes == 0 ||
        (bytes <= entry.limit_bytes && charged <= entry.limit_bytes - bytes)) {
      entry.charged.store(charged + bytes, std::memory_order_release);
      Crash(Failpoint::kReserve);
      layout_->slots[slot_].charged[device].fetch_add(
          bytes, std::memory_order_relaxed);
      Unlock(device);
      return true;
    }
    Unlock(device);
    if (attempt == 0 && ReclaimDead() == 0) break;
  }
  return false;
}

void SharedRegion::Release(int device, uint64_t bytes) {
  if (device < 0 || slot_ < 0 || bytes == 0) return;
  if (!Lock(device)) return;
  std::atomic<uint64_t>& own = layout_->slots[slot_].charged[device];
  uint64_t held = own.load(std::memory_order_relaxed);
  uint64_t take = bytes < held ? bytes : held;
  own.store(held - take, std::memory_order_relaxed);
  Crash(Failpoint::kRelease);
  std::atomic<uint64_t>& charged = layout_->devices[device].charged;
  uint64_t total = charged.load(std::memory_order_relaxed);
  charged.store(total > take ? total - take : 0, std::memory_order_release);
  Unlock(device);
}

uint64_t SharedRegion::Charged(int device) const {
  if (device < 0) return 0;
  return layout_->devices[device].charged.load(std::memory_order_acquire);
}

uint64_t SharedRegion::Limit(int device) const {
  if (device < 0) return 0;
  return layout_->devices[device].limit_bytes;
}

void SharedRegion::AddGpuTime(int device, uint64_t ns) {
  if (device < 0 || slot_ < 0) return;
  layout_->slots[slot_].gpu_ns[device].fetch_add(ns, std::memory_order_relaxed);
}

uint64_t SharedRegion::ContainerGpuTime(int device) const {
  if (device < 0) return 0;
  uint64_t total =
      layout_->retired_gpu_ns[device].load(std::memory_order_relaxed);
  uint32_t high_water =
      layout_->slot_high_water.load(std::memory_order_acquire);
  for (uint32_t slot = 0; slot < high_water && slot < kMaxSlots; ++slot) {
    total +=
        layout_->slots[slot].gpu_ns[device].load(std::memory_order_relaxed);
  }
  return total;
}

}  // namespace deviceshare::vgpu
