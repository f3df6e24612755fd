/* The C API's contract without scheduling much: versions, the document
 * splitter, configs, and every way a call can be wrong -- NULL arguments,
 * handles the library did not make or already destroyed, bad text and
 * wrong kinds -- each answered with its code and a message, never a
 * crash, and with outputs left alone. */
#include <stdlib.h>
#include <string.h>

#include "cases.h"
#include "check.h"

/* A two-node cluster in the inventory form: one 10 GiB GPU each. */
static const char kTwoNodes[] =
    "nodes:\n"
    "- name: n1\n"
    "  gpus: [{model: NVIDIA A30, memory_mib: 10240, uuid: GPU-n1}]\n"
    "- name: n2\n"
    "  gpus: [{model: NVIDIA A30, memory_mib: 10240, uuid: GPU-n2}]\n";

static const char kPod[] =
    "{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": "
    "\"p\", \"namespace\": \"default\", \"uid\": \"uid-p\"}, \"spec\": "
    "{\"containers\": [{\"name\": \"main\", \"resources\": {\"limits\": "
    "{\"nvidia.com/gpu\": 1, \"nvidia.com/gpumem\": 4096}}}]}}";

/* `code` is INVALID_ARGUMENT with a message that contains `needle`. */
#define CHECK_INVALID(call, needle, error) \
  CheckInvalid((call), (needle), &(error), __FILE__, __LINE__, #call)

static void CheckInvalid(deviceshare_code code, const char* needle,
                         char** error, const char* file, int line,
                         const char* call) {
  if (code != DEVICESHARE_INVALID_ARGUMENT || *error == NULL ||
      strstr(*error, needle) == NULL) {
    char* what = Format("%s:%d: %s: code %d, message \"%s\"", file, line, call,
                        (int)code, *error ? *error : "(none)");
    CheckFailed(file, line, "INVALID_ARGUMENT naming the argument", what);
  }
  deviceshare_free(*error);
  *error = NULL;
}

void TestVersion(void) {
  CHECK(deviceshare_abi_version() == DEVICESHARE_ABI_VERSION);
  CHECK(strcmp(deviceshare_version(), DEVICESHARE_EXPECTED_VERSION) == 0);
  deviceshare_free(NULL); /* NULL is fine */
}

void TestParseDocuments(void) {
  char* error = NULL;
  char* objects = NULL;
  char* workload = ReadExample("workload.yaml");
  CHECK_OK(deviceshare_parse_documents(workload, &objects, &error), error);
  size_t count = 0;
  char** pods = JsonArrayItems(objects, &count);
  CHECK_TEXT(count == 12, objects);
  for (size_t i = 0; i < count; ++i) {
    CHECK_TEXT(strstr(pods[i], "\"kind\":\"Pod\"") != NULL, pods[i]);
  }
  FreeItems(pods, count);
  deviceshare_free(objects);
  free(workload);

  /* A List's items take its place, in order. */
  objects = NULL;
  CHECK_OK(deviceshare_parse_documents(
               "kind: NodeList\nitems:\n- {kind: Node, metadata: {name: a}}\n"
               "- {kind: Node, metadata: {name: b}}\n---\n"
               "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"c\"}}\n",
               &objects, &error),
           error);
  CHECK_TEXT(strcmp(objects,
                    "[{\"kind\":\"Node\",\"metadata\":{\"name\":\"a\"}},"
                    "{\"kind\":\"Node\",\"metadata\":{\"name\":\"b\"}},"
                    "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"c\"}}]") == 0,
             objects);
  deviceshare_free(objects);

  objects = NULL;
  CHECK_OK(deviceshare_parse_documents("", &objects, &error), error);
  CHECK_TEXT(strcmp(objects, "[]") == 0, objects);
  deviceshare_free(objects);

  objects = NULL;
  CHECK_INVALID(deviceshare_parse_documents("a: [1, 2\n", &objects, &error),
                "line", error);
  CHECK_INVALID(deviceshare_parse_documents("- 1\n- 2\n", &objects, &error),
                "want an object", error);
  CHECK_INVALID(
      deviceshare_parse_documents("kind: List\nitems: 3\n", &objects, &error),
      "items", error);
  CHECK(objects == NULL); /* outputs are set only on success */
}

void TestCreateFromConfigs(void) {
  char* error = NULL;
  deviceshare_scheduler* scheduler = NULL;
  CHECK_OK(deviceshare_scheduler_create(NULL, &scheduler, &error), error);
  CHECK(deviceshare_scheduler_destroy(scheduler) == DEVICESHARE_OK);
  CHECK_OK(deviceshare_scheduler_create("", &scheduler, &error), error);
  CHECK(deviceshare_scheduler_destroy(scheduler) == DEVICESHARE_OK);
  const char* files[] = {"deviceshare.yaml", "device-config-hami.yaml",
                         "device-config-volcano.yaml"};
  for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); ++i) {
    char* config = ReadExample(files[i]);
    CHECK_OK(deviceshare_scheduler_create(config, &scheduler, &error), error);
    CHECK(deviceshare_scheduler_destroy(scheduler) == DEVICESHARE_OK);
    free(config);
  }

  /* A ConfigMap holding the whole file: spread's node policy sends the
   * second pod to the empty node (binpack would stack it on n1). */
  deviceshare_scheduler* spread = NewScheduler(
      "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: deviceshare}\n"
      "data:\n  deviceshare.yaml: |\n    scheduler: {nodePolicy: spread}\n",
      kTwoNodes);
  const char* nodes[2] = {"n1", "n2"};
  for (int i = 0; i < 2; ++i) {
    char* pod = Format(
        "{kind: Pod, metadata: {name: s%d, namespace: d}, spec: {containers: "
        "[{name: m, resources: {limits: {nvidia.com/gpu: 1, "
        "nvidia.com/gpumem: 1024}}}]}}",
        i);
    char* decision = NULL;
    CHECK_OK(deviceshare_schedule(spread, pod, NULL, &decision, &error), error);
    char* node = JsonString(decision, "node");
    CHECK_TEXT(node != NULL && strcmp(node, nodes[i]) == 0, decision);
    free(node);
    deviceshare_free(decision);
    free(pod);
  }
  CHECK(deviceshare_scheduler_destroy(spread) == DEVICESHARE_OK);

  scheduler = NULL;
  CHECK_INVALID(deviceshare_scheduler_create("scheduler: {nodePolicy: nope}",
                                             &scheduler, &error),
                "nope", error);
  CHECK_INVALID(deviceshare_scheduler_create("nvidia: {deviceSplitCout: 3}",
                                             &scheduler, &error),
                "deviceSplitCout", error);
  CHECK_INVALID(deviceshare_scheduler_create("{", &scheduler, &error), "config",
                error);
  CHECK(scheduler == NULL);
}

