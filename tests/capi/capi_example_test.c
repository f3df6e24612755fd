/* The C API on the repository's examples: the whole decision gives
 * simulate's nodes and, for a container, simulate's exact JSON; the steps
 * (filter, score, allocate, bind, release, node events) and DRA objects
 * each do what deviceshare.h says. */
#include <stdlib.h>
#include <string.h>

#include "cases.h"
#include "check.h"

/* Where `deviceshare-scheduler simulate --cluster examples/cluster.yaml
 * --pods examples/workload.yaml --config examples/deviceshare.yaml` puts
 * each pod (NULL: unschedulable), checked by hand against its table. */
typedef struct Expected {
  const char* pod;
  const char* node;
} Expected;
static const Expected kSimulated[] = {
    {"team-a/notebook", "a30-1"},    {"team-b/h100-trainer", "h100-1"},
    {"team-a/inference", "a30-1"},   {"team-c/exclusive", "a100-1"},
    {"team-b/not-a100", "h100-1"},   {"team-c/numa-pair", "a100-1"},
    {"team-a/pinned-a30", "a30-1"},  {"team-b/avoid-a30-0", "a30-1"},
    {"team-c/eight-gpus", "a100-2"}, {"team-a/too-big", NULL},
    {"team-b/pinned-broken", NULL},  {"team-c/second-eight", NULL},
};
static const size_t kSimulatedCount =
    sizeof(kSimulated) / sizeof(kSimulated[0]);

/* team-a/notebook's containers exactly as simulate --output json prints
 * them (there indented), its env included. */
static const char kNotebookContainers[] =
    "\"containers\":[{\"name\":\"jupyter\",\"devices\":[{\"uuid\":"
    "\"GPU-a3000000-0000-4000-8000-000000000000\",\"mode\":\"hami-core\","
    "\"memory_mib\":20480,\"cores\":30}],\"env\":{\"NVIDIA_VISIBLE_DEVICES\":"
    "\"GPU-a3000000-0000-4000-8000-000000000000\","
    "\"CUDA_DEVICE_MEMORY_LIMIT_0\":\"20480m\",\"CUDA_DEVICE_SM_LIMIT\":"
    "\"30\",\"CUDA_DEVICE_MEMORY_SHARED_CACHE\":\"/tmp/vgpu/"
    "3600233d-0df5-5204-b08d-1b598dbf33a0.cache\"}}]";

/* A HAMi pod asking one GPU with `memory_mib` MiB and 30 % of its SMs. */
static char* HamiPod(const char* name, const char* uid, int memory_mib) {
  return Format(
      "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": "
      "\"%s\", \"namespace\": \"team-a\", \"uid\": \"%s\"}, \"spec\": "
      "{\"containers\": [{\"name\": \"main\", \"resources\": {\"limits\": "
      "{\"nvidia.com/gpu\": 1, \"nvidia.com/gpumem\": %d, "
      "\"nvidia.com/gpucores\": 30}}}]}}",
      name, uid, memory_mib);
}

static deviceshare_scheduler* ExampleScheduler(void) {
  char* config = ReadExample("deviceshare.yaml");
  char* cluster = ReadExample("cluster.yaml");
  char* error = NULL;
  deviceshare_scheduler* s = NULL;
  CHECK_OK(deviceshare_scheduler_create(config, &s, &error), error);
  char* result = NULL;
  CHECK_OK(deviceshare_upsert_nodes(s, cluster, &result, &error), error);
  CHECK_TEXT(strcmp(result,
                    "{\"nodes\":[\"a100-1\",\"a100-2\",\"h100-1\",\"a30-1\"],"
                    "\"displaced\":[],\"notes\":[]}") == 0,
             result);
  deviceshare_free(result);
  free(cluster);
  free(config);
  return s;
}

static const Expected* ExpectationFor(const char* pod) {
  for (size_t i = 0; i < kSimulatedCount; ++i) {
    if (strcmp(kSimulated[i].pod, pod) == 0) return &kSimulated[i];
  }
  CheckFailed(__FILE__, __LINE__, "a pod of examples/workload.yaml", pod);
  return NULL;
}

