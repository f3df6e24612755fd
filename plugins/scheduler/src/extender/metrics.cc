#include "deviceshare/extender/metrics.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cmath>
#include <map>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace deviceshare::extender {
namespace internal {

// A family as the registry renders it: HELP, TYPE, then the samples.
class MetricFamily {
 public:
  MetricFamily(absl::string_view name, absl::string_view help,
               absl::string_view type, std::vector<std::string> label_names)
      : name_(name),
        help_(help),
        type_(type),
        label_names_(std::move(label_names)) {}
  virtual ~MetricFamily() = default;

  void Render(std::string* out) const;

 protected:
  // Whether `values` fits the label names; counts a misfit for Render.
  bool Fits(LabelValues values) {
    if (values.size() == label_names_.size()) return true;
    misfits_.fetch_add(1, std::memory_order_relaxed);
    return false;
  }
  virtual void RenderSamples(std::string* out) const = 0;

  const std::string name_;
  const std::string help_;
  const std::string type_;
  const std::vector<std::string> label_names_;

 private:
  std::atomic<uint64_t> misfits_{0};
};

}  // namespace internal

namespace {

using internal::MetricFamily;

bool IsMetricName(absl::string_view name) {
  if (name.empty() || absl::ascii_isdigit(name[0])) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '_' || c == ':';
  });
}

bool IsLabelName(absl::string_view name) {
  if (name.empty() || absl::ascii_isdigit(name[0])) return false;
  if (absl::StartsWith(name, "__")) return false;  // reserved by Prometheus
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return absl::ascii_isalnum(c) || c == '_'; });
}

// Go's strconv.FormatFloat(v, 'g', -1, 64), as Prometheus' client writes
// values and bucket bounds: shortest round trip, 1e-05 below 1e-4.
void AppendDouble(double value, std::string* out) {
  if (std::isnan(value)) {
    out->append("NaN");
  } else if (std::isinf(value)) {
    out->append(value > 0 ? "+Inf" : "-Inf");
  } else {
    char buffer[32];
    auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value,
                                   std::chars_format::general);
    out->append(buffer, end);
  }
}

void AppendEscaped(absl::string_view text, bool quote, std::string* out) {
  for (char c : text) {
    if (c == '\\') {
      out->append("\\\\");
    } else if (c == '\n') {
      out->append("\\n");
    } else if (c == '"' && quote) {
      out->append("\\\"");
    } else {
      out->push_back(c);
    }
  }
}

