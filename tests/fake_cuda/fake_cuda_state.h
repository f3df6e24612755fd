// File: tests/fake_cuda/fake_cuda_state.h
//
// The fake CUDA driver's cross-process state: what every process that runs
// on the fake libcuda.so.1 with the same FAKE_CUDA_STATE file shares, the
// way processes share a real GPU. The file is mmap'ed MAP_SHARED and holds,
// per physical GPU (by uuid), the physical bytes charged, the end of the
// GPU's virtual timeline, and one ring of the kernels run on any GPU. All
// of it is std::atomic and lock-free, so a process killed at any point
// leaves nothing locked; charges of dead processes are kept per process so
// the next cuInit (and readers) can discount them, as a real driver frees
// a dead process's memory.
//
// A zero-filled file is a valid empty state: creators only size the file
// and stamp the header. The layout is versioned; a reader or writer of
// another version refuses the file instead of misreading it.
//
// The small reader API below (StateReader) is header-only so the fake NVML
// and the tests can use it without linking the fake driver.
#ifndef DEVICESHARE_TESTS_FAKE_CUDA_FAKE_CUDA_STATE_H_
#define DEVICESHARE_TESTS_FAKE_CUDA_FAKE_CUDA_STATE_H_

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

namespace fake_cuda {

inline constexpr uint64_t kStateMagic = 0x41445543454b4146ULL;  // "FAKECUDA"
// What a creator writes into `magic` while it stamps the header.
inline constexpr uint64_t kStateInitializing = 1;
inline constexpr uint32_t kStateVersion = 1;
inline constexpr uint32_t kMaxDevices = 16;
inline constexpr uint32_t kMaxProcesses = 1024;
inline constexpr uint64_t kKernelRingCapacity = uint64_t{1} << 18;
inline constexpr size_t kUuidChars = 48;  // "GPU-" + 36 + NUL, padded

// DeviceSlot::state.
inline constexpr uint32_t kSlotFree = 0;
inline constexpr uint32_t kSlotClaiming = 1;  // uuid being written
inline constexpr uint32_t kSlotReady = 2;

struct DeviceSlot {
  std::atomic<uint32_t> state;
  uint32_t unused;
  char uuid[kUuidChars];  // written before state becomes kSlotReady
  std::atomic<uint64_t> total_bytes;
  std::atomic<uint64_t> used_bytes;     // physical, all processes
  std::atomic<uint64_t> busy_until_ns;  // CLOCK_MONOTONIC
  uint64_t spare[2];
};

// ProcessSlot::pid: 0 free, kPidReclaiming while a dead owner's charges
// are being returned, else the owner.
inline constexpr int32_t kPidReclaiming = -1;

struct ProcessSlot {
  std::atomic<int32_t> pid;
  uint32_t unused;
  std::atomic<uint64_t> used_bytes[kMaxDevices];  // by device slot
};

// One kernel, written seqlock-style: `seq` is the ring index + 1 once the
// fields are complete, 0 while they are written.
struct KernelRecord {
  std::atomic<uint64_t> seq;
  std::atomic<int32_t> pid;
  std::atomic<uint32_t> device;  // DeviceSlot index
  std::atomic<uint64_t> start_ns;
  std::atomic<uint64_t> end_ns;
};

struct StateFile {
  std::atomic<uint64_t> magic;
  uint32_t version;
  uint32_t max_devices;
  uint64_t file_bytes;
  uint32_t max_processes;
  uint32_t unused;
  uint64_t kernel_capacity;
  DeviceSlot devices[kMaxDevices];
  ProcessSlot processes[kMaxProcesses];
  std::atomic<uint64_t> kernel_write_index;
  uint64_t spare[7];
  KernelRecord kernels[kKernelRingCapacity];
};

static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(std::atomic<int32_t>::is_always_lock_free);
static_assert(sizeof(std::atomic<uint64_t>) == 8);
static_assert(sizeof(KernelRecord) == 32);

// True unless `pid` certainly no longer exists (a zombie still counts).
inline bool ProcessAlive(int32_t pid) {
  return pid <= 0 || kill(pid, 0) == 0 || errno != ESRCH;
}

// Whether `state` is a complete header of this layout version.
inline bool HeaderMatches(const StateFile& state) {
  return state.magic.load(std::memory_order_acquire) == kStateMagic &&
         state.version == kStateVersion && state.max_devices == kMaxDevices &&
         state.max_processes == kMaxProcesses &&
         state.kernel_capacity == kKernelRingCapacity &&
         state.file_bytes == sizeof(StateFile);
}

// A kernel as readers see it.
struct KernelView {
  uint64_t index = 0;  // position in the log since the file was created
  int32_t pid = 0;
  uint32_t device = 0;  // DeviceSlot index; DeviceUuid() names it
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
};

// Read-only view of a state file, for the fake NVML and the tests.
class StateReader {
 public:
  StateReader() = default;
  ~StateReader() { Close(); }
  StateReader(const StateReader&) = delete;
  StateReader& operator=(const StateReader&) = delete;

