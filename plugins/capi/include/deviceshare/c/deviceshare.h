/* File: deviceshare/c/deviceshare.h
 *
 * The C API of deviceshare (C11): the library's Scheduler for hosts that
 * cannot link C++ -- Go schedulers through cgo (bindings/go), Rust, Python
 * ctypes. Objects travel as the text Kubernetes writes them (JSON or YAML);
 * answers come back as JSON. Every text argument is NUL-terminated UTF-8:
 * a malformed byte is DEVICESHARE_INVALID_ARGUMENT naming the argument and
 * the byte's offset.
 *
 * Handles are opaque. Every call that can fail returns a deviceshare_code
 * (the values of absl::StatusCode); on failure, when `error` is not NULL,
 * *error receives a message naming the object and the field, which the
 * caller frees with deviceshare_free(). Outputs are set only on success.
 * A handle the library did not make (or already destroyed) is
 * DEVICESHARE_INVALID_ARGUMENT, never a crash. No exception crosses this
 * API. "Does not fit" is not an error: it is a decision without a node.
 *
 * Thread safety: as deviceshare::Scheduler -- every call on one scheduler
 * may come from many threads at once; destroy a scheduler only when no
 * call on it is running.
 *
 * ABI: DEVICESHARE_ABI_VERSION changes whenever a declaration here does;
 * compare it with deviceshare_abi_version() at run time. Only the
 * functions below are exported from the shared library.
 */
#ifndef DEVICESHARE_C_DEVICESHARE_H_
#define DEVICESHARE_C_DEVICESHARE_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define DEVICESHARE_ABI_VERSION 4

#if defined(__GNUC__)
#define DEVICESHARE_EXPORT __attribute__((visibility("default")))
#else
#define DEVICESHARE_EXPORT
#endif

typedef struct deviceshare_scheduler deviceshare_scheduler;
typedef struct deviceshare_pod deviceshare_pod;

/* absl::StatusCode's values. */
typedef enum deviceshare_code {
  DEVICESHARE_OK = 0,
  DEVICESHARE_CANCELLED = 1,
  DEVICESHARE_UNKNOWN = 2,
  DEVICESHARE_INVALID_ARGUMENT = 3,
  DEVICESHARE_DEADLINE_EXCEEDED = 4,
  DEVICESHARE_NOT_FOUND = 5,
  DEVICESHARE_ALREADY_EXISTS = 6,
  DEVICESHARE_PERMISSION_DENIED = 7,
  DEVICESHARE_RESOURCE_EXHAUSTED = 8,
  DEVICESHARE_FAILED_PRECONDITION = 9,
  DEVICESHARE_ABORTED = 10,
  DEVICESHARE_OUT_OF_RANGE = 11,
  DEVICESHARE_UNIMPLEMENTED = 12,
  DEVICESHARE_INTERNAL = 13,
  DEVICESHARE_UNAVAILABLE = 14,
  DEVICESHARE_DATA_LOSS = 15,
  DEVICESHARE_UNAUTHENTICATED = 16
} deviceshare_code;

/* ---- Library --------------------------------------------------------- */

/* DEVICESHARE_ABI_VERSION of the library loaded. */
DEVICESHARE_EXPORT int deviceshare_abi_version(void);
/* The release, e.g. "0.1.0" (project() in CMake); a static string. */
DEVICESHARE_EXPORT const char* deviceshare_version(void);
/* Frees a string this API returned; NULL is fine. */
DEVICESHARE_EXPORT void deviceshare_free(char* text);

/* The documents of a YAML or JSON text (several YAML documents, a List's
 * items, or one object) as a JSON array of objects: for hosts without a
 * YAML parser. */
DEVICESHARE_EXPORT deviceshare_code deviceshare_parse_documents(
    const char* text, char** objects_json, char** error);

/* ---- Scheduler --------------------------------------------------------- */

/* A scheduler from a deviceshare config (YAML or JSON, the `scheduler:` and
 * `nvidia:` sections or a ConfigMap holding them, as `simulate --config`
 * reads); NULL or "" for the defaults. Every built-in backend and policy is
 * registered. */
DEVICESHARE_EXPORT deviceshare_code deviceshare_scheduler_create(
    const char* config, deviceshare_scheduler** out, char** error);
DEVICESHARE_EXPORT deviceshare_code
deviceshare_scheduler_destroy(deviceshare_scheduler* scheduler);

