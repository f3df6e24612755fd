#include "deviceshare/extender/metrics.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <map>
#include <stdexcept>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "prometheus/check_names.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/metric_family.h"
#include "prometheus/registry.h"
#include "prometheus/text_serializer.h"

namespace deviceshare::extender {
namespace internal {

// A family as the registry renders it: what prometheus-cpp collects, put in
// this registry's order, or just HELP and TYPE while it has no sample.
class MetricFamily {
 public:
  MetricFamily(absl::string_view name, std::string escaped_help,
               prometheus::MetricType type,
               std::vector<std::string> label_names)
      : name_(name),
        help_(std::move(escaped_help)),
        type_(type),
        label_names_(std::move(label_names)) {}
  virtual ~MetricFamily() = default;

  prometheus::MetricFamily Collect() const;
  // A comment line when updates were dropped for their label count.
  std::string Misfits() const;

 protected:
  // Whether `values` fits the label names; counts a misfit for Render.
  bool Fits(LabelValues values) {
    if (values.size() == label_names_.size()) return true;
    misfits_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  prometheus::Labels LabelsOf(LabelValues values) const {
    prometheus::Labels labels;
    for (size_t i = 0; i < values.size(); ++i) {
      labels.emplace(label_names_[i], std::string(values[i]));
    }
    return labels;
  }
  virtual std::vector<prometheus::MetricFamily> CollectSamples() const = 0;

  const std::string name_;
  const std::string help_;
  const prometheus::MetricType type_;
  const std::vector<std::string> label_names_;

 private:
  std::atomic<uint64_t> misfits_{0};
};

}  // namespace internal

namespace {

using internal::MetricFamily;

bool IsMetricName(absl::string_view name) {
  return prometheus::CheckMetricName(std::string(name));
}

// prometheus-cpp also refuses the names Prometheus reserves ("__...").
bool IsLabelName(absl::string_view name) {
  return prometheus::CheckLabelName(std::string(name));
}

// Go's strconv.FormatFloat(v, 'g', -1, 64), for error messages.
std::string FormatDouble(double value) {
  if (std::isnan(value)) return "NaN";
  if (std::isinf(value)) return value > 0 ? "+Inf" : "-Inf";
  char buffer[32];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value,
                                 std::chars_format::general);
  return std::string(buffer, end);
}

// prometheus-cpp writes HELP as given; the format wants \\ and \n escaped.
std::string EscapeHelp(absl::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out.append("\\\\");
    } else if (c == '\n') {
      out.append("\\n");
    } else {
      out.push_back(c);
    }
  }
  return out;
}

// Orders label value lists, and finds a stored list by a LabelValues
// without building a key.
struct LabelsLess {
  using is_transparent = void;
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(),
                                        [](const auto& x, const auto& y) {
                                          return absl::string_view(x) <
                                                 absl::string_view(y);
                                        });
  }
};

// The prometheus-cpp metrics of one family by label values. Family::Add
// takes the family's lock and builds a std::map key; this cache finds a
// metric seen before under a reader lock instead. prometheus-cpp never
// moves a metric it added, and nothing here removes one.
template <typename Metric>
class Cells {
 public:
  explicit Cells(prometheus::Family<Metric>* family) : family_(family) {}

  // `make_labels()` and `args` are used the first time `values` is seen.
  template <typename MakeLabels, typename... Args>
  Metric& Find(LabelValues values, MakeLabels make_labels, Args&&... args) {
    {
      absl::ReaderMutexLock lock(&mu_);
      auto it = cells_.find(values);
      if (it != cells_.end()) return *it->second;
    }
    absl::MutexLock lock(&mu_);
    auto it = cells_.find(values);
    if (it == cells_.end()) {
      Metric* metric =
          &family_->Add(make_labels(), std::forward<Args>(args)...);
      it = cells_
               .emplace(std::vector<std::string>(values.begin(), values.end()),
                        metric)
               .first;
    }
    return *it->second;
  }

  std::vector<prometheus::MetricFamily> Collect() const {
    return family_->Collect();
  }

 private:
  prometheus::Family<Metric>* const family_;
  mutable absl::Mutex mu_;
  std::map<std::vector<std::string>, Metric*, LabelsLess> cells_
      ABSL_GUARDED_BY(mu_);
};

class Counter final : public CounterFamily, public MetricFamily {
 public:
  Counter(absl::string_view name, std::string help,
          std::vector<std::string> label_names,
          prometheus::Family<prometheus::Counter>* family)
      : MetricFamily(name, std::move(help), prometheus::MetricType::Counter,
                     std::move(label_names)),
        cells_(family) {
    // An unlabelled counter is 0 until counted, as in Prometheus' clients.
    if (label_names_.empty()) Increment({}, 0);
  }

