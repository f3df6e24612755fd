// File: admission/admission_review.h
//
// The AdmissionReview v1 exchange (admission.k8s.io/v1) around the pod
// decision of admission/pod_admission.h: the API server's request body in,
// the response body out. Pure: no I/O.
//
// Bad input never throws. Two kinds, answered differently:
//   - a body that is no AdmissionReview we can answer -- not JSON, not an
//     object, apiVersion/kind not admission.k8s.io/v1 AdmissionReview, no
//     `request` object, no `request.uid` -- is InvalidArgument naming the
//     field: the server answers HTTP 400, for without a uid there is no
//     response the API server could match (it then applies the webhook's
//     failurePolicy);
//   - a review with a uid whose request cannot be admitted -- request.kind
//     not a core/v1 Pod, no request.object, an object that is not a Pod --
//     is answered allowed:false with status.code 400 and a message naming
//     the field, so the API server shows the user why.
// A request whose operation is not CREATE is allowed untouched: a pod's
// spec is fixed once created. A refused pod gets status.code 403.
#ifndef DEVICESHARE_ADMISSION_ADMISSION_REVIEW_H_
#define DEVICESHARE_ADMISSION_ADMISSION_REVIEW_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/admission/pod_admission.h"

namespace deviceshare::admission {

// The verdict with the uid it answers, for the server's log.
struct ReviewAnswer {
  std::string body;  // the AdmissionReview response, JSON
  std::string uid;
  bool allowed = true;
  bool patched = false;
  std::string message;  // PodAdmission::message
};

absl::StatusOr<ReviewAnswer> AnswerAdmissionReview(
    absl::string_view body, const AdmissionSettings& settings);

}  // namespace deviceshare::admission

#endif  // DEVICESHARE_ADMISSION_ADMISSION_REVIEW_H_