// `{a="x",b="y",le="0.1"}`, or nothing at all for no labels.
template <typename Values>
void AppendLabels(const std::vector<std::string>& names, const Values& values,
                  const std::string* le, std::string* out) {
  if (names.empty() && le == nullptr) return;
  out->push_back('{');
  for (size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out->push_back(',');
    absl::StrAppend(out, names[i], "=\"");
    AppendEscaped(values[i], /*quote=*/true, out);
    out->push_back('"');
  }
  if (le != nullptr) {
    absl::StrAppend(out, names.empty() ? "" : ",", "le=\"", *le, "\"");
  }
  out->push_back('}');
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

// The cells of one family by label values. Cells are never removed and map
// nodes never move, so a cell found under the lock may be updated after it
// is released.
template <typename Cell>
class Cells {
 public:
  template <typename... Args>
  Cell& Find(LabelValues values, Args&&... args) {
    {
      absl::ReaderMutexLock lock(&mu_);
      auto it = cells_.find(values);
      if (it != cells_.end()) return it->second;
    }
    absl::MutexLock lock(&mu_);
    auto [it, inserted] = cells_.try_emplace(
        std::vector<std::string>(values.begin(), values.end()),
        std::forward<Args>(args)...);
    return it->second;
  }

  template <typename Visit>
  void ForEach(Visit visit) const {
    absl::ReaderMutexLock lock(&mu_);
    for (const auto& [values, cell] : cells_) visit(values, cell);
  }

 private:
  mutable absl::Mutex mu_;
  std::map<std::vector<std::string>, Cell, LabelsLess> cells_
      ABSL_GUARDED_BY(mu_);
};

class Counter final : public CounterFamily, public MetricFamily {
 public:
  using MetricFamily::MetricFamily;

  void Increment(LabelValues values, uint64_t n) override {
    if (!Fits(values)) return;
    cells_.Find(values).fetch_add(n, std::memory_order_relaxed);
  }

 private:
  void RenderSamples(std::string* out) const override {
    cells_.ForEach([&](const std::vector<std::string>& values,
                       const std::atomic<uint64_t>& count) {
      out->append(name_);
      AppendLabels(label_names_, values, nullptr, out);
      absl::StrAppend(out, " ", count.load(std::memory_order_relaxed), "\n");
    });
  }

  Cells<std::atomic<uint64_t>> cells_;
};

class Gauge final : public GaugeFamily, public MetricFamily {
 public:
  using MetricFamily::MetricFamily;

  void Set(LabelValues values, double value) override {
    if (!Fits(values)) return;
    cells_.Find(values).store(value, std::memory_order_relaxed);
  }
  void Add(LabelValues values, double delta) override {
    if (!Fits(values)) return;
    cells_.Find(values).fetch_add(delta, std::memory_order_relaxed);
  }

 private:
  void RenderSamples(std::string* out) const override {
    cells_.ForEach([&](const std::vector<std::string>& values,
                       const std::atomic<double>& value) {
      out->append(name_);
      AppendLabels(label_names_, values, nullptr, out);
      out->push_back(' ');
      AppendDouble(value.load(std::memory_order_relaxed), out);
      out->push_back('\n');
    });
  }

  Cells<std::atomic<double>> cells_;
};

// One label set of a histogram: per-bucket (not cumulative) counts, the
// last one for +Inf.
struct HistogramCell {
  explicit HistogramCell(size_t buckets)
      : counts(new std::atomic<uint64_t>[buckets]) {
    for (size_t i = 0; i < buckets; ++i) counts[i].store(0);
  }
  std::unique_ptr<std::atomic<uint64_t>[]> counts;
  std::atomic<double> sum{0};
};

class Histogram final : public HistogramFamily, public MetricFamily {
 public:
  Histogram(absl::string_view name, absl::string_view help,
            std::vector<std::string> label_names, std::vector<double> bounds)
      : MetricFamily(name, help, "histogram", std::move(label_names)),
        bounds_(std::move(bounds)) {
    for (double bound : bounds_) {
      std::string text;
      AppendDouble(bound, &text);
      bound_texts_.push_back(std::move(text));
    }
    bound_texts_.push_back("+Inf");
  }

  void Observe(LabelValues values, double value) override {
    if (!Fits(values)) return;
    // !(bound >= value) rather than bound < value: NaN lands in +Inf.
    const size_t bucket =
        std::partition_point(bounds_.begin(), bounds_.end(),
                             [&](double bound) { return !(bound >= value); }) -
        bounds_.begin();
    HistogramCell& cell = cells_.Find(values, bounds_.size() + 1);
    cell.counts[bucket].fetch_add(1, std::memory_order_relaxed);
    cell.sum.fetch_add(value, std::memory_order_relaxed);
  }

 private:
  void RenderSamples(std::string* out) const override {
    cells_.ForEach(
        [&](const std::vector<std::string>& values, const HistogramCell& cell) {
          uint64_t cumulative = 0;
          for (size_t i = 0; i < bound_texts_.size(); ++i) {
            cumulative += cell.counts[i].load(std::memory_order_relaxed);
            absl::StrAppend(out, name_, "_bucket");
            AppendLabels(label_names_, values, &bound_texts_[i], out);
            absl::StrAppend(out, " ", cumulative, "\n");
          }
          absl::StrAppend(out, name_, "_sum");
          AppendLabels(label_names_, values, nullptr, out);
          out->push_back(' ');
          AppendDouble(cell.sum.load(std::memory_order_relaxed), out);
          absl::StrAppend(out, "\n", name_, "_count");
          AppendLabels(label_names_, values, nullptr, out);
          absl::StrAppend(out, " ", cumulative, "\n");
        });
  }

  const std::vector<double> bounds_;
  std::vector<std::string> bound_texts_;  // le values, "+Inf" last
  Cells<HistogramCell> cells_;
};

void AppendHeader(absl::string_view name, absl::string_view help,
                  absl::string_view type, std::string* out) {
  absl::StrAppend(out, "# HELP ", name, " ");
  AppendEscaped(help, /*quote=*/false, out);
  absl::StrAppend(out, "\n# TYPE ", name, " ", type, "\n");
}

// The gauges written by collectors during one Render, by family.
class ScrapeWriter final : public GaugeWriter {
 public:
  void Write(absl::string_view name, absl::string_view help,
             absl::Span<const Label> labels, double value) override {
    if (!IsMetricName(name)) {
      return Reject(absl::StrCat("metric name \"", name, "\""));
    }
    std::string sample(name);
    if (!labels.empty()) sample.push_back('{');
    for (size_t i = 0; i < labels.size(); ++i) {
      if (!IsLabelName(labels[i].first)) {
        return Reject(
            absl::StrCat("label name \"", labels[i].first, "\" of ", name));
      }
      absl::StrAppend(&sample, i > 0 ? "," : "", labels[i].first, "=\"");
      AppendEscaped(labels[i].second, /*quote=*/true, &sample);
      sample.push_back('"');
    }
    if (!labels.empty()) sample.push_back('}');
    sample.push_back(' ');
    AppendDouble(value, &sample);
    sample.push_back('\n');

    auto [it, inserted] = index_.try_emplace(name, families_.size());
    if (inserted) families_.push_back({std::string(name), std::string(help)});
    families_[it->second].samples.append(sample);
  }

  // Appends every family whose name is not `taken`, and the rejections.
  void Render(const absl::flat_hash_set<std::string>& taken,
              std::string* out) const {
    for (const Family& family : families_) {
      if (taken.contains(family.name)) {
        absl::StrAppend(out, "# deviceshare: collector gauge ", family.name,
                        " dropped: the name is taken\n");
        continue;
      }
      AppendHeader(family.name, family.help, "gauge", out);
      out->append(family.samples);
    }
    for (const std::string& rejection : rejections_) {
      absl::StrAppend(out, "# deviceshare: collector sample dropped: bad ",
                      rejection, "\n");
    }
  }

 private:
  struct Family {
    std::string name;
    std::string help;
    std::string samples;
  };

  void Reject(std::string what) {
    // Comment lines are free text but for newlines.
    std::string line;
    AppendEscaped(what, /*quote=*/false, &line);
    rejections_.push_back(std::move(line));
  }

  std::vector<Family> families_;
  absl::flat_hash_map<std::string, size_t> index_;
  std::vector<std::string> rejections_;
};

}  // namespace

