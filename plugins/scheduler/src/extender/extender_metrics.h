// The server's share of /metrics: request latency per verb and requests by
// verb and HTTP status, added to the Extender's registry, plus whatever the
// caller appends per scrape (watch state).
#ifndef DEVICESHARE_EXTENDER_EXTENDER_METRICS_H_
#define DEVICESHARE_EXTENDER_EXTENDER_METRICS_H_

#include <chrono>
#include <string>

#include "deviceshare/extender/extender.h"
#include "deviceshare/extender/extender_server.h"

namespace deviceshare::extender {

class ExtenderMetrics {
 public:
  ExtenderMetrics(Extender* extender, MetricsAppender extra);

  void Observe(absl::string_view verb, int http_status,
               std::chrono::steady_clock::duration elapsed);
  std::string Render() const;

 private:
  Extender* const extender_;
  const MetricsAppender extra_;
  HistogramFamily* latency_ = nullptr;
  CounterFamily* requests_ = nullptr;
};

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_EXTENDER_METRICS_H_