  void Increment(LabelValues values, uint64_t n) override {
    if (!Fits(values)) return;
    cells_.Find(values, [&] { return LabelsOf(values); })
        .Increment(static_cast<double>(n));
  }

 private:
  std::vector<prometheus::MetricFamily> CollectSamples() const override {
    return cells_.Collect();
  }

  Cells<prometheus::Counter> cells_;
};

class Gauge final : public GaugeFamily, public MetricFamily {
 public:
  Gauge(absl::string_view name, std::string help,
        std::vector<std::string> label_names,
        prometheus::Family<prometheus::Gauge>* family)
      : MetricFamily(name, std::move(help), prometheus::MetricType::Gauge,
                     std::move(label_names)),
        cells_(family) {
    if (label_names_.empty()) Add({}, 0);
  }

  void Set(LabelValues values, double value) override {
    if (!Fits(values)) return;
    cells_.Find(values, [&] { return LabelsOf(values); }).Set(value);
  }
  void Add(LabelValues values, double delta) override {
    if (!Fits(values)) return;
    cells_.Find(values, [&] { return LabelsOf(values); }).Increment(delta);
  }

 private:
  std::vector<prometheus::MetricFamily> CollectSamples() const override {
    return cells_.Collect();
  }

  Cells<prometheus::Gauge> cells_;
};

class Histogram final : public HistogramFamily, public MetricFamily {
 public:
  Histogram(absl::string_view name, std::string help,
            std::vector<std::string> label_names, std::vector<double> bounds,
            prometheus::Family<prometheus::Histogram>* family)
      : MetricFamily(name, std::move(help), prometheus::MetricType::Histogram,
                     std::move(label_names)),
        bounds_(std::move(bounds)),
        cells_(family) {}

  // prometheus-cpp counts `value` in the first bucket whose bound is >=
  // value, but NaN in the first bucket: that one goes to +Inf only, as in
  // Prometheus' Go client.
  void Observe(LabelValues values, double value) override {
    if (!Fits(values)) return;
    auto labels = [&] { return LabelsOf(values); };
    prometheus::Histogram& histogram = cells_.Find(values, labels, bounds_);
    if (!std::isnan(value)) return histogram.Observe(value);
    std::vector<double> increments(bounds_.size() + 1, 0);
    increments.back() = 1;
    histogram.ObserveMultiple(increments, value);
  }

 private:
  std::vector<prometheus::MetricFamily> CollectSamples() const override {
    return cells_.Collect();
  }

  const prometheus::Histogram::BucketBoundaries bounds_;
  Cells<prometheus::Histogram> cells_;
};

// A collector's gauge, or a family with no sample yet.
prometheus::MetricFamily GaugeFamilyOf(std::string name, std::string help) {
  prometheus::MetricFamily family;
  family.name = std::move(name);
  family.help = std::move(help);
  family.type = prometheus::MetricType::Gauge;
  return family;
}

// `text` without its leading comment lines (# HELP, # TYPE).
absl::string_view WithoutHeader(absl::string_view text) {
  while (!text.empty() && text.front() == '#') {
    const size_t end = text.find('\n');
    text.remove_prefix(end == absl::string_view::npos ? text.size() : end + 1);
  }
  return text;
}

// The gauges written by collectors during one Render, by family. A
// family's samples are written as text every kChunk samples: a scrape of
// 160,000 GPUs holds the text and one chunk of prometheus-cpp samples
// (some 500 bytes each), not every sample at once.
class ScrapeWriter final : public GaugeWriter {
 public:
  void Write(absl::string_view name, absl::string_view help,
             absl::Span<const Label> labels, double value) override {
    if (!IsMetricName(name)) {
      return Reject(absl::StrCat("metric name \"", name, "\""));
    }
    prometheus::ClientMetric sample;
    for (const auto& [label, label_value] : labels) {
      if (!IsLabelName(label)) {
        return Reject(absl::StrCat("label name \"", label, "\" of ", name));
      }
      sample.label.push_back({std::string(label), std::string(label_value)});
    }
    sample.gauge.value = value;
    auto [it, inserted] = index_.try_emplace(name, families_.size());
    if (inserted) {
      families_.push_back(
          {{GaugeFamilyOf(std::string(name), EscapeHelp(help))}, ""});
    }
    Written& family = families_[it->second];
    family.chunk.front().metric.push_back(std::move(sample));
    if (family.chunk.front().metric.size() >= kChunk) Flush(family);
  }