/* One decision against simulate's placement of the same pod. */
static void CheckDecision(const char* decision) {
  char* pod = JsonString(decision, "pod");
  CHECK_TEXT(pod != NULL, decision);
  const Expected* expected = ExpectationFor(pod);
  if (expected->node == NULL) {
    CHECK_TEXT(strstr(decision, "\"placed\":false") != NULL, decision);
    /* Every node explains itself: 4 reasons, counted by code. */
    char* reasons = JsonValue(decision, "reasons");
    CHECK_TEXT(CountOf(reasons, "\":\"") == 4, decision);
    free(reasons);
    CHECK_TEXT(strstr(decision, "\"reason_counts\":{\"") != NULL, decision);
  } else {
    CHECK_TEXT(strstr(decision, "\"placed\":true") != NULL, decision);
    char* node = JsonString(decision, "node");
    CHECK_TEXT(node != NULL && strcmp(node, expected->node) == 0, decision);
    free(node);
    /* The record to write, in the pod's dialect. */
    CHECK_TEXT(strstr(decision, "\"hami.io/vgpu-devices-allocated\":") ||
                   strstr(decision, "\"volcano.sh/vgpu-ids-new\":"),
               decision);
  }
  if (strcmp(pod, "team-a/notebook") == 0) {
    CHECK_TEXT(strstr(decision, kNotebookContainers) != NULL, decision);
  }
  if (strcmp(pod, "team-a/inference") == 0) {
    /* A container without GPUs is listed, as simulate lists it. */
    CHECK_TEXT(strstr(decision,
                      "{\"name\":\"metrics\",\"devices\":[],"
                      "\"env\":{}}") != NULL,
               decision);
  }
  free(pod);
}

void TestExampleMatchesSimulate(void) {
  deviceshare_scheduler* s = ExampleScheduler();
  char* error = NULL;
  char* workload = ReadExample("workload.yaml");
  char* objects = NULL;
  CHECK_OK(deviceshare_parse_documents(workload, &objects, &error), error);
  size_t count = 0;
  char** pods = JsonArrayItems(objects, &count);
  CHECK(count == kSimulatedCount);
  for (size_t i = 0; i < count; ++i) {
    char* decision = NULL;
    CHECK_OK(deviceshare_schedule(s, pods[i], NULL, &decision, &error), error);
    CheckDecision(decision);
    deviceshare_free(decision);
  }
  /* simulate's summary: 888939 of 1735260 MiB, 1225 of 2400 cores. */
  char* usage = NULL;
  CHECK_OK(deviceshare_usage(s, &usage, &error), error);
  CHECK_TEXT(strcmp(usage,
                    "{\"nodes\":4,\"pods\":9,\"gpus\":24,\"gpus_idle\":8,"
                    "\"memory_capacity_mib\":1735260,\"memory_used_mib\":"
                    "888939,\"core_capacity\":2400,\"cores_used\":1225}") == 0,
             usage);
  deviceshare_free(usage);
  FreeItems(pods, count);
  deviceshare_free(objects);
  free(workload);
  CHECK(deviceshare_scheduler_destroy(s) == DEVICESHARE_OK);
}

void TestNodeObjects(void) {
  char* error = NULL;
  deviceshare_scheduler* s = NewScheduler(NULL, NULL);
  char* nodes = ReadExample("nodes.yaml");
  char* result = NULL;
  CHECK_OK(deviceshare_upsert_nodes(s, nodes, &result, &error), error);
  CHECK_TEXT(
      strstr(result, "\"nodes\":[\"gpu-a\",\"gpu-b\",\"gpu-c\"]") != NULL,
      result);
  deviceshare_free(result);
  /* One Node object as JSON, as an API watch delivers it. */
  char* objects = NULL;
  CHECK_OK(deviceshare_parse_documents(nodes, &objects, &error), error);
  size_t count = 0;
  char** items = JsonArrayItems(objects, &count);
  CHECK(count == 3);
  result = NULL;
  CHECK_OK(deviceshare_upsert_nodes(s, items[0], &result, &error), error);
  CHECK_TEXT(strstr(result, "\"nodes\":[\"gpu-a\"]") != NULL, result);
  deviceshare_free(result);
  FreeItems(items, count);
  deviceshare_free(objects);

  /* examples/pods.yaml's first pod goes where simulate puts it. */
  char* pods = ReadExample("pods.yaml");
  CHECK_OK(deviceshare_parse_documents(pods, &objects, &error), error);
  items = JsonArrayItems(objects, &count);
  char* decision = NULL;
  CHECK_OK(deviceshare_schedule(s, items[0], NULL, &decision, &error), error);
  CHECK_TEXT(strstr(decision,
                    "\"pod\":\"team-a/hami-small\",\"node\":"
                    "\"gpu-c\"") != NULL,
             decision);
  deviceshare_free(decision);
  FreeItems(items, count);
  deviceshare_free(objects);
  free(pods);
  free(nodes);
  CHECK(deviceshare_scheduler_destroy(s) == DEVICESHARE_OK);
}