/* Nodes: a Kubernetes Node object with a registration annotation of either
 * dialect (hami.io/node-nvidia-register, volcano.sh/node-vgpu-register), a
 * List of them, or the inventory form (`nodes:` with model, memory_mib,
 * count, ... per GPU, as simulate's --cluster reads it). DeviceClass and
 * node-local ResourceSlice objects beside Node objects are upserted too; a
 * short-form node with `dra: true` is upserted without GPUs (feed its
 * ResourceSlices with deviceshare_upsert_object). Answers
 * {"nodes": [names], "displaced": ["namespace/pod", ...], "notes": [...]}
 * (displaced: pods that no longer fit a node whose inventory changed;
 * notes: Nodes skipped for want of a registration, `dra: true` nodes).
 * DEVICESHARE_NOT_FOUND when the text holds only Nodes without a
 * registration. A node the scheduler rejects stops the upsert there (the
 * message names it); the nodes before it stay upserted. */
DEVICESHARE_EXPORT deviceshare_code
deviceshare_upsert_nodes(deviceshare_scheduler* scheduler, const char* nodes,
                         char** result_json, char** error);
DEVICESHARE_EXPORT deviceshare_code deviceshare_remove_node(
    deviceshare_scheduler* scheduler, const char* name, char** error);

/* DRA objects (resource.k8s.io/v1): a DeviceClass, a node-local
 * ResourceSlice (spec.nodeName set) or a ResourceClaim (JSON or YAML); and
 * a ResourceQuota (v1), whose limits.<gpu memory> and limits.<gpu cores>
 * cap what its namespace's pods hold (HAMi's GPU quota; a pod past it is
 * not placed: QuotaExceeded). Any other kind is
 * DEVICESHARE_INVALID_ARGUMENT. Removal by kind ("DeviceClass",
 * "ResourceSlice", "ResourceClaim", "ResourceQuota") and name
 * ("namespace/name" for a claim or a quota). */
DEVICESHARE_EXPORT deviceshare_code deviceshare_upsert_object(
    deviceshare_scheduler* scheduler, const char* object, char** error);
DEVICESHARE_EXPORT deviceshare_code
deviceshare_remove_object(deviceshare_scheduler* scheduler, const char* kind,
                          const char* name, char** error);

/* ---- Pods (a Kubernetes Pod object, JSON or YAML, either dialect) ----- */

/* The filter step on `nodes_json` (a JSON array of node names; NULL or
 * "[]": every node): [{"node", "fits", "code", "unresolvable", "reason",
 * "score"}, ...] in the given order (unresolvable: making room on the node
 * would not help, as deviceshare_pod_filter_node). */
DEVICESHARE_EXPORT deviceshare_code
deviceshare_filter(deviceshare_scheduler* scheduler, const char* pod,
                   const char* nodes_json, char** verdicts_json, char** error);
/* The node policy's score (0..100) of a node the pod fits;
 * DEVICESHARE_FAILED_PRECONDITION (with the reason) when it does not. */
DEVICESHARE_EXPORT deviceshare_code
deviceshare_score(deviceshare_scheduler* scheduler, const char* pod,
                  const char* node, int* score, char** error);

/* A pod parsed once (as the calls above parse it, with `scheduler`'s
 * config) for the per-node calls below: a framework plugin's PreFilter
 * makes it, and its Filter and Score for each node cross into C with no
 * text to parse or JSON to encode. Destroy it when the pod's cycle ends;
 * a destroyed or foreign pod handle is DEVICESHARE_INVALID_ARGUMENT. */
DEVICESHARE_EXPORT deviceshare_code
deviceshare_pod_create(deviceshare_scheduler* scheduler, const char* pod,
                       deviceshare_pod** out, char** error);
DEVICESHARE_EXPORT deviceshare_code
deviceshare_pod_destroy(deviceshare_pod* pod);
/* The filter step for one node: *fits is 1 or 0, *score the score of a fit
 * (else 0), *code the reason code ("Fits", "InsufficientMemory", ...; a
 * static string, not to be freed), *unresolvable 1 when making room on the
 * node (preempting pods) would not help -- kube-scheduler's
 * UnschedulableAndUnresolvable, e.g. NodeUnknown, NoGpus, TypeMismatch --
 * else 0, *reason the reason's text when it does not fit (free it with
 * deviceshare_free; NULL for a fit). */
DEVICESHARE_EXPORT deviceshare_code deviceshare_pod_filter_node(
    deviceshare_scheduler* scheduler, const deviceshare_pod* pod,
    const char* node, int* fits, int* score, const char** code,
    int* unresolvable, char** reason, char** error);
/* deviceshare_pod_filter_node as if the pods `released` (released_count
 * metadata.uid strings) were gone from the node: a host's preemption
 * simulation (kube-scheduler's PreFilterExtensions.RemovePod). A uid of a
 * pod not placed on that node is ignored; nothing is released for real.
 * No released pods: deviceshare_pod_filter_node. */
DEVICESHARE_EXPORT deviceshare_code deviceshare_pod_filter_node_without(
    deviceshare_scheduler* scheduler, const deviceshare_pod* pod,
    const char* node, const char* const* released, size_t released_count,
    int* fits, int* score, const char** code, int* unresolvable, char** reason,
    char** error);
