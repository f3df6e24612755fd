// File: extender/pod_writer.h
//
// PodWriter: the few Kubernetes API writes the extender makes, behind an
// interface so that its logic is tested without a server. ApiPodWriter
// (kube/api_client.h underneath) is the real one.
//
// Thread safety: implementations must be safe to call from many threads.
#ifndef DEVICESHARE_EXTENDER_POD_WRITER_H_
#define DEVICESHARE_EXTENDER_POD_WRITER_H_

#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/clock.h"
#include "nlohmann/json.hpp"

namespace deviceshare::kube {
class ApiClient;
}  // namespace deviceshare::kube

namespace deviceshare::extender {

struct PodName {
  std::string namespace_name;
  std::string name;
  std::string uid;  // may be empty

  std::string Key() const { return namespace_name + "/" + name; }
};

class PodWriter {
 public:
  virtual ~PodWriter() = default;

  // The pod as the API server has it (NotFound when it is gone).
  virtual absl::StatusOr<nlohmann::json> GetPod(const PodName& pod) = 0;

  // One JSON merge patch of metadata.annotations: a value sets the key,
  // nullopt deletes it.
  virtual absl::Status PatchAnnotations(
      const PodName& pod,
      const std::map<std::string, std::optional<std::string>>& annotations) = 0;

  // Creates the pod's Binding to `node` (the binding subresource).
  virtual absl::Status Bind(const PodName& pod, absl::string_view node) = 0;

  // Records a core/v1 Event about the pod. Best effort and asynchronous: it
  // never blocks a verb, and a failure is only logged.
  virtual void Event(const PodName& pod, absl::string_view type,
                     absl::string_view reason, absl::string_view message) = 0;
};

// The real writer over `client` (which must outlive it). Events go through a
// bounded queue drained by one background thread; the destructor drains
// what is queued, for at most a second, and stops it.
std::unique_ptr<PodWriter> MakeApiPodWriter(kube::ApiClient* client,
                                            const Clock* clock,
                                            std::string component);

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_POD_WRITER_H_
