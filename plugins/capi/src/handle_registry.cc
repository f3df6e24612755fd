#include "handle_registry.h"

namespace deviceshare::capi {

HandleTable<deviceshare_scheduler, Scheduler>& SchedulerHandles() {
  static auto* const table = new HandleTable<deviceshare_scheduler, Scheduler>(
      "scheduler", "deviceshare_scheduler_create");
  return *table;
}

HandleTable<deviceshare_pod, ParsedPod>& PodHandles() {
  static auto* const table = new HandleTable<deviceshare_pod, ParsedPod>(
      "pod", "deviceshare_pod_create");
  return *table;
}

}  // namespace deviceshare::capi
