// File: src/pod_annotation_parser.h (internal)
//
// The pod-annotation half of the pod parser: sharing mode, model and UUID
// filters, NUMA binding and per-pod policies, in both dialects.
#ifndef DEVICESHARE_SRC_POD_ANNOTATION_PARSER_H_
#define DEVICESHARE_SRC_POD_ANNOTATION_PARSER_H_

#include "absl/status/status.h"
#include "deviceshare/model/pod_request.h"
#include "nlohmann/json.hpp"

namespace deviceshare::internal {

// Reads `metadata.annotations` (a mapping of strings) into the filter and
// policy fields of `pod`, whose name and namespace must already be set:
// errors name the pod, the annotation and the value.
absl::Status ParsePodAnnotations(const nlohmann::json& annotations,
                                 PodRequest& pod);

// The dialect the annotations are written in: Volcano when one key starts
// with `volcano.sh/`, else HAMi. `annotations` must be a mapping.
Dialect AnnotationDialect(const nlohmann::json& annotations);

}  // namespace deviceshare::internal

#endif  // DEVICESHARE_SRC_POD_ANNOTATION_PARSER_H_
