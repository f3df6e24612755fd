#include "metrics/agent_metrics.h"

#include <optional>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/cord.h"
#include "prometheus/metric_family.h"
#include "prometheus/text_serializer.h"

namespace deviceshare::agent::metrics {
namespace {

constexpr char kAllocations[] = "deviceshare_agent_allocations_total";
constexpr char kAllocationsHelp[] =
    "Containers (device plugin Allocate) and claims (DRA "
    "NodePrepareResources) handed their GPUs, by API, resource and sharing "
    "mode.";
constexpr char kRefusals[] = "deviceshare_agent_refusals_total";
constexpr char kRefusalsHelp[] =
    "Allocate and NodePrepareResources answers that refused a container or "
    "claim, by API, resource and reason (the error's code).";
constexpr char kPrepareSeconds[] = "deviceshare_agent_prepare_seconds";
constexpr char kPrepareSecondsHelp[] =
    "Time to answer one Allocate or NodePrepareResources call, by API.";
constexpr char kGpuHealthy[] = "deviceshare_agent_gpu_healthy";
constexpr char kGpuHealthyHelp[] =
    "1 while the GPU is healthy, 0 while it is not.";

// What the text shows of a family that has no sample yet: prometheus-cpp
// leaves such a family out, and a scraper would not know it exists.
template <typename Metric>
prometheus::MetricFamily CollectOrHeader(
    const prometheus::Family<Metric>& family, const char* help,
    prometheus::MetricType type) {
  std::vector<prometheus::MetricFamily> collected = family.Collect();
  if (!collected.empty()) return std::move(collected.front());
  prometheus::MetricFamily header;
  header.name = family.GetName();
  header.help = help;
  header.type = type;
  return header;
}

}  // namespace

std::string RefusalReason(const absl::Status& error) {
  if (auto reason = error.GetPayload(kRefusalReasonPayload)) {
    return std::string(*reason);
  }
  // "FAILED_PRECONDITION" -> "failed_precondition".
  return absl::AsciiStrToLower(absl::StatusCodeToString(error.code()));
}

std::vector<double> PrepareBucketsSeconds() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1,
          0.25,  0.5,    1,     2.5,  5,     10,   30};
}

AgentMetrics::AgentMetrics()
    : allocations_(prometheus::BuildCounter()
                       .Name(kAllocations)
                       .Help(kAllocationsHelp)
                       .Register(registry_)),
      refusals_(prometheus::BuildCounter()
                    .Name(kRefusals)
                    .Help(kRefusalsHelp)
                    .Register(registry_)),
      prepare_seconds_(prometheus::BuildHistogram()
                           .Name(kPrepareSeconds)
                           .Help(kPrepareSecondsHelp)
                           .Register(registry_)),
      gpu_healthy_(prometheus::BuildGauge()
                       .Name(kGpuHealthy)
                       .Help(kGpuHealthyHelp)
                       .Register(registry_)) {}

AgentMetrics& AgentMetrics::Default() {
  static auto* metrics = new AgentMetrics();
  return *metrics;
}

void AgentMetrics::CountAllocation(absl::string_view api,
                                   absl::string_view resource,
                                   absl::string_view mode) {
  allocations_
      .Add({{"api", std::string(api)},
            {"resource", std::string(resource)},
            {"mode", std::string(mode)}})
      .Increment();
}

void AgentMetrics::CountRefusal(absl::string_view api,
                                absl::string_view resource,
                                const absl::Status& error) {
  refusals_
      .Add({{"api", std::string(api)},
            {"resource", std::string(resource)},
            {"reason", RefusalReason(error)}})
      .Increment();
}

void AgentMetrics::ObservePrepare(absl::string_view api,
                                  absl::Duration elapsed) {
  prepare_seconds_.Add({{"api", std::string(api)}}, PrepareBucketsSeconds())
      .Observe(absl::ToDoubleSeconds(elapsed));
}

void AgentMetrics::SetGpuHealth(absl::string_view node,
                                const std::vector<Gpu>& gpus) {
  for (const Gpu& gpu : gpus) {
    gpu_healthy_
        .Add({{"node", std::string(node)},
              {"gpu", gpu.uuid},
              {"model", gpu.model}})
        .Set(gpu.healthy ? 1 : 0);
  }
}

std::string AgentMetrics::Render() const {
  const std::vector<prometheus::MetricFamily> families = {
      CollectOrHeader(allocations_, kAllocationsHelp,
                      prometheus::MetricType::Counter),
      CollectOrHeader(refusals_, kRefusalsHelp,
                      prometheus::MetricType::Counter),
      CollectOrHeader(prepare_seconds_, kPrepareSecondsHelp,
                      prometheus::MetricType::Histogram),
      CollectOrHeader(gpu_healthy_, kGpuHealthyHelp,
                      prometheus::MetricType::Gauge),
  };
  return prometheus::TextSerializer().Serialize(families);
}

}  // namespace deviceshare::agent::metrics
