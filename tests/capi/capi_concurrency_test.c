/* Many host threads on one scheduler: concurrent schedule calls (with
 * filters and usage reads between them, and other schedulers made and
 * destroyed beside them) never give two pods the same room, and release
 * frees what was taken. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases.h"
#include "check.h"

enum {
  kThreads = 8,
  kPodsPerThread = 6,
  kGpuMib = 10000,
  kPodMib = 3000,
  /* 2 nodes x 2 GPUs, each holding 3 pods of 3000 of its 10000 MiB. */
  kCapacity = 12,
};

static const char kCluster[] =
    "nodes:\n"
    "- name: c1\n"
    "  gpus: [{model: NVIDIA A30, memory_mib: 10000, count: 2}]\n"
    "- name: c2\n"
    "  gpus: [{model: NVIDIA A30, memory_mib: 10000, count: 2}]\n";

typedef struct Placement {
  char uid[64];
  char* uuid; /* NULL: not placed */
  long long memory_mib;
} Placement;

typedef struct Worker {
  deviceshare_scheduler* scheduler;
  Placement placements[kPodsPerThread];
} Worker;

static char* PodOf(const char* uid, int memory_mib) {
  return Format(
      "{apiVersion: v1, kind: Pod, metadata: {name: %s, namespace: conc, "
      "uid: %s}, spec: {containers: [{name: main, resources: {limits: "
      "{nvidia.com/gpu: 1, nvidia.com/gpumem: %d}}}]}}",
      uid, uid, memory_mib);
}

static void ScheduleOne(Worker* worker, Placement* placement) {
  char* error = NULL;
  char* pod = PodOf(placement->uid, kPodMib);
  /* A filter and a usage read beside the decisions: readers and writers
   * of the same scheduler at once. */
  char* verdicts = NULL;
  CHECK_OK(deviceshare_filter(worker->scheduler, pod, NULL, &verdicts, &error),
           error);
  deviceshare_free(verdicts);
  char* decision = NULL;
  CHECK_OK(
      deviceshare_schedule(worker->scheduler, pod, NULL, &decision, &error),
      error);
  if (strstr(decision, "\"placed\":true") != NULL) {
    placement->uuid = JsonString(decision, "uuid");
    placement->memory_mib = JsonInt(decision, "memory_mib");
    CHECK_TEXT(placement->uuid != NULL, decision);
  }
  deviceshare_free(decision);
  char* usage = NULL;
  CHECK_OK(deviceshare_usage(worker->scheduler, &usage, &error), error);
  CHECK_TEXT(JsonInt(usage, "memory_used_mib") <= 4LL * kGpuMib, usage);
  deviceshare_free(usage);
  free(pod);
}

static void* Work(void* argument) {
  Worker* worker = argument;
  /* The handle registry under concurrent create and destroy. */
  deviceshare_scheduler* own = NewScheduler(NULL, NULL);
  for (int p = 0; p < kPodsPerThread; ++p) {
    Placement* placement = &worker->placements[p];
    ScheduleOne(worker, placement);
  }
  CHECK(deviceshare_scheduler_destroy(own) == DEVICESHARE_OK);
  return NULL;
}

/* No GPU holds more than its memory or more pods than fit. */
static int CheckNoDoubleBooking(Worker* workers) {
  const char* uuids[kThreads * kPodsPerThread];
  long long memory[kThreads * kPodsPerThread];
  int tenants[kThreads * kPodsPerThread];
  int gpus = 0, placed = 0;
  for (int w = 0; w < kThreads; ++w) {
    for (int p = 0; p < kPodsPerThread; ++p) {
      const Placement* placement = &workers[w].placements[p];
      if (placement->uuid == NULL) continue;
      ++placed;
      int g = 0;
      while (g < gpus && strcmp(uuids[g], placement->uuid) != 0) ++g;
      if (g == gpus) {
        uuids[gpus] = placement->uuid;
        memory[gpus] = 0;
        tenants[gpus] = 0;
        ++gpus;
      }
      memory[g] += placement->memory_mib;
      ++tenants[g];
      CHECK_TEXT(memory[g] <= kGpuMib, placement->uuid);
    }
  }
  CHECK(gpus == 4);
  for (int g = 0; g < gpus; ++g) CHECK(tenants[g] == kCapacity / 4);
  return placed;
}