/* The verdict of `node` among `verdicts` (a JSON array); aborts if none. */
static char* VerdictOf(const char* verdicts, const char* node) {
  size_t count = 0;
  char** items = JsonArrayItems(verdicts, &count);
  char* needle = Format("\"node\":\"%s\"", node);
  char* found = NULL;
  for (size_t i = 0; i < count && found == NULL; ++i) {
    if (strstr(items[i], needle) != NULL) found = Format("%s", items[i]);
  }
  free(needle);
  FreeItems(items, count);
  CHECK_TEXT(found != NULL, verdicts);
  return found;
}

static void CheckFilterAndScore(deviceshare_scheduler* s, const char* pod) {
  char* error = NULL;
  char* verdicts = NULL;
  CHECK_OK(deviceshare_filter(s, pod, NULL, &verdicts, &error), error);
  size_t count = 0;
  char** all = JsonArrayItems(verdicts, &count);
  FreeItems(all, count);
  CHECK_TEXT(count == 4, verdicts);
  char* a30 = VerdictOf(verdicts, "a30-1");
  CHECK_TEXT(strstr(a30,
                    "\"fits\":false,\"code\":\"InsufficientMemory\","
                    "\"unresolvable\":false,"
                    "\"reason\":\"InsufficientMemory ") != NULL,
             a30);
  free(a30);
  char* h100 = VerdictOf(verdicts, "h100-1");
  CHECK_TEXT(strstr(h100, "\"fits\":true") != NULL, h100);
  free(h100);
  deviceshare_free(verdicts);

  /* Named nodes come back in the order given. */
  CHECK_OK(
      deviceshare_filter(s, pod, "[\"h100-1\", \"a30-1\"]", &verdicts, &error),
      error);
  char** items = JsonArrayItems(verdicts, &count);
  CHECK_TEXT(count == 2 && strstr(items[0], "\"node\":\"h100-1\"") &&
                 strstr(items[1], "\"node\":\"a30-1\""),
             verdicts);
  FreeItems(items, count);
  deviceshare_free(verdicts);

  int score = -1;
  CHECK_OK(deviceshare_score(s, pod, "h100-1", &score, &error), error);
  CHECK(score >= 0 && score <= 100);
  CHECK_CODE(deviceshare_score(s, pod, "a30-1", &score, &error),
             DEVICESHARE_FAILED_PRECONDITION, error);
}

static void CheckAllocate(deviceshare_scheduler* s, const char* pod) {
  char* error = NULL;
  char* decision = NULL;
  CHECK_OK(deviceshare_allocate(s, pod, "a30-1", &decision, &error), error);
  CHECK_TEXT(strstr(decision, "\"placed\":false") != NULL &&
                 strstr(decision, "\"a30-1\":\"InsufficientMemory") != NULL,
             decision);
  deviceshare_free(decision);
  CHECK_OK(deviceshare_allocate(s, pod, "h100-1", &decision, &error), error);
  CHECK_TEXT(strstr(decision,
                    "\"placed\":true,\"pod\":\"team-a/steps\","
                    "\"node\":\"h100-1\"") != NULL &&
                 strstr(decision, "\"hami.io/vgpu-devices-allocated\"") != NULL,
             decision);
  deviceshare_free(decision);
  decision = NULL;
  CHECK_CODE(deviceshare_allocate(s, pod, "h100-1", &decision, &error),
             DEVICESHARE_ALREADY_EXISTS, error);
  CHECK_CODE(deviceshare_schedule(s, pod, NULL, &decision, &error),
             DEVICESHARE_ALREADY_EXISTS, error);
  CHECK(decision == NULL);
}

static long long UsageOf(deviceshare_scheduler* s, const char* key) {
  char* error = NULL;
  char* usage = NULL;
  CHECK_OK(deviceshare_usage(s, &usage, &error), error);
  const long long value = JsonInt(usage, key);
  deviceshare_free(usage);
  return value;
}

/* Options: candidates, and a failed decision explained briefly. */
static void CheckScheduleOptions(deviceshare_scheduler* s) {
  char* error = NULL;
  char* decision = NULL;
  char* pod = HamiPod("options", "uid-options", 1024);
  CHECK_OK(deviceshare_schedule(s, pod, "{\"candidates\": [\"a100-2\"]}",
                                &decision, &error),
           error);
  CHECK_TEXT(strstr(decision, "\"node\":\"a100-2\"") != NULL, decision);
  deviceshare_free(decision);
  free(pod);
  pod = HamiPod("huge", "uid-huge", 200000);
  CHECK_OK(deviceshare_schedule(
               s, pod, "{\"max_explained_nodes\": 1, \"count_reasons\": false}",
               &decision, &error),
           error);
  char* reasons = JsonValue(decision, "reasons");
  CHECK_TEXT(CountOf(reasons, "\":\"") == 1, decision);
  CHECK_TEXT(strstr(decision, "\"reason_counts\":{}") != NULL, decision);
  free(reasons);
  deviceshare_free(decision);
  free(pod);
}

