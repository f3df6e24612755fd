// File: service/dra_driver.h
//
// DraDriver: the node agent's DRA side, as `serve --dra` runs it: the
// node's ResourceSlices published and kept current as GPU health changes
// (agent/slice_publisher.h), the kubelet plugin served
// (agent/dra_plugin_server.h) with the claim preparer behind it
// (agent/dra_claim_preparer.h). It also watches its own slices: kubelet
// deletes every ResourceSlice of its node when it starts (and a person or a
// controller may delete one), and the node's GPUs are invisible to every
// scheduler until they are back, so a deleted slice is published again at
// once rather than at the next health round (register_interval, 30 s).
//
// Thread safety: Update and Stop from one thread (the health loop); the
// slice watch publishes from its own thread (publishing is serialized);
// the plugin server calls the preparer from gRPC's threads.
#ifndef DEVICESHARE_AGENT_SERVICE_DRA_DRIVER_H_
#define DEVICESHARE_AGENT_SERVICE_DRA_DRIVER_H_

#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "deviceshare/agent/agent_service.h"
#include "deviceshare/agent/discovered_gpu.h"
#include "deviceshare/agent/dra_claim_preparer.h"
#include "deviceshare/agent/dra_plugin_server.h"
#include "deviceshare/agent/slice_publisher.h"
#include "deviceshare/backend/backend_set.h"
#include "deviceshare/kube/api_client.h"
#include "deviceshare/kube/reflector.h"

namespace deviceshare::agent {

class DraDriver {
 public:
  // `mig_control` (may be null: MIG claims then fail) and `record_keys`
  // (may be null: claims are prepared unchecked) must outlive the driver.
  // Publishes the slices once (an API error is logged and retried by Update)
  // and starts the plugin server (its error is returned).
  static absl::StatusOr<std::unique_ptr<DraDriver>> Start(
      const AgentOptions& options, const Config& config, kube::ApiClient* api,
      std::vector<DiscoveredGpu> discovered, const std::vector<Gpu>& gpus,
      MigControl* mig_control, trust::RecordKeySource* record_keys = nullptr);

  // `gpus` with their current health: withdraws or restores devices and
  // publishes when the pool changed (or the last publish failed).
  void Update(const std::vector<Gpu>& gpus);
  void Stop();

 private:
  DraDriver(const AgentOptions& options, kube::ApiClient* api,
            BackendSet backends, std::vector<DiscoveredGpu> discovered,
            MigControl* mig_control, trust::RecordKeySource* record_keys);
  // Publishes `gpus`, or the last ones given when null.
  void Publish(const std::vector<Gpu>* gpus) ABSL_LOCKS_EXCLUDED(publish_mu_);
  // The watch of the node's own slices: republishes after a DELETED.
  void WatchSlices(kube::ApiClient* api);

  const std::string driver_;
  const std::string node_name_;
  BackendSet backends_;
  std::vector<DiscoveredGpu> discovered_;
  SlicePublisher publisher_;
  DraClaimPreparer preparer_;
  std::unique_ptr<DraPluginServer> server_;
  absl::Mutex publish_mu_;
  std::vector<Gpu> last_gpus_ ABSL_GUARDED_BY(publish_mu_);
  std::unique_ptr<kube::Reflector> slice_watch_;
};

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_SERVICE_DRA_DRIVER_H_
