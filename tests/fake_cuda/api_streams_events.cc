// Streams, events and synchronization on the virtual clock. Work "runs"
// on a timeline anchored to CLOCK_MONOTONIC; synchronizing sleeps (without
// the world's lock) until the awaited item's virtual end, and is where
// stream-ordered pools give back reserve above their release threshold.
#include <algorithm>

#include "world.h"

using namespace fake_cuda;

namespace {

#define FAKE_CUDA_ENTER_UNIQUE()                        \
  std::unique_lock<std::mutex> fake_lock(WorldMutex()); \
  if (!TheWorld().initialized) return CUDA_ERROR_NOT_INITIALIZED

// Sleeps until `deadline_ns` with the lock released, then releases pool
// reserves as the driver does when a synchronization completes.
CUresult SleepThenRelease(std::unique_lock<std::mutex>& lock,
                          uint64_t deadline_ns) {
  lock.unlock();
  SleepUntilNs(deadline_ns);
  lock.lock();
  if (!TheWorld().initialized) return CUDA_ERROR_NOT_INITIALIZED;
  ReleasePoolReserves();
  return CUDA_SUCCESS;
}

Event* FindEvent(CUevent handle) {
  auto& events = TheWorld().events;
  auto it = events.find(HandleId(Tag::kEvent, handle));
  return it == events.end() ? nullptr : &it->second;
}

CUresult StreamSynchronize(CUstream handle) {
  FAKE_CUDA_ENTER_UNIQUE();
  CUresult error = CUDA_SUCCESS;
  const Stream* stream = ResolveStream(handle, &error);
  if (stream == nullptr) return error;
  return SleepThenRelease(fake_lock, stream->tail_ns);
}

CUresult EventRecord(CUevent handle, CUstream hstream) {
  FAKE_CUDA_ENTER();
  Event* event = FindEvent(handle);
  if (event == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  CUresult error = CUDA_SUCCESS;
  Stream* stream = ResolveStream(hstream, &error);
  if (stream == nullptr) return error;
  if (stream->device != event->device) return CUDA_ERROR_INVALID_HANDLE;
  World& world = TheWorld();
  // A zero-length item: done once everything enqueued before it on the
  // device, by any process, is.
  const uint64_t stamp =
      world.shared.Schedule(world.devices[stream->device].slot,
                            std::max(MonotonicNowNs(), stream->tail_ns), 0);
  stream->tail_ns = stamp;
  event->recorded = true;
  event->stamp_ns = stamp;
  return CUDA_SUCCESS;
}

CUresult ElapsedTime(float* ms, CUevent start, CUevent end) {
  FAKE_CUDA_ENTER();
  if (ms == nullptr) return CUDA_ERROR_INVALID_VALUE;
  const Event* first = FindEvent(start);
  const Event* last = FindEvent(end);
  if (first == nullptr || last == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if ((first->flags & CU_EVENT_DISABLE_TIMING) != 0 ||
      (last->flags & CU_EVENT_DISABLE_TIMING) != 0 || !first->recorded ||
      !last->recorded) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  const uint64_t now = MonotonicNowNs();
  if (now < first->stamp_ns || now < last->stamp_ns) {
    return CUDA_ERROR_NOT_READY;
  }
  *ms = static_cast<float>((static_cast<double>(last->stamp_ns) -
                            static_cast<double>(first->stamp_ns)) /
                           1e6);
  return CUDA_SUCCESS;
}

}  // namespace

FAKE_CUDA_EXPORT CUresult cuStreamCreate(CUstream* stream, unsigned int flags) {
  FAKE_CUDA_ENTER();
  const int device = CurrentDevice();
  if (device < 0) return CUDA_ERROR_INVALID_CONTEXT;
  if (stream == nullptr || (flags & ~CU_STREAM_NON_BLOCKING) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  World& world = TheWorld();
  const uint64_t id = world.NewId();
  world.streams[id] = Stream{device, 0};
  *stream = MakeHandle<CUstream>(Tag::kStream, id);
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuStreamDestroy_v2(CUstream stream) {
  FAKE_CUDA_ENTER();
  World& world = TheWorld();
  const uint64_t id = HandleId(Tag::kStream, stream);
  for (const Device& device : world.devices) {
    if (device.default_stream == id) return CUDA_ERROR_INVALID_HANDLE;
  }
  if (world.streams.erase(id) == 0) return CUDA_ERROR_INVALID_HANDLE;
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuStreamSynchronize(CUstream stream) {
  return StreamSynchronize(stream);
}

FAKE_CUDA_EXPORT CUresult cuStreamSynchronize_ptsz(CUstream stream) {
  return StreamSynchronize(stream);
}

FAKE_CUDA_EXPORT CUresult cuStreamIsCapturing(CUstream stream,
                                              CUstreamCaptureStatus* status) {
  FAKE_CUDA_ENTER();
  if (status == nullptr) return CUDA_ERROR_INVALID_VALUE;
  CUresult error = CUDA_SUCCESS;
  if (ResolveStream(stream, &error) == nullptr) return error;
  *status = CU_STREAM_CAPTURE_STATUS_NONE;
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuCtxSynchronize() {
  FAKE_CUDA_ENTER_UNIQUE();
  const int device = CurrentDevice();
  if (device < 0) return CUDA_ERROR_INVALID_CONTEXT;
  uint64_t until = 0;
  for (const auto& [id, stream] : TheWorld().streams) {
    if (stream.device == device) until = std::max(until, stream.tail_ns);
  }
  return SleepThenRelease(fake_lock, until);
}

FAKE_CUDA_EXPORT CUresult cuEventCreate(CUevent* event, unsigned int flags) {
  FAKE_CUDA_ENTER();
  const int device = CurrentDevice();
  if (device < 0) return CUDA_ERROR_INVALID_CONTEXT;
  constexpr unsigned kKnownFlags = CU_EVENT_BLOCKING_SYNC |
                                   CU_EVENT_DISABLE_TIMING |
                                   0x4 /* CU_EVENT_INTERPROCESS */;
  if (event == nullptr || (flags & ~kKnownFlags) != 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  World& world = TheWorld();
  const uint64_t id = world.NewId();
  Event created;
  created.device = device;
  created.flags = flags;
  world.events[id] = created;
  *event = MakeHandle<CUevent>(Tag::kEvent, id);
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuEventRecord(CUevent event, CUstream stream) {
  return EventRecord(event, stream);
}

FAKE_CUDA_EXPORT CUresult cuEventRecord_ptsz(CUevent event, CUstream stream) {
  return EventRecord(event, stream);
}

// An event never recorded counts as complete, as on the driver.
FAKE_CUDA_EXPORT CUresult cuEventQuery(CUevent event) {
  FAKE_CUDA_ENTER();
  const Event* found = FindEvent(event);
  if (found == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  if (found->recorded && MonotonicNowNs() < found->stamp_ns) {
    return CUDA_ERROR_NOT_READY;
  }
  return CUDA_SUCCESS;
}

FAKE_CUDA_EXPORT CUresult cuEventSynchronize(CUevent event) {
  FAKE_CUDA_ENTER_UNIQUE();
  const Event* found = FindEvent(event);
  if (found == nullptr) return CUDA_ERROR_INVALID_HANDLE;
  return SleepThenRelease(fake_lock, found->recorded ? found->stamp_ns : 0);
}

FAKE_CUDA_EXPORT CUresult cuEventElapsedTime(float* ms, CUevent start,
                                             CUevent end) {
  return ElapsedTime(ms, start, end);
}

FAKE_CUDA_EXPORT CUresult cuEventElapsedTime_v2(float* ms, CUevent start,
                                                CUevent end) {
  return ElapsedTime(ms, start, end);
}

FAKE_CUDA_EXPORT CUresult cuEventDestroy_v2(CUevent event) {
  FAKE_CUDA_ENTER();
  if (TheWorld().events.erase(HandleId(Tag::kEvent, event)) == 0) {
    return CUDA_ERROR_INVALID_HANDLE;
  }
  return CUDA_SUCCESS;
}