  // Maps `path` read-only. False, with `error` set when given, if it is
  // absent, not yet stamped, or of another layout.
  bool Open(const std::string& path, std::string* error = nullptr) {
    Close();
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return Fail(error, path + ": " + std::strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0 ||
        static_cast<uint64_t>(st.st_size) != sizeof(StateFile)) {
      close(fd);
      return Fail(error, path + ": not a fake CUDA state file of version " +
                             std::to_string(kStateVersion));
    }
    void* map = mmap(nullptr, sizeof(StateFile), PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (map == MAP_FAILED) return Fail(error, path + ": mmap failed");
    state_ = static_cast<const StateFile*>(map);
    inode_ = st.st_ino;
    if (!HeaderMatches(*state_)) {
      Close();
      return Fail(error, path + ": header of another layout or unfinished");
    }
    return true;
  }

  void Close() {
    if (state_ != nullptr) {
      munmap(const_cast<StateFile*>(state_), sizeof(StateFile));
    }
    state_ = nullptr;
  }

  bool is_open() const { return state_ != nullptr; }
  // The inode mapped, so a caller can notice the file was replaced.
  ino_t inode() const { return inode_; }

  // The slot of `uuid`, or -1 when no process has used that GPU yet.
  int SlotOf(std::string_view uuid) const {
    if (state_ == nullptr) return -1;
    for (uint32_t i = 0; i < kMaxDevices; ++i) {
      const DeviceSlot& slot = state_->devices[i];
      if (slot.state.load(std::memory_order_acquire) == kSlotReady &&
          uuid == std::string_view(slot.uuid)) {
        return static_cast<int>(i);
      }
    }
    return -1;
  }

  std::string DeviceUuid(uint32_t slot) const {
    if (state_ == nullptr || slot >= kMaxDevices ||
        state_->devices[slot].state.load(std::memory_order_acquire) !=
            kSlotReady) {
      return "";
    }
    return state_->devices[slot].uuid;
  }

  // Physical bytes held on `uuid` by live processes (what a dead process
  // still holds is discounted, as the driver would have freed it); nullopt
  // when no process has used that GPU.
  std::optional<uint64_t> PhysicalUsed(std::string_view uuid) const {
    const int slot = SlotOf(uuid);
    if (slot < 0) return std::nullopt;
    uint64_t used =
        state_->devices[slot].used_bytes.load(std::memory_order_acquire);
    for (const ProcessSlot& process : state_->processes) {
      const int32_t pid = process.pid.load(std::memory_order_acquire);
      if (pid <= 0 || ProcessAlive(pid)) continue;
      const uint64_t dead =
          process.used_bytes[slot].load(std::memory_order_acquire);
      used = used > dead ? used - dead : 0;
    }
    return used;
  }

  // End of the GPU's virtual timeline (CLOCK_MONOTONIC ns).
  std::optional<uint64_t> BusyUntil(std::string_view uuid) const {
    const int slot = SlotOf(uuid);
    if (slot < 0) return std::nullopt;
    return state_->devices[slot].busy_until_ns.load(std::memory_order_acquire);
  }

  // Kernels logged since the file was created (the ring keeps the last
  // kKernelRingCapacity of them).
  uint64_t KernelsLogged() const {
    return state_ == nullptr
               ? 0
               : state_->kernel_write_index.load(std::memory_order_acquire);
  }

  // Calls fn(const KernelView&) for each complete record still in the ring,
  // oldest first. Records being written are skipped.
  template <class Fn>
  void ForEachKernel(Fn&& fn) const {
    const uint64_t end = KernelsLogged();
    const uint64_t begin =
        end > kKernelRingCapacity ? end - kKernelRingCapacity : 0;
    for (uint64_t i = begin; i < end; ++i) {
      const KernelRecord& record = state_->kernels[i % kKernelRingCapacity];
      if (record.seq.load(std::memory_order_acquire) != i + 1) continue;
      KernelView view;
      view.index = i;
      view.pid = record.pid.load(std::memory_order_relaxed);
      view.device = record.device.load(std::memory_order_relaxed);
      view.start_ns = record.start_ns.load(std::memory_order_relaxed);
      view.end_ns = record.end_ns.load(std::memory_order_relaxed);
      std::atomic_thread_fence(std::memory_order_acquire);
      if (record.seq.load(std::memory_order_relaxed) != i + 1) continue;
      fn(static_cast<const KernelView&>(view));
    }
  }

 private:
  static bool Fail(std::string* error, const std::string& message) {
    if (error != nullptr) *error = message;
    return false;
  }

  const StateFile* state_ = nullptr;
  ino_t inode_ = 0;
};

}  // namespace fake_cuda

#endif  // DEVICESHARE_TESTS_FAKE_CUDA_FAKE_CUDA_STATE_H_