/* Whether a prepared pod asks for devices at all (*wants 1 or 0): a GPU of
 * either dialect in any container, or a DRA ResourceClaim. A host skips
 * the per-node calls for a pod that does not (kube-scheduler's PreFilter
 * answers Skip): every node fits it as far as devices go. */
DEVICESHARE_EXPORT deviceshare_code
deviceshare_pod_wants_devices(const deviceshare_pod* pod, int* wants);
/* One node's filter step, as deviceshare_pod_filter_node answers it. */
typedef struct deviceshare_node_verdict {
  const char* node;
  int fits;
  int score;        /* of a fit, else 0 */
  const char* code; /* "Fits", "InsufficientMemory", ... */
  int unresolvable;
  const char* reason; /* NULL for a fit */
} deviceshare_node_verdict;
/* The filter step for every node the scheduler knows, in one call: a
 * framework plugin's PreFilter asks it once per pod, and its Filter and
 * Score per node then cost a lookup, not a crossing into C (each of
 * which takes the scheduler's and the handles' locks). Pure, as
 * deviceshare_filter; the best fitting node's allocation is remembered
 * for the deviceshare_pod_allocate that follows, as the extender's
 * filter does. *verdicts is *count entries (in no particular order), and
 * every string they point to, in one block: free it with
 * deviceshare_verdicts_free. */
DEVICESHARE_EXPORT deviceshare_code deviceshare_pod_filter_all(
    deviceshare_scheduler* scheduler, const deviceshare_pod* pod,
    deviceshare_node_verdict** verdicts, size_t* count, char** error);
DEVICESHARE_EXPORT void deviceshare_verdicts_free(
    deviceshare_node_verdict* verdicts);
/* deviceshare_allocate for a prepared pod: the pod as it was prepared
 * (its text is not parsed again). */
DEVICESHARE_EXPORT deviceshare_code deviceshare_pod_allocate(
    deviceshare_scheduler* scheduler, const deviceshare_pod* pod,
    const char* node, char** decision_json, char** error);
/* deviceshare_score for a prepared pod. */
DEVICESHARE_EXPORT deviceshare_code deviceshare_pod_score_node(
    deviceshare_scheduler* scheduler, const deviceshare_pod* pod,
    const char* node, int* score, char** error);

/* The whole decision: the best node of the candidates (options_json:
 * {"candidates": [names], "max_explained_nodes": n, "count_reasons": b};
 * NULL for every node), reserved. Answers the decision:
 *   {"placed": true, "pod", "node", "score", "mode", "mode_choice",
 *    "containers": [{"name", "devices": [{"uuid", "mode", "memory_mib",
 *        "cores", and for a MIG instance "mig_profile", "mig_start",
 *        "mig_slices", "mig_action" (+ "mig_group", "mig_position")}],
 *        "env": {...}}],    what the node agent injects
 *    "annotations": {...},   the record to write on the pod, its dialect
 *    "claims": [{"name", "claim", "new", "allocation": {status.allocation}}]}
 * or {"placed": false, "pod", "reasons": {node: reason},
 *    "reason_counts": {code: nodes}}.
 * "containers" is byte for byte what `deviceshare-scheduler simulate
 * --output json` prints under a placement (every container, init
 * containers first; one without GPUs has empty devices and env).
 * DEVICESHARE_ALREADY_EXISTS for a pod already placed. */
DEVICESHARE_EXPORT deviceshare_code deviceshare_schedule(
    deviceshare_scheduler* scheduler, const char* pod, const char* options_json,
    char** decision_json, char** error);
/* The decision on one node (a host that chose it): as above. */
DEVICESHARE_EXPORT deviceshare_code
deviceshare_allocate(deviceshare_scheduler* scheduler, const char* pod,
                     const char* node, char** decision_json, char** error);
/* Records a pod bound elsewhere, from the allocation record its annotations
 * carry (either dialect). DEVICESHARE_FAILED_PRECONDITION when it carries
 * none. */
DEVICESHARE_EXPORT deviceshare_code
deviceshare_bind(deviceshare_scheduler* scheduler, const char* pod,
                 const char* node, char** error);
/* Forgets a pod (metadata.uid, or "namespace/name" for a pod without one)
 * and frees its shares: the unreserve step, or a pod gone. Idempotent. */
DEVICESHARE_EXPORT deviceshare_code deviceshare_release(
    deviceshare_scheduler* scheduler, const char* pod_uid, char** error);

/* The cluster's GPU usage: {"nodes", "pods", "gpus", "gpus_idle",
 * "memory_capacity_mib", "memory_used_mib", "core_capacity",
 * "cores_used"}, annotated and DRA GPUs together. */
DEVICESHARE_EXPORT deviceshare_code deviceshare_usage(
    deviceshare_scheduler* scheduler, char** usage_json, char** error);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* DEVICESHARE_C_DEVICESHARE_H_ */
