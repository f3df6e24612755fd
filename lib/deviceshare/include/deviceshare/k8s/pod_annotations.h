// File: k8s/pod_annotations.h
//
// The bridge between a PodAllocation and the annotations on the Pod object,
// in either dialect. Codecs (codec/) do the strings; this file knows which
// keys to write and how to map the entries back onto the pod's containers.
#ifndef DEVICESHARE_K8S_POD_ANNOTATIONS_H_
#define DEVICESHARE_K8S_POD_ANNOTATIONS_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "deviceshare/model/pod_allocation.h"
#include "deviceshare/model/pod_request.h"
#include "nlohmann/json.hpp"

namespace deviceshare {

// The annotations the scheduler writes at bind time in `dialect`: the
// allocation record (twice: -allocated/ids-new and -to-allocate), the node,
// the decision time, bind-time and bind-phase=allocating. Times are unix
// seconds of `now`. MIG grants: Volcano writes them into the record
// (`GPU-a[group2-3]` / `GPU-a[1g.10gb-6]`, codec/volcano_codec.h); HAMi keeps
// plain uuids there and also writes `hami.io/vgpu-mig-allocations`
// (codec/hami_codec.h) when the allocation has a MIG grant to record.
// `volcano_memory_factor` (DeviceConfig::memory_factor) sets the memory unit
// of Volcano's record (codec/volcano_codec.h); HAMi's record is in MiB.
std::map<std::string, std::string> AllocationAnnotations(
    const PodAllocation& allocation, Dialect dialect, absl::Time now,
    int32_t volcano_memory_factor);

// The annotations that undo AllocationAnnotations() after a bind that
// failed: every key it may write maps to nullopt (a JSON merge patch's null
// deletes the key), except bind-phase, which becomes `failed` so that the
// node agent of either project leaves the pod alone.
std::map<std::string, std::optional<std::string>> RollbackAnnotations(
    Dialect dialect);

// The dialect of the allocation record `annotations` carry (the allocated
// key or its to-allocate twin; HAMi's wins, as AllocationFromAnnotations
// reads it); nullopt when they carry none.
std::optional<Dialect> RecordDialect(
    const std::map<std::string, std::string>& annotations);

// The node of `pod`, whose record is of `dialect`: spec.nodeName, else the
// record's node annotation; "" when neither says.
std::string RecordNode(const nlohmann::json& pod,
                       const std::map<std::string, std::string>& annotations,
                       Dialect dialect);

// A Pod object's metadata.annotations with string values, as
// AllocationFromAnnotations reads them; empty when the pod has none (or
// they are not a mapping). Values that are not strings are left out.
std::map<std::string, std::string> PodAnnotationMap(const nlohmann::json& pod);

// Reads the allocation record of `request`'s pod back from its annotations
// (either dialect; HAMi's wins if both are present). Returns nullopt when the
// pod carries none. Entries are mapped onto the request's containers (HAMi:
// all containers in order; Volcano: the app containers that want GPUs, in
// order); a count that does not match is an InvalidArgument error.
// `hami.io/vgpu-mig-allocations` is merged into HAMi's record (its grants
// become mode mig with their MigSlot and runtime ids); it is an error on a
// pod without a HAMi record. A bad entry is an error too, unless `unread`
// is given: then the MIG record is left out, its error appended there, and
// HAMi's record read without it, so that each of its devices on a MIG GPU
// holds that GPU whole until the pod leaves (fail closed, as HAMi's
// getNodesUsage marks such a GPU unhealthy). A scheduler that charges
// running pods passes `unread`: a record it refused would be charged
// nothing and its MIG slices handed out again. The node agent, which must
// create the very instance, does not.
//
// Grants keep gpu_index -1. A grant with a MIG marker (a Volcano MIG id or
// a HAMi MIG entry) has mode mig; any other grant gets the request's mode,
// or hami-core when the request names none. The strings carry no other
// mode, so a caller who knows the node must take a grant's mode from its
// GPU instead (an MPS GPU's grants are MPS). MigSlot sizes (and, for
// Volcano configMap ids, profiles) are not on the wire: the mig backend
// resolves them from its catalog. mig_action is never carried (kNone).
// Memory is in MiB: a Volcano record's units are multiplied by
// `volcano_memory_factor`.
absl::StatusOr<std::optional<PodAllocation>> AllocationFromAnnotations(
    const PodRequest& request,
    const std::map<std::string, std::string>& annotations,
    const std::string& node_name, int32_t volcano_memory_factor,
    std::vector<absl::Status>* unread = nullptr);

}  // namespace deviceshare

#endif  // DEVICESHARE_K8S_POD_ANNOTATIONS_H_
