// File: extender/claim_writer.h
//
// ClaimWriter: the ResourceClaim reads and writes of a bind that allocates
// DRA claims (resource.k8s.io/v1), behind an interface like PodWriter, so
// the bind's logic does not depend on HTTP. ApiClaimWriter
// (kube/api_client.h underneath) is the real one.
//
// Writes go to the status subresource with the claim's
// metadata.resourceVersion as a precondition: a claim that changed since it
// was read answers a conflict (kube::IsConflict), and the caller reads it
// again.
//
// Thread safety: implementations must be safe to call from many threads.
#ifndef DEVICESHARE_EXTENDER_CLAIM_WRITER_H_
#define DEVICESHARE_EXTENDER_CLAIM_WRITER_H_

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace deviceshare::kube {
class ApiClient;
}  // namespace deviceshare::kube

namespace deviceshare::extender {

struct ClaimName {
  std::string namespace_name;
  std::string name;

  std::string Key() const { return namespace_name + "/" + name; }
};

class ClaimWriter {
 public:
  virtual ~ClaimWriter() = default;

  // The claim as the API server has it (NotFound when it is gone).
  virtual absl::StatusOr<nlohmann::json> GetClaim(const ClaimName& claim) = 0;

  // Replaces the claim's status with `object`'s (a claim as GetClaim
  // returned it, status edited); its metadata.resourceVersion is the
  // precondition. Returns the claim as stored.
  virtual absl::StatusOr<nlohmann::json> PutClaimStatus(
      const ClaimName& claim, const nlohmann::json& object) = 0;

  // One JSON merge patch of the claim's metadata.annotations: a value sets
  // the key, nullopt deletes it.
  virtual absl::Status PatchClaimAnnotations(
      const ClaimName& claim,
      const std::map<std::string, std::optional<std::string>>& annotations) = 0;
};

// The real writer over `client` (which must outlive it).
std::unique_ptr<ClaimWriter> MakeApiClaimWriter(kube::ApiClient* client);

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_CLAIM_WRITER_H_
