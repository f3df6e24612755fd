// libFuzzer target: arbitrary text through the C API's JSON entry points
// (plugins/capi), the way a host in another language would pass it.
//
// The first byte picks the entry point, the rest is its text argument:
// deviceshare_parse_documents, deviceshare_scheduler_create (the config),
// deviceshare_upsert_nodes and deviceshare_upsert_object (then a pod is
// scheduled on what they made), deviceshare_filter / _score / _schedule /
// _allocate / _bind (the pod), and the small JSON arguments (filter's
// node list, schedule's options). Each input gets a fresh scheduler with a
// small cluster, so inputs do not depend on each other.
//
// No call may crash, leak, trip a sanitizer or throw (an exception caught
// at the C boundary is DEVICESHARE_INTERNAL, which traps here); a failure
// must carry a message; every answer must be valid JSON. A broken rule
// traps, so libFuzzer saves the input.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "deviceshare/c/deviceshare.h"
#include "nlohmann/json.hpp"

namespace {

constexpr char kCluster[] =
    "nodes:\n"
    "- name: n1\n"
    "  gpus: [{model: \"NVIDIA A100-SXM4-80GB\", memory_mib: 81920, count: "
    "2}]\n"
    "- name: n2\n"
    "  gpus: [{model: \"NVIDIA A30\", memory_mib: 24576, mode: mig}]\n";

constexpr char kPod[] =
    "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"p\", \"namespace\": "
    "\"d\", \"uid\": \"u\"}, \"spec\": {\"containers\": [{\"name\": \"m\", "
    "\"resources\": {\"limits\": {\"nvidia.com/gpu\": 1, "
    "\"nvidia.com/gpumem\": 1024}}}]}}";

constexpr char kConfig[] = "scheduler: {modes: [hami-core, mig, mps]}";

// Checks one call's outcome and frees what it returned.
void Check(deviceshare_code code, char* answer, char* error) {
  if (code == DEVICESHARE_INTERNAL) __builtin_trap();
  if (code != DEVICESHARE_OK) {
    if (error == nullptr || *error == '\0' || answer != nullptr) {
      __builtin_trap();
    }
  } else if (answer != nullptr &&
             !nlohmann::json::accept(std::string(answer))) {
    __builtin_trap();
  }
  deviceshare_free(answer);
  deviceshare_free(error);
}

// The pod `pod` through every step on `scheduler`.
void PodSteps(deviceshare_scheduler* scheduler, const char* pod) {
  char* answer = nullptr;
  char* error = nullptr;
  Check(deviceshare_filter(scheduler, pod, nullptr, &answer, &error), answer,
        error);
  answer = error = nullptr;
  int score = 0;
  Check(deviceshare_score(scheduler, pod, "n1", &score, &error), nullptr,
        error);
  error = nullptr;
  Check(deviceshare_allocate(scheduler, pod, "n2", &answer, &error), answer,
        error);
  answer = error = nullptr;
  Check(deviceshare_schedule(scheduler, pod, nullptr, &answer, &error), answer,
        error);
  answer = error = nullptr;
  Check(deviceshare_bind(scheduler, pod, "n1", &error), nullptr, error);
  error = nullptr;
  Check(deviceshare_usage(scheduler, &answer, &error), answer, error);
}

void Run(uint8_t selector, const char* text) {
  char* answer = nullptr;
  char* error = nullptr;
  if (selector % 8 == 0) {
    Check(deviceshare_parse_documents(text, &answer, &error), answer, error);
    return;
  }
  deviceshare_scheduler* scheduler = nullptr;
  const char* config = selector % 8 == 1 ? text : kConfig;
  const deviceshare_code created =
      deviceshare_scheduler_create(config, &scheduler, &error);
  Check(created, nullptr, error);
  if (created != DEVICESHARE_OK) return;
  error = nullptr;
  Check(deviceshare_upsert_nodes(scheduler, kCluster, &answer, &error), answer,
        error);
  answer = error = nullptr;
  switch (selector % 8) {
    case 1:
      PodSteps(scheduler, kPod);
      break;
    case 2:
      Check(deviceshare_upsert_nodes(scheduler, text, &answer, &error), answer,
            error);
      PodSteps(scheduler, kPod);
      break;
    case 3:
      Check(deviceshare_upsert_object(scheduler, text, &error), nullptr, error);
      PodSteps(scheduler, kPod);
      break;
    case 4:
    case 5:
      PodSteps(scheduler, text);
      break;
    case 6:
      Check(deviceshare_filter(scheduler, kPod, text, &answer, &error), answer,
            error);
      break;
    default:
      Check(deviceshare_schedule(scheduler, kPod, text, &answer, &error),
            answer, error);
      break;
  }
  if (deviceshare_scheduler_destroy(scheduler) != DEVICESHARE_OK) {
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  // The C API takes NUL-terminated text: an embedded NUL ends it there.
  const std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
  Run(data[0], text.c_str());
  return 0;
}
