// File: kube/label_selector.h
//
// metav1.LabelSelector, as a PodDisruptionBudget's spec.selector uses it:
// matchLabels (every pair present) and matchExpressions (In, NotIn,
// Exists, DoesNotExist), all of them together. An empty selector ({})
// selects every object; a missing or null one selects none (policy/v1
// PodDisruptionBudget semantics).
//
// Errors: InvalidArgument naming the field for a selector that is not an
// object, a value that is not a string, an unknown operator, or In/NotIn
// without values (the API server refuses such a selector).
//
// Thread safety: pure functions.
#ifndef DEVICESHARE_KUBE_LABEL_SELECTOR_H_
#define DEVICESHARE_KUBE_LABEL_SELECTOR_H_

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace deviceshare::kube {

// Whether `selector` selects an object with `labels` (metadata.labels; a
// missing or null value is no labels).
absl::StatusOr<bool> SelectorMatches(const nlohmann::json& selector,
                                     const nlohmann::json& labels);

}  // namespace deviceshare::kube

#endif  // DEVICESHARE_KUBE_LABEL_SELECTOR_H_