void TestNullArguments(void) {
  deviceshare_scheduler* s = NewScheduler(NULL, kTwoNodes);
  char* error = NULL;
  char* out = NULL;
  int score = 0;
  CHECK_INVALID(deviceshare_parse_documents(NULL, &out, &error), "text", error);
  CHECK_INVALID(deviceshare_parse_documents("", NULL, &error), "objects_json",
                error);
  CHECK_INVALID(deviceshare_scheduler_create(NULL, NULL, &error), "out", error);
  CHECK(deviceshare_scheduler_destroy(NULL) == DEVICESHARE_INVALID_ARGUMENT);
  CHECK_INVALID(deviceshare_upsert_nodes(NULL, kTwoNodes, &out, &error),
                "scheduler", error);
  CHECK_INVALID(deviceshare_upsert_nodes(s, NULL, &out, &error), "nodes",
                error);
  CHECK_INVALID(deviceshare_upsert_nodes(s, kTwoNodes, NULL, &error),
                "result_json", error);
  CHECK_INVALID(deviceshare_remove_node(NULL, "n1", &error), "scheduler",
                error);
  CHECK_INVALID(deviceshare_remove_node(s, NULL, &error), "name", error);
  CHECK_INVALID(deviceshare_upsert_object(NULL, "{}", &error), "scheduler",
                error);
  CHECK_INVALID(deviceshare_upsert_object(s, NULL, &error), "object", error);
  CHECK_INVALID(deviceshare_remove_object(NULL, "DeviceClass", "c", &error),
                "scheduler", error);
  CHECK_INVALID(deviceshare_remove_object(s, NULL, "c", &error), "kind", error);
  CHECK_INVALID(deviceshare_remove_object(s, "DeviceClass", NULL, &error),
                "name", error);
  CHECK_INVALID(deviceshare_filter(NULL, kPod, NULL, &out, &error), "scheduler",
                error);
  CHECK_INVALID(deviceshare_filter(s, NULL, NULL, &out, &error), "pod", error);
  CHECK_INVALID(deviceshare_filter(s, kPod, NULL, NULL, &error),
                "verdicts_json", error);
  CHECK_INVALID(deviceshare_score(NULL, kPod, "n1", &score, &error),
                "scheduler", error);
  CHECK_INVALID(deviceshare_score(s, NULL, "n1", &score, &error), "pod", error);
  CHECK_INVALID(deviceshare_score(s, kPod, NULL, &score, &error), "node",
                error);
  CHECK_INVALID(deviceshare_score(s, kPod, "n1", NULL, &error), "score", error);
  CHECK_INVALID(deviceshare_schedule(NULL, kPod, NULL, &out, &error),
                "scheduler", error);
  CHECK_INVALID(deviceshare_schedule(s, NULL, NULL, &out, &error), "pod",
                error);
  CHECK_INVALID(deviceshare_schedule(s, kPod, NULL, NULL, &error),
                "decision_json", error);
  CHECK_INVALID(deviceshare_allocate(NULL, kPod, "n1", &out, &error),
                "scheduler", error);
  CHECK_INVALID(deviceshare_allocate(s, NULL, "n1", &out, &error), "pod",
                error);
  CHECK_INVALID(deviceshare_allocate(s, kPod, NULL, &out, &error), "node",
                error);
  CHECK_INVALID(deviceshare_allocate(s, kPod, "n1", NULL, &error),
                "decision_json", error);
  CHECK_INVALID(deviceshare_bind(NULL, kPod, "n1", &error), "scheduler", error);
  CHECK_INVALID(deviceshare_bind(s, NULL, "n1", &error), "pod", error);
  CHECK_INVALID(deviceshare_bind(s, kPod, NULL, &error), "node", error);
  CHECK_INVALID(deviceshare_release(NULL, "uid-p", &error), "scheduler", error);
  CHECK_INVALID(deviceshare_release(s, NULL, &error), "pod_uid", error);
  CHECK_INVALID(deviceshare_usage(NULL, &out, &error), "scheduler", error);
  CHECK_INVALID(deviceshare_usage(s, NULL, &error), "usage_json", error);
  /* Without an error pointer a failure is only its code. */
  CHECK(deviceshare_usage(s, NULL, NULL) == DEVICESHARE_INVALID_ARGUMENT);
  CHECK(out == NULL && score == 0);
  /* Nothing above touched the scheduler. */
  CHECK_OK(deviceshare_schedule(s, kPod, NULL, &out, &error), error);
  deviceshare_free(out);
  CHECK(deviceshare_scheduler_destroy(s) == DEVICESHARE_OK);
}