  // Appends the text of every family whose name is not `taken` to `out`,
  // in the order first written; the dropped ones and the rejections
  // become `comments`.
  void Take(const absl::flat_hash_set<std::string>& taken, std::string& out,
            std::string& comments) {
    for (Written& family : families_) {
      const std::string& name = family.chunk.front().name;
      if (taken.contains(name)) {
        absl::StrAppend(&comments, "# deviceshare: collector gauge ", name,
                        " dropped: the name is taken\n");
        continue;
      }
      Flush(family);
      out += family.text;
    }
    for (const std::string& rejection : rejections_) {
      absl::StrAppend(&comments,
                      "# deviceshare: collector sample dropped: bad ",
                      rejection, "\n");
    }
  }

 private:
  void Reject(absl::string_view what) {
    // Comment lines are free text but for newlines.
    rejections_.push_back(EscapeHelp(what));
  }

  static constexpr size_t kChunk = 4096;

  struct Written {
    // One family: its header and the samples not yet written as text.
    std::vector<prometheus::MetricFamily> chunk;
    std::string text;
  };

  // Writes the family's pending samples as text (the header only once).
  static void Flush(Written& family) {
    prometheus::MetricFamily& pending = family.chunk.front();
    if (pending.metric.empty() && !family.text.empty()) return;
    const std::string text =
        prometheus::TextSerializer().Serialize(family.chunk);
    if (family.text.empty()) {
      family.text = text;
    } else {
      absl::StrAppend(&family.text, WithoutHeader(text));
    }
    pending.metric.clear();
    pending.metric.shrink_to_fit();
  }

  std::vector<Written> families_;
  absl::flat_hash_map<std::string, size_t> index_;
  std::vector<std::string> rejections_;
};

// Turns prometheus-cpp's exceptions (a bad name, a clash) into a Status;
// the names are checked before, so this is a last line of defence.
template <typename Make>
auto Guarded(absl::string_view name, Make make)
    -> absl::StatusOr<decltype(make())> {
  try {
    return make();
  } catch (const std::exception& e) {
    return absl::InternalError(absl::StrCat(
        "metric ", name, ": prometheus-cpp refused it: ", e.what()));
  }
}

}  // namespace

