// File: extender/metrics.h
//
// MetricsRegistry: labelled counters, gauges and histograms, rendered in
// the Prometheus text exposition format 0.0.4 for GET /metrics. The
// families live in a prometheus-cpp registry (prometheus/registry.h) and
// are written by its TextSerializer; this class keeps the extender's
// calls (label values by position, Status for bad names) and adds
// collectors computed per scrape.
//
//   MetricsRegistry registry;
//   auto latency = registry.AddHistogram(
//       "deviceshare_extender_request_seconds", "Latency per verb.",
//       {"verb"}, LatencyBucketsSeconds());
//   (*latency)->Observe({"filter"}, 0.0012);
//   registry.AddCollector([&](GaugeWriter& out) {  // computed per scrape
//     out.Write("deviceshare_gpu_memory_allocated_mib", "Per GPU.",
//               {{"node", "n1"}, {"gpu", "GPU-a"}}, 4096);
//   });
//   std::string text = registry.Render();
//
// Families are rendered in the order they were added, then the collectors'
// families in the order first written. Within a family the label sets are
// sorted and each sample's labels come in the order the family names them
// (a collector's in the order written). A family with no sample yet is
// rendered as its HELP and TYPE lines; an unlabelled one starts at 0. A
// histogram's samples are prometheus-cpp's: _count, _sum, then the
// cumulative buckets ending with le="+Inf". Label values and HELP text are
// escaped (backslash, newline; double quote in values); NaN is written
// "Nan", which Prometheus reads as NaN.
//
// Names are checked when a family is added (InvalidArgument for a bad
// metric or label name, or bad bucket bounds; AlreadyExists for a name
// taken, including a histogram's _bucket/_sum/_count). A call with the
// wrong number of label values records nothing and is reported as a
// comment line after the families, as is a collector's sample with a bad
// name; neither crashes the scrape.
//
// Thread safety: everything may be called concurrently. Increment, Set,
// Add and Observe find their label set's cell under a reader lock (a
// writer lock and prometheus-cpp's Family::Add only the first time a label
// set is seen), so they do not allocate for a label set already seen.
// Collectors run on the thread that calls Render, without any registry
// lock held.
#ifndef DEVICESHARE_EXTENDER_METRICS_H_
#define DEVICESHARE_EXTENDER_METRICS_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"

namespace deviceshare::extender {

// One value per label name of the family, in the same order.
using LabelValues = absl::Span<const absl::string_view>;

class CounterFamily {
 public:
  virtual ~CounterFamily() = default;
  // Adds `n` to the counter of `label_values`, which starts at 0.
  virtual void Increment(LabelValues label_values, uint64_t n = 1) = 0;
};

class GaugeFamily {
 public:
  virtual ~GaugeFamily() = default;
  virtual void Set(LabelValues label_values, double value) = 0;
  virtual void Add(LabelValues label_values, double delta) = 0;
};

class HistogramFamily {
 public:
  virtual ~HistogramFamily() = default;
  // Counts `value` in the first bucket whose bound is >= value (NaN goes to
  // +Inf only, as in Prometheus' Go client) and adds it to _sum.
  virtual void Observe(LabelValues label_values, double value) = 0;
};

// Receives the gauges a collector computes at scrape time. Samples of one
// name form one family; its HELP is taken from the first sample.
class GaugeWriter {
 public:
  using Label = std::pair<absl::string_view, absl::string_view>;  // name, value

  virtual ~GaugeWriter() = default;
  virtual void Write(absl::string_view name, absl::string_view help,
                     absl::Span<const Label> labels, double value) = 0;
};

using GaugeCollector = std::function<void(GaugeWriter&)>;

// 100us .. 10s in 1-2.5-5 steps: the extender's request latencies.
std::vector<double> LatencyBucketsSeconds();

namespace internal {
class MetricFamily;
}  // namespace internal
}  // namespace deviceshare::extender

namespace prometheus {
class Registry;
}  // namespace prometheus

namespace deviceshare::extender {

class MetricsRegistry {
 public:
  MetricsRegistry();
  ~MetricsRegistry();
  MetricsRegistry(const MetricsRegistry&) = delete;
  MetricsRegistry& operator=(const MetricsRegistry&) = delete;

  // The families are owned by the registry and live as long as it does.
  absl::StatusOr<CounterFamily*> AddCounter(
      absl::string_view name, absl::string_view help,
      std::vector<std::string> label_names = {});
  absl::StatusOr<GaugeFamily*> AddGauge(
      absl::string_view name, absl::string_view help,
      std::vector<std::string> label_names = {});
  // `bounds`: finite and strictly increasing; +Inf is implicit.
  absl::StatusOr<HistogramFamily*> AddHistogram(
      absl::string_view name, absl::string_view help,
      std::vector<std::string> label_names, std::vector<double> bounds);

  // Called by every Render, in the order added. A collector must not call
  // back into this registry's Render.
  void AddCollector(GaugeCollector collector);

  std::string Render() const;

 private:
  absl::Status Claim(absl::string_view name, absl::string_view kind,
                     const std::vector<std::string>& label_names)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  // Owns the prometheus-cpp families that families_ update.
  const std::unique_ptr<prometheus::Registry> registry_;
  std::vector<std::unique_ptr<internal::MetricFamily>> families_
      ABSL_GUARDED_BY(mu_);
  // Every metric name the families render, histograms' suffixes included.
  absl::flat_hash_set<std::string> taken_names_ ABSL_GUARDED_BY(mu_);
  std::vector<GaugeCollector> collectors_ ABSL_GUARDED_BY(mu_);
};

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_METRICS_H_