/* Every call on `handle` is INVALID_ARGUMENT with a message. */
static void CheckDeadHandle(deviceshare_scheduler* handle) {
  char* error = NULL;
  char* out = NULL;
  int score = -1;
  const char* live = "not a live handle";
  CHECK_INVALID(deviceshare_upsert_nodes(handle, kTwoNodes, &out, &error), live,
                error);
  CHECK_INVALID(deviceshare_remove_node(handle, "n1", &error), live, error);
  CHECK_INVALID(deviceshare_upsert_object(handle, "{}", &error), live, error);
  CHECK_INVALID(deviceshare_remove_object(handle, "DeviceClass", "c", &error),
                live, error);
  CHECK_INVALID(deviceshare_filter(handle, kPod, NULL, &out, &error), live,
                error);
  CHECK_INVALID(deviceshare_score(handle, kPod, "n1", &score, &error), live,
                error);
  CHECK_INVALID(deviceshare_schedule(handle, kPod, NULL, &out, &error), live,
                error);
  CHECK_INVALID(deviceshare_allocate(handle, kPod, "n1", &out, &error), live,
                error);
  CHECK_INVALID(deviceshare_bind(handle, kPod, "n1", &error), live, error);
  CHECK_INVALID(deviceshare_release(handle, "uid-p", &error), live, error);
  CHECK_INVALID(deviceshare_usage(handle, &out, &error), live, error);
  CHECK(deviceshare_scheduler_destroy(handle) == DEVICESHARE_INVALID_ARGUMENT);
  CHECK(out == NULL && score == -1);
}