prometheus::MetricFamily internal::MetricFamily::Collect() const {
  std::vector<prometheus::MetricFamily> collected = CollectSamples();
  if (collected.empty()) {
    prometheus::MetricFamily empty = GaugeFamilyOf(name_, help_);
    empty.type = type_;
    return empty;
  }
  prometheus::MetricFamily family = std::move(collected.front());
  // prometheus-cpp keeps labels in a std::map and samples in a hash map:
  // put the labels back in the family's order and sort the samples.
  auto rank = [&](const prometheus::ClientMetric::Label& label) {
    return std::find(label_names_.begin(), label_names_.end(), label.name) -
           label_names_.begin();
  };
  for (prometheus::ClientMetric& sample : family.metric) {
    std::sort(sample.label.begin(), sample.label.end(),
              [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  }
  std::sort(
      family.metric.begin(), family.metric.end(),
      [](const prometheus::ClientMetric& a, const prometheus::ClientMetric& b) {
        return std::lexicographical_compare(
            a.label.begin(), a.label.end(), b.label.begin(), b.label.end(),
            [](const auto& x, const auto& y) { return x.value < y.value; });
      });
  return family;
}

std::string internal::MetricFamily::Misfits() const {
  const uint64_t misfits = misfits_.load(std::memory_order_relaxed);
  if (misfits == 0) return "";
  return absl::StrCat("# deviceshare: ", misfits, " updates of ", name_,
                      " dropped: not ", label_names_.size(), " label values\n");
}

std::vector<double> LatencyBucketsSeconds() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
          0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
}

MetricsRegistry::MetricsRegistry()
    : registry_(std::make_unique<prometheus::Registry>(
          prometheus::Registry::InsertBehavior::Throw)) {}
MetricsRegistry::~MetricsRegistry() = default;

absl::Status MetricsRegistry::Claim(
    absl::string_view name, absl::string_view kind,
    const std::vector<std::string>& label_names) {
  if (!IsMetricName(name)) {
    return absl::InvalidArgumentError(
        absl::StrCat(kind, " \"", name, "\": not a Prometheus metric name"));
  }
  for (size_t i = 0; i < label_names.size(); ++i) {
    const std::string& label = label_names[i];
    if (!IsLabelName(label) || (kind == "histogram" && label == "le")) {
      return absl::InvalidArgumentError(absl::StrCat(
          kind, " ", name, ": label name \"", label, "\" is not allowed"));
    }
    if (std::find(label_names.begin(), label_names.begin() + i, label) !=
        label_names.begin() + i) {
      return absl::InvalidArgumentError(absl::StrCat(
          kind, " ", name, ": label name \"", label, "\" is repeated"));
    }
  }
  std::vector<std::string> names = {std::string(name)};
  if (kind == "histogram") {
    for (const char* suffix : {"_bucket", "_sum", "_count"}) {
      names.push_back(absl::StrCat(name, suffix));
    }
  }
  for (const std::string& each : names) {
    if (taken_names_.contains(each)) {
      return absl::AlreadyExistsError(absl::StrCat(
          kind, " ", name, ": the metric name ", each, " is taken"));
    }
  }
  taken_names_.insert(names.begin(), names.end());
  return absl::OkStatus();
}

absl::StatusOr<CounterFamily*> MetricsRegistry::AddCounter(
    absl::string_view name, absl::string_view help,
    std::vector<std::string> label_names) {
  absl::MutexLock lock(&mu_);
  if (absl::Status status = Claim(name, "counter", label_names); !status.ok()) {
    return status;
  }
  auto family = Guarded(name, [&] {
    return &prometheus::BuildCounter()
                .Name(std::string(name))
                .Help(EscapeHelp(help))
                .Register(*registry_);
  });
  if (!family.ok()) return family.status();
  auto counter = std::make_unique<Counter>(name, EscapeHelp(help),
                                           std::move(label_names), *family);
  CounterFamily* handle = counter.get();
  families_.push_back(std::move(counter));
  return handle;
}

absl::StatusOr<GaugeFamily*> MetricsRegistry::AddGauge(
    absl::string_view name, absl::string_view help,
    std::vector<std::string> label_names) {
  absl::MutexLock lock(&mu_);
  if (absl::Status status = Claim(name, "gauge", label_names); !status.ok()) {
    return status;
  }
  auto family = Guarded(name, [&] {
    return &prometheus::BuildGauge()
                .Name(std::string(name))
                .Help(EscapeHelp(help))
                .Register(*registry_);
  });
  if (!family.ok()) return family.status();
  auto gauge = std::make_unique<Gauge>(name, EscapeHelp(help),
                                       std::move(label_names), *family);
  GaugeFamily* handle = gauge.get();
  families_.push_back(std::move(gauge));
  return handle;
}

absl::StatusOr<HistogramFamily*> MetricsRegistry::AddHistogram(
    absl::string_view name, absl::string_view help,
    std::vector<std::string> label_names, std::vector<double> bounds) {
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i]) || (i > 0 && !(bounds[i - 1] < bounds[i]))) {
      return absl::InvalidArgumentError(absl::StrCat(
          "histogram ", name, ": bucket bound ", i, " (",
          FormatDouble(bounds[i]), ") is not finite and above the one before"));
    }
  }
  absl::MutexLock lock(&mu_);
  if (absl::Status status = Claim(name, "histogram", label_names);
      !status.ok()) {
    return status;
  }
  auto family = Guarded(name, [&] {
    return &prometheus::BuildHistogram()
                .Name(std::string(name))
                .Help(EscapeHelp(help))
                .Register(*registry_);
  });
  if (!family.ok()) return family.status();
  auto histogram = std::make_unique<Histogram>(name, EscapeHelp(help),
                                               std::move(label_names),
                                               std::move(bounds), *family);
  HistogramFamily* handle = histogram.get();
  families_.push_back(std::move(histogram));
  return handle;
}

void MetricsRegistry::AddCollector(GaugeCollector collector) {
  absl::MutexLock lock(&mu_);
  collectors_.push_back(std::move(collector));
}

std::string MetricsRegistry::Render() const {
  std::vector<prometheus::MetricFamily> families;
  std::string comments;
  std::vector<GaugeCollector> collectors;
  {
    absl::ReaderMutexLock lock(&mu_);
    for (const auto& family : families_) {
      families.push_back(family->Collect());
      comments += family->Misfits();
    }
    collectors = collectors_;
  }
  ScrapeWriter writer;
  for (const GaugeCollector& collector : collectors) collector(writer);
  std::string collected;
  {
    absl::ReaderMutexLock lock(&mu_);
    writer.Take(taken_names_, collected, comments);
  }
  return absl::StrCat(prometheus::TextSerializer().Serialize(families),
                      collected, comments);
}

}  // namespace deviceshare::extender
