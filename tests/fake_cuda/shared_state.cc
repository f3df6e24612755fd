// The fake driver's writes to the cross-process state (see shared_state.h).
#include "shared_state.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace fake_cuda {
namespace {

// How long a joiner waits for another process to finish stamping a new
// file or claiming a slot: those are a handful of stores, so only a
// process killed in the middle makes this expire.
constexpr uint64_t kClaimWaitNs = 2'000'000'000;

void Pause() { sched_yield(); }

void Stamp(StateFile& state) {
  state.version = kStateVersion;
  state.max_devices = kMaxDevices;
  state.file_bytes = sizeof(StateFile);
  state.max_processes = kMaxProcesses;
  state.kernel_capacity = kKernelRingCapacity;
  state.magic.store(kStateMagic, std::memory_order_release);
}

}  // namespace

uint64_t MonotonicNowNs() {
  timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

void SleepUntilNs(uint64_t deadline_ns) {
  timespec until;
  until.tv_sec = static_cast<time_t>(deadline_ns / 1'000'000'000);
  until.tv_nsec = static_cast<long>(deadline_ns % 1'000'000'000);
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, nullptr) ==
         EINTR) {
  }
}

bool SharedState::Open(const std::string& path, std::string* error) {
  Close();
  if (path.empty()) {
    void* map = mmap(nullptr, sizeof(StateFile), PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED) {
      *error = std::string("mmap: ") + std::strerror(errno);
      return false;
    }
    state_ = static_cast<StateFile*>(map);
    shared_ = false;
    Stamp(*state_);
    return true;
  }
  const int fd = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0) {
    *error = path + ": " + std::strerror(errno);
    return false;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    *error = path + ": " + std::strerror(errno);
    close(fd);
    return false;
  }
  // Only an empty file is ours to size; two creators racing both truncate
  // to the same size, which is harmless.
  if (st.st_size == 0 && ftruncate(fd, sizeof(StateFile)) != 0) {
    *error = path + ": ftruncate: " + std::strerror(errno);
    close(fd);
    return false;
  }
  if (st.st_size != 0 &&
      static_cast<uint64_t>(st.st_size) != sizeof(StateFile)) {
    *error = path + ": a state file of another layout (size " +
             std::to_string(st.st_size) + ")";
    close(fd);
    return false;
  }
  void* map = mmap(nullptr, sizeof(StateFile), PROT_READ | PROT_WRITE,
                   MAP_SHARED, fd, 0);
  close(fd);
  if (map == MAP_FAILED) {
    *error = path + ": mmap: " + std::strerror(errno);
    return false;
  }
  state_ = static_cast<StateFile*>(map);
  shared_ = true;
  uint64_t magic = 0;
  if (state_->magic.compare_exchange_strong(magic, kStateInitializing,
                                            std::memory_order_acq_rel)) {
    Stamp(*state_);
  } else {
    const uint64_t give_up = MonotonicNowNs() + kClaimWaitNs;
    while (state_->magic.load(std::memory_order_acquire) ==
               kStateInitializing &&
           MonotonicNowNs() < give_up) {
      Pause();
    }
  }
  if (!HeaderMatches(*state_)) {
    *error = path + ": header of another layout version or unfinished";
    Close();
    return false;
  }
  return true;
}

void SharedState::Close() {
  if (state_ != nullptr) munmap(state_, sizeof(StateFile));
  state_ = nullptr;
  process_slot_ = -1;
}

int SharedState::ClaimDevice(const std::string& uuid, uint64_t total_bytes,
                             std::string* error) {
  for (uint32_t i = 0; i < kMaxDevices; ++i) {
    DeviceSlot& slot = state_->devices[i];
    uint32_t seen = slot.state.load(std::memory_order_acquire);
    if (seen == kSlotFree &&
        slot.state.compare_exchange_strong(seen, kSlotClaiming,
                                           std::memory_order_acq_rel)) {
      std::snprintf(slot.uuid, sizeof(slot.uuid), "%s", uuid.c_str());
      slot.total_bytes.store(total_bytes, std::memory_order_relaxed);
      slot.state.store(kSlotReady, std::memory_order_release);
      return static_cast<int>(i);
    }
    const uint64_t give_up = MonotonicNowNs() + kClaimWaitNs;
    while (slot.state.load(std::memory_order_acquire) == kSlotClaiming &&
           MonotonicNowNs() < give_up) {
      Pause();
    }
    if (slot.state.load(std::memory_order_acquire) == kSlotReady &&
        uuid == slot.uuid) {
      return static_cast<int>(i);
    }
  }
  *error = "no free device slot for " + uuid + " in the state file";
  return -1;
}