void TestUnknownAndDestroyedHandles(void) {
  static int not_a_scheduler;
  CheckDeadHandle((deviceshare_scheduler*)&not_a_scheduler);

  deviceshare_scheduler* destroyed = NewScheduler(NULL, kTwoNodes);
  CHECK(deviceshare_scheduler_destroy(destroyed) == DEVICESHARE_OK);
  CheckDeadHandle(destroyed);
  /* A scheduler made afterwards is a new handle; the old one stays dead. */
  deviceshare_scheduler* fresh = NewScheduler(NULL, kTwoNodes);
  CHECK(fresh != destroyed);
  CheckDeadHandle(destroyed);
  char* error = NULL;
  char* usage = NULL;
  CHECK_OK(deviceshare_usage(fresh, &usage, &error), error);
  CHECK_TEXT(JsonInt(usage, "nodes") == 2, usage);
  deviceshare_free(usage);
  CHECK(deviceshare_scheduler_destroy(fresh) == DEVICESHARE_OK);
}

/* Bad pods: unparsable, a list, another kind, a bad field. */
static void CheckBadPods(deviceshare_scheduler* s) {
  char* error = NULL;
  char* out = NULL;
  int score = -1;
  CHECK_INVALID(deviceshare_schedule(s, "{\"kind\": ", NULL, &out, &error),
                "pod", error);
  CHECK_INVALID(deviceshare_schedule(s, "[1, 2]", NULL, &out, &error),
                "want a Kubernetes object", error);
  const char* node = "kind: Node\nmetadata: {name: n9}\n";
  CHECK_INVALID(deviceshare_schedule(s, node, NULL, &out, &error),
                "kind Node, want Pod", error);
  CHECK_INVALID(deviceshare_filter(s, node, NULL, &out, &error), "want Pod",
                error);
  CHECK_INVALID(deviceshare_score(s, node, "n1", &score, &error), "want Pod",
                error);
  CHECK_INVALID(deviceshare_allocate(s, node, "n1", &out, &error), "want Pod",
                error);
  CHECK_INVALID(deviceshare_bind(s, node, "n1", &error), "want Pod", error);
  CHECK_INVALID(deviceshare_schedule(
                    s,
                    "{kind: Pod, metadata: {name: b}, spec: "
                    "{containers: [{name: m, resources: {limits: "
                    "{nvidia.com/gpu: 1, nvidia.com/gpumem: \"-3\"}}}]}}",
                    NULL, &out, &error),
                "gpumem", error);
  CHECK(out == NULL && score == -1);
}

