// What tests read out of an AdmissionReview answer.
#ifndef DEVICESHARE_TESTS_TESTING_ADMISSION_ANSWERS_H_
#define DEVICESHARE_TESTS_TESTING_ADMISSION_ANSWERS_H_

#include "nlohmann/json.hpp"

namespace deviceshare::testing {

// The JSONPatch of `response` (an AdmissionReview's "response"), decoded
// from base64; null, with a test failure, when it has none or it does not
// decode.
nlohmann::json PatchOf(const nlohmann::json& response);

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_ADMISSION_ANSWERS_H_
