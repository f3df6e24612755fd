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

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "deviceshare/model/pod_allocation.h"
#include "deviceshare/model/pod_request.h"

namespace deviceshare {

// The annotations the scheduler writes at bind time in `dialect`: the
// allocation record (twice: -allocated/ids-new and -to-allocate), the node,
// the decision time, bind-time and bind-phase=allocating. Times are unix
// seconds of `now`.
std::map<std::string, std::string> AllocationAnnotations(
    const PodAllocation& allocation, Dialect dialect, absl::Time now);

// Reads the allocation record of `request`'s pod back from its annotations
// (either dialect; HAMi's wins if both are present). Returns nullopt when the
// pod carries none. Entries are mapped onto the request's containers (HAMi:
// all containers in order; Volcano: the app containers that want GPUs, in
// order); a count that does not match is an InvalidArgument error.
// Grants keep gpu_index -1; the mode is the request's mode or hami-core.
absl::StatusOr<std::optional<PodAllocation>> AllocationFromAnnotations(
    const PodRequest& request,
    const std::map<std::string, std::string>& annotations,
    const std::string& node_name);

}  // namespace deviceshare

#endif  // DEVICESHARE_K8S_POD_ANNOTATIONS_H_
