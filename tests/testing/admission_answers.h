// AdmissionReviews as the API server sends them, and what tests read out
// of the answers.
#ifndef DEVICESHARE_TESTS_TESTING_ADMISSION_ANSWERS_H_
#define DEVICESHARE_TESTS_TESTING_ADMISSION_ANSWERS_H_

#include <string>

#include "nlohmann/json.hpp"

namespace deviceshare::testing {

// The AdmissionReview (admission.k8s.io/v1) of a CREATE of `pod` in
// namespace default, with request uid `uid`.
nlohmann::json PodCreateReview(nlohmann::json pod,
                               const std::string& uid = "review-1");

// The JSONPatch of `response` (an AdmissionReview's "response"), decoded
// from base64; null, with a test failure, when it has none or it does not
// decode.
nlohmann::json PatchOf(const nlohmann::json& response);

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_ADMISSION_ANSWERS_H_