/* A node whose inventory shrinks displaces its pod; a removed node is
 * gone from the filter. */
static void CheckNodeEvents(deviceshare_scheduler* s, const char* pod) {
  char* error = NULL;
  char* result = NULL;
  char* decision = NULL;
  CHECK_OK(deviceshare_allocate(s, pod, "h100-1", &decision, &error), error);
  deviceshare_free(decision);
  CHECK_OK(deviceshare_upsert_nodes(
               s,
               "nodes:\n- name: h100-1\n  gpus: [{model: NVIDIA H100 80GB "
               "HBM3, memory_mib: 1024, count: 4}]\n",
               &result, &error),
           error);
  CHECK_TEXT(strcmp(result,
                    "{\"nodes\":[\"h100-1\"],\"displaced\":"
                    "[\"team-a/steps\"],\"notes\":[]}") == 0,
             result);
  deviceshare_free(result);
  CHECK_OK(deviceshare_remove_node(s, "a30-1", &error), error);
  CHECK_OK(deviceshare_remove_node(s, "a30-1", &error), error); /* again */
  char* verdicts = NULL;
  CHECK_OK(deviceshare_filter(s, pod, NULL, &verdicts, &error), error);
  CHECK_TEXT(strstr(verdicts, "a30-1") == NULL, verdicts);
  deviceshare_free(verdicts);
  CHECK(UsageOf(s, "nodes") == 3);
}

void TestSteps(void) {
  deviceshare_scheduler* s = ExampleScheduler();
  char* error = NULL;
  /* 30000 MiB: more than an A30 has, less than the others. */
  char* pod = HamiPod("steps", "uid-steps", 30000);
  CheckFilterAndScore(s, pod);
  CheckAllocate(s, pod);
  CHECK(UsageOf(s, "pods") == 1);
  CHECK(UsageOf(s, "memory_used_mib") == 30000);
  CHECK_OK(deviceshare_release(s, "uid-steps", &error), error);
  CHECK_OK(deviceshare_release(s, "uid-steps", &error), error); /* again */
  CHECK(UsageOf(s, "pods") == 0);
  CHECK(UsageOf(s, "memory_used_mib") == 0);
  CheckScheduleOptions(s);
  CHECK_OK(deviceshare_release(s, "uid-options", &error), error);
  CheckNodeEvents(s, pod);
  free(pod);
  CHECK(deviceshare_scheduler_destroy(s) == DEVICESHARE_OK);
}

void TestBindFromAnnotations(void) {
  char* error = NULL;
  deviceshare_scheduler* chooser = ExampleScheduler();
  char* pod = HamiPod("bound", "uid-bound", 20480);
  char* decision = NULL;
  CHECK_OK(deviceshare_schedule(chooser, pod, NULL, &decision, &error), error);
  char* node = JsonString(decision, "node");
  char* annotations = JsonValue(decision, "annotations");
  CHECK_TEXT(node != NULL && annotations != NULL, decision);

  /* A second scheduler learns of the pod from its record alone. */
  deviceshare_scheduler* watcher = ExampleScheduler();
  char* bound = Format(
      "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": "
      "\"bound\", \"namespace\": \"team-a\", \"uid\": \"uid-bound\", "
      "\"annotations\": %s}, \"spec\": {\"nodeName\": \"%s\", \"containers\": "
      "[{\"name\": \"main\", \"resources\": {\"limits\": {\"nvidia.com/gpu\": "
      "1, \"nvidia.com/gpumem\": 20480, \"nvidia.com/gpucores\": 30}}}]}}",
      annotations, node);
  CHECK_OK(deviceshare_bind(watcher, bound, node, &error), error);
  CHECK(UsageOf(watcher, "pods") == 1);
  CHECK(UsageOf(watcher, "memory_used_mib") == 20480);
  CHECK(UsageOf(watcher, "cores_used") == 30);
  /* A pod without a record cannot be bound from it. */
  char* bare = HamiPod("bare", "uid-bare", 1024);
  CHECK_CODE(deviceshare_bind(watcher, bare, node, &error),
             DEVICESHARE_FAILED_PRECONDITION, error);
  CHECK_OK(deviceshare_release(watcher, "uid-bound", &error), error);
  CHECK(UsageOf(watcher, "memory_used_mib") == 0);

  free(bare);
  free(bound);
  free(annotations);
  free(node);
  deviceshare_free(decision);
  free(pod);
  CHECK(deviceshare_scheduler_destroy(watcher) == DEVICESHARE_OK);
  CHECK(deviceshare_scheduler_destroy(chooser) == DEVICESHARE_OK);
}