void TestConcurrentScheduleNeverDoubleBooks(void) {
  deviceshare_scheduler* s = NewScheduler(NULL, kCluster);
  Worker workers[kThreads];
  pthread_t threads[kThreads];
  memset(workers, 0, sizeof(workers));
  for (int w = 0; w < kThreads; ++w) {
    workers[w].scheduler = s;
    for (int p = 0; p < kPodsPerThread; ++p) {
      snprintf(workers[w].placements[p].uid,
               sizeof(workers[w].placements[p].uid), "pod-%d-%d", w, p);
    }
    CHECK(pthread_create(&threads[w], NULL, Work, &workers[w]) == 0);
  }
  for (int w = 0; w < kThreads; ++w) {
    CHECK(pthread_join(threads[w], NULL) == 0);
  }
  /* 48 pods for 12 places: every place taken, none twice. */
  CHECK(CheckNoDoubleBooking(workers) == kCapacity);

  char* error = NULL;
  char* usage = NULL;
  CHECK_OK(deviceshare_usage(s, &usage, &error), error);
  CHECK_TEXT(JsonInt(usage, "pods") == kCapacity &&
                 JsonInt(usage, "memory_used_mib") == kCapacity * kPodMib,
             usage);
  deviceshare_free(usage);
  for (int w = 0; w < kThreads; ++w) {
    for (int p = 0; p < kPodsPerThread; ++p) {
      Placement* placement = &workers[w].placements[p];
      CHECK_OK(deviceshare_release(s, placement->uid, &error), error);
      free(placement->uuid);
    }
  }
  CHECK_OK(deviceshare_usage(s, &usage, &error), error);
  CHECK_TEXT(JsonInt(usage, "pods") == 0 &&
                 JsonInt(usage, "memory_used_mib") == 0 &&
                 JsonInt(usage, "gpus_idle") == 4,
             usage);
  deviceshare_free(usage);
  CHECK(deviceshare_scheduler_destroy(s) == DEVICESHARE_OK);
}

void TestReleaseFrees(void) {
  char* error = NULL;
  deviceshare_scheduler* s = NewScheduler(
      NULL,
      "nodes:\n- name: one\n  gpus: [{model: NVIDIA A30, memory_mib: 10000}]");
  char* first = PodOf("first", 8000);
  char* second = PodOf("second", 8000);
  char* decision = NULL;
  CHECK_OK(deviceshare_schedule(s, first, NULL, &decision, &error), error);
  CHECK_TEXT(strstr(decision, "\"placed\":true") != NULL, decision);
  deviceshare_free(decision);
  CHECK_OK(deviceshare_schedule(s, second, NULL, &decision, &error), error);
  CHECK_TEXT(strstr(decision, "\"placed\":false") != NULL &&
                 strstr(decision, "InsufficientMemory") != NULL,
             decision);
  deviceshare_free(decision);
  /* The first pod is gone: its 8000 MiB go to the second. */
  CHECK_OK(deviceshare_release(s, "first", &error), error);
  CHECK_OK(deviceshare_schedule(s, second, NULL, &decision, &error), error);
  CHECK_TEXT(strstr(decision,
                    "\"placed\":true,\"pod\":\"conc/second\","
                    "\"node\":\"one\"") != NULL,
             decision);
  deviceshare_free(decision);
  free(second);
  free(first);
  CHECK(deviceshare_scheduler_destroy(s) == DEVICESHARE_OK);
}

/* HAMi's namespace GPU quota through deviceshare_upsert_object: the second
 * pod would take namespace conc past its 10000 MiB; releasing the first, or
 * removing the quota, lets it in. */
void TestResourceQuota(void) {
  char* error = NULL;
  deviceshare_scheduler* s = NewScheduler(
      NULL,
      "nodes:\n- name: one\n  gpus: [{model: NVIDIA A100, memory_mib: "
      "40000}]");
  CHECK_OK(deviceshare_upsert_object(
               s,
               "{apiVersion: v1, kind: ResourceQuota, metadata: {name: gpu, "
               "namespace: conc}, spec: {hard: {limits.nvidia.com/gpumem: "
               "\"10000\"}}}",
               &error),
           error);
  char* first = PodOf("first", 6000);
  char* second = PodOf("second", 6000);
  char* decision = NULL;
  CHECK_OK(deviceshare_schedule(s, first, NULL, &decision, &error), error);
  CHECK_TEXT(strstr(decision, "\"placed\":true") != NULL, decision);
  deviceshare_free(decision);
  CHECK_OK(deviceshare_schedule(s, second, NULL, &decision, &error), error);
  CHECK_TEXT(strstr(decision, "\"placed\":false") != NULL &&
                 strstr(decision, "QuotaExceeded namespace conc") != NULL,
             decision);
  deviceshare_free(decision);
  CHECK_CODE(deviceshare_remove_object(s, "ResourceQuota", "gpu", &error),
             DEVICESHARE_INVALID_ARGUMENT, error);
  CHECK_OK(deviceshare_remove_object(s, "ResourceQuota", "conc/gpu", &error),
           error);
  CHECK_OK(deviceshare_schedule(s, second, NULL, &decision, &error), error);
  CHECK_TEXT(strstr(decision, "\"placed\":true") != NULL, decision);
  deviceshare_free(decision);
  free(second);
  free(first);
  CHECK(deviceshare_scheduler_destroy(s) == DEVICESHARE_OK);
}
