// File: text_input.h
//
// The C API's text arguments read into library values: Kubernetes objects
// (JSON or YAML, one document), the documents of a stream, and the small
// JSON arguments of deviceshare.h (node name lists, schedule options).
// Errors are InvalidArgument naming the argument and the field.
#ifndef DEVICESHARE_CAPI_TEXT_INPUT_H_
#define DEVICESHARE_CAPI_TEXT_INPUT_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/config/device_config.h"
#include "deviceshare/model/pod_request.h"
#include "deviceshare/scheduler/decision.h"
#include "nlohmann/json.hpp"

namespace deviceshare::capi {

// One document that must be a mapping; `argument` names it in errors.
absl::StatusOr<nlohmann::json> ParseObject(absl::string_view text,
                                           absl::string_view argument);

// A Pod object and the request it makes under `config`. A `kind` other
// than Pod is an error.
struct ParsedPod {
  nlohmann::json object;
  PodRequest request;
};
absl::StatusOr<ParsedPod> ParsePod(absl::string_view text,
                                   const DeviceConfig& config);

// Every object of a YAML or JSON stream: each document, a List's (or an
// <X>List's) items in its place. A document or item that is not a mapping
// is an error naming it.
absl::StatusOr<nlohmann::json> DocumentObjectsJson(absl::string_view text);

// A JSON array of node names; null (the argument NULL) or empty: none.
absl::StatusOr<std::vector<std::string>> ParseNodeNames(const char* text);

// {"candidates": [names], "max_explained_nodes": n, "count_reasons": b},
// every key optional; null: the defaults. An unknown key is an error.
absl::StatusOr<ScheduleOptions> ParseScheduleOptions(const char* text);

}  // namespace deviceshare::capi

#endif  // DEVICESHARE_CAPI_TEXT_INPUT_H_