/* Bad nodes, DRA objects and the small JSON arguments. */
static void CheckBadArguments(deviceshare_scheduler* s) {
  char* error = NULL;
  char* out = NULL;
  CHECK_INVALID(deviceshare_upsert_nodes(s, "nodes: [", &out, &error), "nodes",
                error);
  CHECK_INVALID(deviceshare_upsert_nodes(s, kPod, &out, &error), "kind: Pod",
                error);
  CHECK_INVALID(
      deviceshare_upsert_nodes(
          s, "nodes:\n- name: x\n  gpus: [{model: A, memory_mib: 1, splt: 2}]",
          &out, &error),
      "splt", error);
  CHECK_CODE(deviceshare_upsert_nodes(s, "kind: Node\nmetadata: {name: cpu}\n",
                                      &out, &error),
             DEVICESHARE_NOT_FOUND, error);
  CHECK_INVALID(deviceshare_upsert_object(s, kPod, &error),
                "kind Pod, want DeviceClass", error);
  CHECK_INVALID(deviceshare_upsert_object(s, "{", &error), "object", error);
  CHECK_INVALID(deviceshare_upsert_object(
                    s,
                    "{apiVersion: resource.k8s.io/v1, kind: ResourceSlice, "
                    "metadata: {name: s}, spec: {driver: d, allNodes: true, "
                    "pool: {name: p, generation: 1, resourceSliceCount: 1}, "
                    "devices: [{name: g}]}}",
                    &error),
                "nodeName", error);
  CHECK_INVALID(deviceshare_remove_object(s, "Pod", "p", &error), "kind",
                error);
  CHECK_INVALID(
      deviceshare_remove_object(s, "ResourceClaim", "noslash", &error),
      "namespace/name", error);
  CHECK_INVALID(deviceshare_remove_node(s, "", &error), "empty", error);
  CHECK_INVALID(deviceshare_release(s, "", &error), "empty", error);
  CHECK_INVALID(deviceshare_filter(s, kPod, "[1]", &out, &error),
                "nodes_json[0]", error);
  CHECK_INVALID(deviceshare_filter(s, kPod, "{}", &out, &error), "nodes_json",
                error);
  CHECK_INVALID(deviceshare_filter(s, kPod, "[", &out, &error), "nodes_json",
                error);
  CHECK_INVALID(deviceshare_schedule(s, kPod, "{\"nodes\": []}", &out, &error),
                "unknown key", error);
  CHECK_INVALID(
      deviceshare_schedule(s, kPod, "{\"candidates\": \"n1\"}", &out, &error),
      "candidates", error);
  CHECK_INVALID(deviceshare_schedule(s, kPod, "{\"max_explained_nodes\": -1}",
                                     &out, &error),
                "max_explained_nodes", error);
  CHECK_INVALID(
      deviceshare_schedule(s, kPod, "{\"count_reasons\": 1}", &out, &error),
      "count_reasons", error);
  CHECK_INVALID(deviceshare_schedule(s, kPod, "[]", &out, &error),
                "options_json", error);
  CHECK(out == NULL);
}

/* Texts must be UTF-8: each malformed form is named, with its byte. */
static void CheckUtf8(deviceshare_scheduler* s) {
  char* error = NULL;
  char* out = NULL;
  const char* malformed[] = {
      "\xff",             /* never a UTF-8 byte */
      "\xc0\xaf",         /* overlong '/' */
      "\xed\xa0\x80",     /* a surrogate */
      "\xe2\x82",         /* cut short */
      "\xf4\x90\x80\x80", /* above U+10FFFF */
  };
  for (size_t i = 0; i < sizeof(malformed) / sizeof(malformed[0]); ++i) {
    char* pod = Format(
        "{kind: Pod, metadata: {name: u, annotations: {a: "
        "\"%s\"}}, spec: {containers: [{name: m}]}}",
        malformed[i]);
    CHECK_INVALID(deviceshare_schedule(s, pod, NULL, &out, &error),
                  "pod: byte 50", error);
    free(pod);
  }
  CHECK_INVALID(deviceshare_remove_node(s, "n\xff", &error), "name: byte 1",
                error);
  CHECK_INVALID(deviceshare_filter(s, kPod, "[\"\xc3\"]", &out, &error),
                "nodes_json: byte 2 (0xc3)", error);
  CHECK(out == NULL);
  /* Two-, three- and four-byte characters are fine. */
  CHECK_OK(deviceshare_schedule(s,
                                "{kind: Pod, metadata: {name: u, annotations: "
                                "{a: \"caf\xc3\xa9 \xe2\x82\xac "
                                "\xf0\x9f\x98\x80\"}}, spec: {containers: "
                                "[{name: m}]}}",
                                NULL, &out, &error),
           error);
  CHECK_TEXT(strstr(out, "\"placed\":true") != NULL, out);
  deviceshare_free(out);
  CHECK_OK(deviceshare_release(s, "default/u", &error), error);
}