void internal::MetricFamily::Render(std::string* out) const {
  AppendHeader(name_, help_, type_, out);
  RenderSamples(out);
  if (uint64_t misfits = misfits_.load(std::memory_order_relaxed)) {
    absl::StrAppend(out, "# deviceshare: ", misfits, " updates of ", name_,
                    " dropped: not ", label_names_.size(), " label values\n");
  }
}

std::vector<double> LatencyBucketsSeconds() {
  return {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
          0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};
}

MetricsRegistry::MetricsRegistry() = default;
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
  auto family =
      std::make_unique<Counter>(name, help, "counter", std::move(label_names));
  CounterFamily* handle = family.get();
  families_.push_back(std::move(family));
  return handle;
}

absl::StatusOr<GaugeFamily*> MetricsRegistry::AddGauge(
    absl::string_view name, absl::string_view help,
    std::vector<std::string> label_names) {
  absl::MutexLock lock(&mu_);
  if (absl::Status status = Claim(name, "gauge", label_names); !status.ok()) {
    return status;
  }
  auto family =
      std::make_unique<Gauge>(name, help, "gauge", std::move(label_names));
  GaugeFamily* handle = family.get();
  families_.push_back(std::move(family));
  return handle;
}

absl::StatusOr<HistogramFamily*> MetricsRegistry::AddHistogram(
    absl::string_view name, absl::string_view help,
    std::vector<std::string> label_names, std::vector<double> bounds) {
  for (size_t i = 0; i < bounds.size(); ++i) {
    if (!std::isfinite(bounds[i]) || (i > 0 && !(bounds[i - 1] < bounds[i]))) {
      std::string text;
      AppendDouble(bounds[i], &text);
      return absl::InvalidArgumentError(
          absl::StrCat("histogram ", name, ": bucket bound ", i, " (", text,
                       ") is not finite and above the one before"));
    }
  }
  absl::MutexLock lock(&mu_);
  if (absl::Status status = Claim(name, "histogram", label_names);
      !status.ok()) {
    return status;
  }
  auto family = std::make_unique<Histogram>(name, help, std::move(label_names),
                                            std::move(bounds));
  HistogramFamily* handle = family.get();
  families_.push_back(std::move(family));
  return handle;
}

void MetricsRegistry::AddCollector(GaugeCollector collector) {
  absl::MutexLock lock(&mu_);
  collectors_.push_back(std::move(collector));
}

std::string MetricsRegistry::Render() const {
  std::string out;
  std::vector<GaugeCollector> collectors;
  {
    absl::ReaderMutexLock lock(&mu_);
    for (const auto& family : families_) family->Render(&out);
    collectors = collectors_;
  }
  ScrapeWriter writer;
  for (const GaugeCollector& collector : collectors) collector(writer);
  absl::ReaderMutexLock lock(&mu_);
  writer.Render(taken_names_, &out);
  return out;
}

}  // namespace deviceshare::extender
