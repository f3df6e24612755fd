#include "testing/admission_answers.h"

#include <string>
#include <utility>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

namespace deviceshare::testing {

nlohmann::json PodCreateReview(nlohmann::json pod, const std::string& uid) {
  return {{"apiVersion", "admission.k8s.io/v1"},
          {"kind", "AdmissionReview"},
          {"request",
           {{"uid", uid},
            {"kind", {{"group", ""}, {"version", "v1"}, {"kind", "Pod"}}},
            {"namespace", "default"},
            {"operation", "CREATE"},
            {"object", std::move(pod)}}}};
}

nlohmann::json PatchOf(const nlohmann::json& response) {
  auto patch = response.find("patch");
  if (patch == response.end() || !patch->is_string()) {
    ADD_FAILURE() << "no patch in " << response.dump();
    return nullptr;
  }
  std::string decoded;
  if (!absl::Base64Unescape(patch->get<std::string>(), &decoded)) {
    ADD_FAILURE() << "patch is not base64: " << patch->dump();
    return nullptr;
  }
  return nlohmann::json::parse(decoded, nullptr, /*allow_exceptions=*/false);
}

}  // namespace deviceshare::testing
