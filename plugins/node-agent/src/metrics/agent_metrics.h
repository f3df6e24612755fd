// File: metrics/agent_metrics.h
//
// AgentMetrics: what the node agent exports at GET /metrics
// (metrics/metrics_server.h), in a prometheus-cpp registry:
//
//   deviceshare_agent_allocations_total{api,resource,mode}   counter
//       containers (device plugin Allocate) and claims (DRA
//       NodePrepareResources) handed their GPUs; mode is the sharing mode
//       (hami-core, mig, mps, ...).
//   deviceshare_agent_refusals_total{api,resource,reason}    counter
//       the same calls answered with an error; reason is the error's
//       canonical code in snake case (invalid_argument: an id or claim
//       kubelet named is not ours; failed_precondition: no pod waits for
//       those GPUs, or the grant cannot be prepared here; not_found: the
//       claim names no device of this node; unavailable: the answer could
//       not be journaled; unsigned_record / forged_record: the pod's
//       allocation record has no signature / a wrong one, trust/).
//   deviceshare_agent_prepare_seconds{api}                  histogram
//       time to answer one Allocate / NodePrepareResources call.
//   deviceshare_agent_gpu_healthy{node,gpu,model}            gauge
//       1 while the GPU is healthy, 0 while not (polled every
//       --health-interval).
//
// api is "device-plugin" or "dra"; resource is the kubelet resource
// (nvidia.com/gpu) or the DRA driver's name. Refusals and allocations are
// counted per container or claim, latency per call.
//
// One instance per process (Default()): kubelet's calls arrive deep in the
// gRPC services, and the agent runs one of each.
//
// Thread safety: every method may be called from any thread (prometheus-
// cpp's families and metrics are thread-safe).
#ifndef DEVICESHARE_AGENT_METRICS_AGENT_METRICS_H_
#define DEVICESHARE_AGENT_METRICS_AGENT_METRICS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "deviceshare/model/gpu.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace deviceshare::agent::metrics {

inline constexpr absl::string_view kDevicePluginApi = "device-plugin";
inline constexpr absl::string_view kDraApi = "dra";

class AgentMetrics {
 public:
  AgentMetrics();
  AgentMetrics(const AgentMetrics&) = delete;
  AgentMetrics& operator=(const AgentMetrics&) = delete;

  // The process's instance.
  static AgentMetrics& Default();

  void CountAllocation(absl::string_view api, absl::string_view resource,
                       absl::string_view mode);
  // `error`'s code names the reason (RefusalReason).
  void CountRefusal(absl::string_view api, absl::string_view resource,
                    const absl::Status& error);
  void ObservePrepare(absl::string_view api, absl::Duration elapsed);
  // One gauge per GPU of `gpus`, 1 healthy, 0 not.
  void SetGpuHealth(absl::string_view node, const std::vector<Gpu>& gpus);

  // The Prometheus text exposition format 0.0.4.
  std::string Render() const;

 private:
  prometheus::Registry registry_;
  prometheus::Family<prometheus::Counter>& allocations_;
  prometheus::Family<prometheus::Counter>& refusals_;
  prometheus::Family<prometheus::Histogram>& prepare_seconds_;
  prometheus::Family<prometheus::Gauge>& gpu_healthy_;
};

// A refusal's reason when the code alone says too little (e.g.
// "forged_record"): a payload of the error under this URL.
inline constexpr char kRefusalReasonPayload[] =
    "deviceshare.io/agent/refusal-reason";

// The kRefusalReasonPayload of `error` if it has one, else its code:
// "failed_precondition" for FailedPrecondition, and so on.
std::string RefusalReason(const absl::Status& error);

// 1 ms .. 30 s: an Allocate is a map lookup and a journal write, a DRA
// prepare may read the claim from the API server or create MIG instances.
std::vector<double> PrepareBucketsSeconds();

}  // namespace deviceshare::agent::metrics

#endif  // DEVICESHARE_AGENT_METRICS_AGENT_METRICS_H_
