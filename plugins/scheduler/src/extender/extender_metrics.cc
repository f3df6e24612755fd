#include "extender_metrics.h"

#include "absl/strings/str_cat.h"

namespace deviceshare::extender {

ExtenderMetrics::ExtenderMetrics(Extender* extender, MetricsAppender extra)
    : extender_(extender), extra_(std::move(extra)) {
  auto latency = extender_->metrics().AddHistogram(
      "deviceshare_extender_request_seconds",
      "Time to answer one extender call, by verb.", {"verb"},
      LatencyBucketsSeconds());
  if (latency.ok()) latency_ = *latency;
  auto requests = extender_->metrics().AddCounter(
      "deviceshare_extender_requests_total",
      "Extender calls by verb and HTTP status.", {"verb", "code"});
  if (requests.ok()) requests_ = *requests;
}

void ExtenderMetrics::Observe(absl::string_view verb, int http_status,
                              std::chrono::steady_clock::duration elapsed) {
  const absl::string_view verb_label[] = {verb};
  if (latency_ != nullptr) {
    latency_->Observe(verb_label,
                      std::chrono::duration<double>(elapsed).count());
  }
  if (requests_ != nullptr) {
    const std::string code = absl::StrCat(http_status);
    const absl::string_view labels[] = {verb, code};
    requests_->Increment(labels);
  }
}

std::string ExtenderMetrics::Render() const {
  std::string text = extender_->metrics().Render();
  if (extra_) extra_(text);
  return text;
}

}  // namespace deviceshare::extender
