// The real ClaimWriter: GET the claim, PUT its /status.
#include <memory>

#include "deviceshare/extender/claim_writer.h"
#include "deviceshare/kube/api_client.h"
#include "deviceshare/kube/object_paths.h"

namespace deviceshare::extender {
namespace {

class ApiClaimWriter final : public ClaimWriter {
 public:
  explicit ApiClaimWriter(kube::ApiClient* client) : client_(client) {}

  absl::StatusOr<nlohmann::json> GetClaim(const ClaimName& claim) override {
    return client_->Get(
        kube::ResourceClaimPath(claim.namespace_name, claim.name));
  }

  absl::StatusOr<nlohmann::json> PutClaimStatus(
      const ClaimName& claim, const nlohmann::json& object) override {
    return client_->Put(
        kube::ResourceClaimStatusPath(claim.namespace_name, claim.name),
        object);
  }

  absl::Status PatchClaimAnnotations(
      const ClaimName& claim,
      const std::map<std::string, std::optional<std::string>>& annotations)
      override {
    nlohmann::json values = nlohmann::json::object();
    for (const auto& [key, value] : annotations) {
      values[key] = value.has_value() ? nlohmann::json(*value) : nullptr;
    }
    return client_
        ->MergePatch(kube::ResourceClaimPath(claim.namespace_name, claim.name),
                     {{"metadata", {{"annotations", values}}}})
        .status();
  }

 private:
  kube::ApiClient* const client_;
};

}  // namespace

std::unique_ptr<ClaimWriter> MakeApiClaimWriter(kube::ApiClient* client) {
  return std::make_unique<ApiClaimWriter>(client);
}

}  // namespace deviceshare::extender
