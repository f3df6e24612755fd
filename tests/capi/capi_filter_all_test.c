/* deviceshare_pod_filter_all and deviceshare_pod_allocate: one call's
 * verdicts for every node equal deviceshare_pod_filter_node's for each,
 * the block they come in frees with one call (the sanitized build checks
 * it), and a prepared pod is allocated as its text is. */
#include <stdlib.h>
#include <string.h>

#include "cases.h"
#include "check.h"

/* n1 has a 10 GiB GPU, n2 a 40 GiB one. */
static const char kNodes[] =
    "nodes:\n"
    "- name: n1\n"
    "  gpus: [{model: NVIDIA A30, memory_mib: 10240, uuid: GPU-f1}]\n"
    "- name: n2\n"
    "  gpus: [{model: NVIDIA A100-PCIE-40GB, memory_mib: 40960, uuid: "
    "GPU-f2}]\n";

static const char kMiddle[] =
    "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"middle\", "
    "\"namespace\": \"default\", \"uid\": \"uid-middle\"}, \"spec\": "
    "{\"containers\": [{\"name\": \"main\", \"resources\": {\"limits\": "
    "{\"nvidia.com/gpu\": 1, \"nvidia.com/gpumem\": 20480}}}]}}";

/* The verdict for `node` in the block, or NULL. */
static const deviceshare_node_verdict* Find(
    const deviceshare_node_verdict* verdicts, size_t count, const char* node) {
  for (size_t i = 0; i < count; ++i) {
    if (strcmp(verdicts[i].node, node) == 0) return &verdicts[i];
  }
  return NULL;
}

void TestFilterAllAndAllocatePrepared(void) {
  deviceshare_scheduler* s = NewScheduler(NULL, kNodes);
  char* error = NULL;
  deviceshare_pod* pod = NULL;
  CHECK_OK(deviceshare_pod_create(s, kMiddle, &pod, &error), error);
  deviceshare_node_verdict* verdicts = NULL;
  size_t count = 0;
  CHECK_OK(deviceshare_pod_filter_all(s, pod, &verdicts, &count, &error),
           error);
  CHECK(count == 2 && verdicts != NULL);
  static const char* const kNames[] = {"n1", "n2"};
  for (size_t i = 0; i < 2; ++i) {
    const deviceshare_node_verdict* got = Find(verdicts, count, kNames[i]);
    CHECK_TEXT(got != NULL, kNames[i]);
    int fits = -1, score = -1, unresolvable = -1;
    const char* code = NULL;
    char* reason = NULL;
    CHECK_OK(deviceshare_pod_filter_node(s, pod, kNames[i], &fits, &score,
                                         &code, &unresolvable, &reason, &error),
             error);
    CHECK_TEXT(got->fits == fits && got->score == score &&
                   strcmp(got->code, code) == 0 &&
                   got->unresolvable == unresolvable,
               kNames[i]);
    CHECK_TEXT((reason == NULL) == (got->reason == NULL), kNames[i]);
    if (reason != NULL) {
      CHECK_TEXT(strcmp(got->reason, reason) == 0, got->reason);
    }
    deviceshare_free(reason);
  }
  /* 20 GiB fits only the 40 GiB GPU. */
  CHECK(Find(verdicts, count, "n1")->fits == 0);
  CHECK_TEXT(
      strcmp(Find(verdicts, count, "n1")->code, "InsufficientMemory") == 0,
      Find(verdicts, count, "n1")->code);
  CHECK(Find(verdicts, count, "n2")->fits == 1);
  deviceshare_verdicts_free(verdicts);
  deviceshare_verdicts_free(NULL);

  char* decision = NULL;
  CHECK_OK(deviceshare_pod_allocate(s, pod, "n2", &decision, &error), error);
  CHECK_TEXT(strstr(decision, "\"placed\":true") != NULL &&
                 strstr(decision, "GPU-f2") != NULL,
             decision);
  deviceshare_free(decision);
  decision = NULL;
  CHECK_CODE(deviceshare_pod_allocate(s, pod, "n2", &decision, &error),
             DEVICESHARE_ALREADY_EXISTS, error);
  CHECK(decision == NULL);

  /* While it holds 20 GiB of n2's 40, a second such pod fits n2 no
   * more; released, it does again. */
  static const char kSecond[] =
      "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"second\", "
      "\"namespace\": \"default\", \"uid\": \"uid-second\"}, \"spec\": "
      "{\"containers\": [{\"name\": \"main\", \"resources\": {\"limits\": "
      "{\"nvidia.com/gpu\": 1, \"nvidia.com/gpumem\": 30720}}}]}}";
  deviceshare_pod* next = NULL;
  CHECK_OK(deviceshare_pod_create(s, kSecond, &next, &error), error);
  CHECK_OK(deviceshare_pod_filter_all(s, next, &verdicts, &count, &error),
           error);
  CHECK(count == 2 && Find(verdicts, count, "n2")->fits == 0);
  deviceshare_verdicts_free(verdicts);
  CHECK_OK(deviceshare_release(s, "uid-middle", &error), error);
  CHECK_OK(deviceshare_pod_filter_all(s, next, &verdicts, &count, &error),
           error);
  CHECK(count == 2 && Find(verdicts, count, "n2")->fits == 1);
  deviceshare_verdicts_free(verdicts);

  /* NULL arguments and dead handles. */
  CHECK_CODE(deviceshare_pod_filter_all(s, pod, NULL, &count, &error),
             DEVICESHARE_INVALID_ARGUMENT, error);
  CHECK_CODE(deviceshare_pod_filter_all(s, pod, &verdicts, NULL, &error),
             DEVICESHARE_INVALID_ARGUMENT, error);
  CHECK_CODE(deviceshare_pod_allocate(s, pod, NULL, &decision, &error),
             DEVICESHARE_INVALID_ARGUMENT, error);
  CHECK(deviceshare_pod_destroy(pod) == DEVICESHARE_OK);
  CHECK(deviceshare_pod_destroy(next) == DEVICESHARE_OK);
  CHECK_CODE(deviceshare_pod_filter_all(s, pod, &verdicts, &count, &error),
             DEVICESHARE_INVALID_ARGUMENT, error);
  CHECK_CODE(deviceshare_pod_allocate(s, pod, "n2", &decision, &error),
             DEVICESHARE_INVALID_ARGUMENT, error);
  CHECK(deviceshare_scheduler_destroy(s) == DEVICESHARE_OK);
}