void SharedState::Join(int32_t pid) {
  pid_ = pid;
  ReclaimDead();
  process_slot_ = -1;
  for (uint32_t i = 0; i < kMaxProcesses; ++i) {
    int32_t expected = 0;
    if (state_->processes[i].pid.compare_exchange_strong(
            expected, pid, std::memory_order_acq_rel)) {
      process_slot_ = static_cast<int>(i);
      return;
    }
  }
  // All slots taken: this process's charges simply cannot be reclaimed
  // after it dies.
}

void SharedState::ReclaimDead() {
  if (!shared_) return;
  for (ProcessSlot& process : state_->processes) {
    int32_t pid = process.pid.load(std::memory_order_acquire);
    if (pid <= 0 || ProcessAlive(pid)) continue;
    if (!process.pid.compare_exchange_strong(pid, kPidReclaiming,
                                             std::memory_order_acq_rel)) {
      continue;  // another process reclaims it
    }
    for (uint32_t d = 0; d < kMaxDevices; ++d) {
      const uint64_t held =
          process.used_bytes[d].exchange(0, std::memory_order_acq_rel);
      if (held != 0) {
        state_->devices[d].used_bytes.fetch_sub(held,
                                                std::memory_order_acq_rel);
      }
    }
    process.pid.store(0, std::memory_order_release);
  }
}

bool SharedState::Charge(int slot, uint64_t bytes, uint64_t total_bytes) {
  std::atomic<uint64_t>& used = state_->devices[slot].used_bytes;
  for (int attempt = 0; attempt < 2; ++attempt) {
    uint64_t current = used.load(std::memory_order_acquire);
    bool fits = true;
    while (true) {
      if (bytes > total_bytes || current > total_bytes - bytes) {
        fits = false;
        break;
      }
      if (used.compare_exchange_weak(current, current + bytes,
                                     std::memory_order_acq_rel)) {
        break;
      }
    }
    if (fits) {
      if (process_slot_ >= 0) {
        state_->processes[process_slot_].used_bytes[slot].fetch_add(
            bytes, std::memory_order_acq_rel);
      }
      return true;
    }
    ReclaimDead();
  }
  return false;
}

void SharedState::Uncharge(int slot, uint64_t bytes) {
  if (bytes == 0) return;
  if (process_slot_ >= 0) {
    state_->processes[process_slot_].used_bytes[slot].fetch_sub(
        bytes, std::memory_order_acq_rel);
  }
  state_->devices[slot].used_bytes.fetch_sub(bytes, std::memory_order_acq_rel);
}

uint64_t SharedState::Used(int slot) const {
  return state_->devices[slot].used_bytes.load(std::memory_order_acquire);
}

uint64_t SharedState::Schedule(int slot, uint64_t earliest_ns,
                               uint64_t duration_ns) {
  std::atomic<uint64_t>& busy = state_->devices[slot].busy_until_ns;
  uint64_t until = busy.load(std::memory_order_acquire);
  if (duration_ns == 0) return std::max(earliest_ns, until);
  while (true) {
    const uint64_t start = std::max(earliest_ns, until);
    if (busy.compare_exchange_weak(until, start + duration_ns,
                                   std::memory_order_acq_rel)) {
      return start;
    }
  }
}

void SharedState::LogKernel(int slot, uint64_t start_ns, uint64_t end_ns) {
  const uint64_t index =
      state_->kernel_write_index.fetch_add(1, std::memory_order_acq_rel);
  KernelRecord& record = state_->kernels[index % kKernelRingCapacity];
  record.seq.store(0, std::memory_order_relaxed);
  std::atomic_thread_fence(std::memory_order_release);
  record.pid.store(pid_, std::memory_order_relaxed);
  record.device.store(static_cast<uint32_t>(slot), std::memory_order_relaxed);
  record.start_ns.store(start_ns, std::memory_order_relaxed);
  record.end_ns.store(end_ns, std::memory_order_relaxed);
  record.seq.store(index + 1, std::memory_order_release);
}

}  // namespace fake_cuda
