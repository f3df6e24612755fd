// File: tests/fake_cuda/shared_state.h
//
// The writer side of fake_cuda_state.h: how the fake driver creates or
// joins the state file and changes it. Every change is a CAS or an atomic
// add on the mapping, so processes sharing the file never wait on each
// other and a SIGKILL at any instruction leaves a consistent state.
//
// Thread safety: all members may be called concurrently once Open() has
// returned.
#ifndef DEVICESHARE_TESTS_FAKE_CUDA_SHARED_STATE_H_
#define DEVICESHARE_TESTS_FAKE_CUDA_SHARED_STATE_H_

#include <cstdint>
#include <string>

#include "fake_cuda_state.h"

namespace fake_cuda {

class SharedState {
 public:
  SharedState() = default;
  SharedState(const SharedState&) = delete;
  SharedState& operator=(const SharedState&) = delete;

  // Maps the file at `path` MAP_SHARED, creating, sizing and stamping it if
  // it is new; an empty path maps private memory instead. False with
  // `error` on a file of another layout or a system error.
  bool Open(const std::string& path, std::string* error);
  // Unmaps without touching the contents (used on re-initialization in a
  // forked child, whose parent still owns its charges).
  void Close();

  // The device slot of `uuid`, claimed if no process has used it yet; -1
  // with `error` when all kMaxDevices slots hold other GPUs.
  int ClaimDevice(const std::string& uuid, uint64_t total_bytes,
                  std::string* error);

  // Returns the charges of dead processes, then takes a process slot for
  // `pid` so its own charges can be returned after it dies.
  void Join(int32_t pid);

  // Adds `bytes` to the slot's physical use unless that would exceed
  // `total_bytes` (then false). Retries once after reclaiming the dead.
  bool Charge(int slot, uint64_t bytes, uint64_t total_bytes);
  void Uncharge(int slot, uint64_t bytes);
  uint64_t Used(int slot) const;

  // Places an item of `duration_ns` on the device's timeline, after
  // `earliest_ns` and after everything placed before it by any process;
  // returns its start. Zero-length items (event records) do not move the
  // timeline.
  uint64_t Schedule(int slot, uint64_t earliest_ns, uint64_t duration_ns);

  // Appends {pid, slot, start, end} to the kernel ring.
  void LogKernel(int slot, uint64_t start_ns, uint64_t end_ns);

  // Gives back what dead processes still have charged.
  void ReclaimDead();

 private:
  StateFile* state_ = nullptr;
  bool shared_ = false;
  int32_t pid_ = 0;
  int process_slot_ = -1;
};

// CLOCK_MONOTONIC in nanoseconds.
uint64_t MonotonicNowNs();
// Sleeps until CLOCK_MONOTONIC reaches `deadline_ns`.
void SleepUntilNs(uint64_t deadline_ns);

}  // namespace fake_cuda

#endif  // DEVICESHARE_TESTS_FAKE_CUDA_SHARED_STATE_H_