void TestBadInputs(void) {
  deviceshare_scheduler* s = NewScheduler(NULL, kTwoNodes);
  CheckBadPods(s);
  CheckBadArguments(s);
  CheckUtf8(s);
  /* The scheduler is as it was: both nodes, and a pod still fits. */
  char* error = NULL;
  char* out = NULL;
  CHECK_OK(
      deviceshare_schedule(s, kPod, "{\"candidates\": [\"n2\"]}", &out, &error),
      error);
  char* node = JsonString(out, "node");
  CHECK_TEXT(node != NULL && strcmp(node, "n2") == 0, out);
  free(node);
  deviceshare_free(out);
  CHECK(deviceshare_scheduler_destroy(s) == DEVICESHARE_OK);
}

/* A prepared pod answers as the text entry points do, for one node at a
 * time; a destroyed pod handle is refused like a dead scheduler. */
void TestPreparedPods(void) {
  deviceshare_scheduler* s = NewScheduler(NULL, kTwoNodes);
  char* error = NULL;
  deviceshare_pod* pod = NULL;
  CHECK_OK(deviceshare_pod_create(s, kPod, &pod, &error), error);
  CHECK(pod != NULL);
  int fits = -1, score = -1, text_score = -1, unresolvable = -1;
  const char* code = NULL;
  char* reason = (char*)"untouched";
  CHECK_OK(deviceshare_pod_filter_node(s, pod, "n1", &fits, &score, &code,
                                       &unresolvable, &reason, &error),
           error);
  CHECK(fits == 1 && strcmp(code, "Fits") == 0 && reason == NULL &&
        unresolvable == 0);
  CHECK_OK(deviceshare_score(s, kPod, "n1", &text_score, &error), error);
  CHECK(score == text_score);
  int prepared_score = -1;
  CHECK_OK(deviceshare_pod_score_node(s, pod, "n1", &prepared_score, &error),
           error);
  CHECK(prepared_score == text_score);

  /* Without pods that are not on the node: the same verdict. */
  const char* released[] = {"uid-nobody"};
  int without_fits = -1, without_score = -1, without_unresolvable = -1;
  const char* without_code = NULL;
  char* without_reason = (char*)"untouched";
  CHECK_OK(deviceshare_pod_filter_node_without(
               s, pod, "n1", released, 1, &without_fits, &without_score,
               &without_code, &without_unresolvable, &without_reason, &error),
           error);
  CHECK(without_fits == 1 && without_score == score &&
        strcmp(without_code, "Fits") == 0 && without_reason == NULL);
  const char* bad_released[] = {NULL};
  CHECK_INVALID(
      deviceshare_pod_filter_node_without(
          s, pod, "n1", bad_released, 1, &without_fits, &without_score,
          &without_code, &without_unresolvable, &without_reason, &error),
      "released[0]", error);
  CHECK_INVALID(
      deviceshare_pod_filter_node_without(
          s, pod, "n1", NULL, 2, &without_fits, &without_score, &without_code,
          &without_unresolvable, &without_reason, &error),
      "released", error);

  int wants = -1;
  CHECK(deviceshare_pod_wants_devices(pod, &wants) == DEVICESHARE_OK);
  CHECK(wants == 1);
  static const char kPlain[] =
      "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"plain\", "
      "\"namespace\": \"default\", \"uid\": \"uid-plain\"}, \"spec\": "
      "{\"containers\": [{\"name\": \"main\", \"resources\": {\"limits\": "
      "{\"cpu\": 1}}}]}}";
  deviceshare_pod* plain = NULL;
  CHECK_OK(deviceshare_pod_create(s, kPlain, &plain, &error), error);
  CHECK(deviceshare_pod_wants_devices(plain, &wants) == DEVICESHARE_OK);
  CHECK(wants == 0);
  CHECK(deviceshare_pod_wants_devices(plain, NULL) ==
        DEVICESHARE_INVALID_ARGUMENT);
  CHECK(deviceshare_pod_destroy(plain) == DEVICESHARE_OK);
  CHECK(deviceshare_pod_wants_devices(plain, &wants) ==
        DEVICESHARE_INVALID_ARGUMENT);

  /* 16 GiB on a 10 GiB GPU: a verdict, not an error. */
  static const char kHuge[] =
      "{\"kind\": \"Pod\", \"metadata\": {\"name\": \"huge\", "
      "\"namespace\": \"default\", \"uid\": \"uid-huge\"}, \"spec\": "
      "{\"containers\": [{\"name\": \"main\", \"resources\": {\"limits\": "
      "{\"nvidia.com/gpu\": 1, \"nvidia.com/gpumem\": 16384}}}]}}";
  deviceshare_pod* huge = NULL;
  CHECK_OK(deviceshare_pod_create(s, kHuge, &huge, &error), error);
  CHECK_OK(deviceshare_pod_filter_node(s, huge, "n2", &fits, &score, &code,
                                       &unresolvable, &reason, &error),
           error);
  /* Room could be made on the node: not unresolvable. */
  CHECK(fits == 0 && score == 0 && unresolvable == 0);
  CHECK_TEXT(strcmp(code, "InsufficientMemory") == 0, code);
  CHECK_TEXT(reason != NULL && strstr(reason, "InsufficientMemory") != NULL,
             reason ? reason : "(null)");
  deviceshare_free(reason);
  CHECK(deviceshare_pod_score_node(s, huge, "n2", &score, &error) ==
        DEVICESHARE_FAILED_PRECONDITION);
  deviceshare_free(error);
  error = NULL;
  /* A node the scheduler does not know is a verdict too, as in Filter. */
  CHECK_OK(deviceshare_pod_filter_node(s, huge, "gone", &fits, &score, &code,
                                       &unresolvable, &reason, &error),
           error);
  CHECK_TEXT(fits == 0 && unresolvable == 1 && strcmp(code, "NodeUnknown") == 0,
             code);
  deviceshare_free(reason);

  /* Bad text, NULL arguments, dead handles. */
  CHECK_INVALID(deviceshare_pod_create(s, "{", &huge, &error), "", error);
  CHECK_INVALID(deviceshare_pod_create(s, kPod, NULL, &error), "out", error);
  CHECK_INVALID(deviceshare_pod_filter_node(s, pod, NULL, &fits, &score, &code,
                                            &unresolvable, &reason, &error),
                "node", error);
  CHECK_INVALID(deviceshare_pod_filter_node(s, pod, "n1", &fits, &score, NULL,
                                            &unresolvable, &reason, &error),
                "code", error);
  CHECK(deviceshare_pod_destroy(pod) == DEVICESHARE_OK);
  CHECK(deviceshare_pod_destroy(huge) == DEVICESHARE_OK);
  CHECK_INVALID(deviceshare_pod_filter_node(s, pod, "n1", &fits, &score, &code,
                                            &unresolvable, &reason, &error),
                "not a live handle", error);
  CHECK_INVALID(deviceshare_pod_score_node(s, pod, "n1", &score, &error),
                "not a live handle", error);
  CHECK(deviceshare_pod_destroy(pod) == DEVICESHARE_INVALID_ARGUMENT);
  CHECK(deviceshare_pod_destroy(NULL) == DEVICESHARE_INVALID_ARGUMENT);
  CHECK(deviceshare_scheduler_destroy(s) == DEVICESHARE_OK);
}