static const char kDeviceClass[] =
    "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\n"
    "metadata: {name: any-gpu}\n"
    "spec:\n  selectors: [{cel: {expression: "
    "'device.driver == \"gpu.example.com\"'}}]\n";
static const char kSlice[] =
    "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\n"
    "metadata: {name: n1-gpus}\n"
    "spec:\n  driver: gpu.example.com\n  nodeName: n1\n"
    "  pool: {name: n1, generation: 1, resourceSliceCount: 1}\n"
    "  devices:\n  - name: gpu-0\n    allowMultipleAllocations: true\n"
    "    capacity:\n      memory: {value: 16Gi, requestPolicy: {default: "
    "16Gi, validRange: {min: 1Gi, step: 1Gi}}}\n"
    "  - name: gpu-1\n    capacity: {memory: {value: 16Gi}}\n";
static const char kClaim[] =
    "{\"apiVersion\": \"resource.k8s.io/v1\", \"kind\": \"ResourceClaim\", "
    "\"metadata\": {\"name\": \"half\", \"namespace\": \"default\"}, "
    "\"spec\": {\"devices\": {\"requests\": [{\"name\": \"gpu\", \"exactly\": "
    "{\"deviceClassName\": \"any-gpu\", \"capacity\": {\"requests\": "
    "{\"memory\": \"7500Mi\"}}}}]}}}";
static const char kClaimPod[] =
    "{apiVersion: v1, kind: Pod, metadata: {name: p1, uid: uid-p1}, spec: "
    "{resourceClaims: [{name: gpu, resourceClaimName: half}], containers: "
    "[{name: main, image: x}]}}";

void TestDraObjects(void) {
  char* error = NULL;
  deviceshare_scheduler* s = NewScheduler(NULL, NULL);
  CHECK_OK(deviceshare_upsert_object(s, kDeviceClass, &error), error);
  CHECK_OK(deviceshare_upsert_object(s, kSlice, &error), error);
  CHECK_OK(deviceshare_upsert_object(s, kClaim, &error), error);
  CHECK(UsageOf(s, "gpus") == 2);

  /* 7500Mi rounds up to the 1Gi step: 8Gi of the shared gpu-0, as
   * tests/simulate/simulate_dra_test.cc has it. */
  char* decision = NULL;
  CHECK_OK(deviceshare_schedule(s, kClaimPod, NULL, &decision, &error), error);
  CHECK_TEXT(strstr(decision, "\"node\":\"n1\"") != NULL, decision);
  CHECK_TEXT(strstr(decision,
                    "\"claims\":[{\"name\":\"gpu\",\"claim\":"
                    "\"default/half\",\"new\":true,\"allocation\":") != NULL,
             decision);
  CHECK_TEXT(
      strstr(decision, "\"consumedCapacity\":{\"memory\":\"8Gi\"}") != NULL &&
          strstr(decision, "\"device\":\"gpu-0\"") != NULL,
      decision);
  deviceshare_free(decision);
  CHECK(UsageOf(s, "memory_used_mib") == 8192);
  CHECK_OK(deviceshare_release(s, "uid-p1", &error), error);
  CHECK(UsageOf(s, "memory_used_mib") == 0);

  CHECK_OK(
      deviceshare_remove_object(s, "ResourceClaim", "default/half", &error),
      error);
  CHECK_OK(deviceshare_remove_object(s, "ResourceSlice", "n1-gpus", &error),
           error);
  CHECK_OK(deviceshare_remove_object(s, "DeviceClass", "any-gpu", &error),
           error);
  CHECK(UsageOf(s, "gpus") == 0);

  /* DRA objects may also come with the nodes, as simulate's --cluster. */
  char* both = Format("%s---\n%s", kDeviceClass, kSlice);
  char* result = NULL;
  CHECK_OK(deviceshare_upsert_nodes(s, both, &result, &error), error);
  CHECK_TEXT(strstr(result, "\"nodes\":[]") != NULL, result);
  deviceshare_free(result);
  CHECK(UsageOf(s, "gpus") == 2);
  free(both);
  CHECK(deviceshare_scheduler_destroy(s) == DEVICESHARE_OK);
}
