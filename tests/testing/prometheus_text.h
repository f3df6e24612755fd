// File: testing/prometheus_text.h
//
// ParsePrometheusText: reads a /metrics answer in the Prometheus text
// exposition format 0.0.4 the way a scraper does, so tests can assert what
// a binary exports (family names, types, label names, values) without
// depending on the order of lines or of labels.
//
//   absl::StatusOr<PrometheusText> text = ParsePrometheusText(body);
//   const MetricFamilyText* family = text->Find("deviceshare_binds_total");
//   family->type == "counter"; family->samples[0].value == 1
//
// Samples are attached to the family whose # TYPE came last before them
// when their name is that family's name or, for a histogram (or summary),
// that name plus _bucket, _sum or _count. A sample of no declared family,
// a second # TYPE for one name, a malformed line or label, or a value that
// is not a number is InvalidArgument naming the line. Other comment lines
// are kept in `comments`.
#ifndef DEVICESHARE_TESTS_TESTING_PROMETHEUS_TEXT_H_
#define DEVICESHARE_TESTS_TESTING_PROMETHEUS_TEXT_H_

#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace deviceshare::testing {

struct SampleText {
  std::string name;  // e.g. lat_seconds_bucket
  std::map<std::string, std::string> labels;
  double value = 0;
};

struct MetricFamilyText {
  std::string name;
  std::string help;  // unescaped
  std::string type;  // counter, gauge, histogram, summary, untyped
  std::vector<SampleText> samples;

  // The label names its samples use, without a histogram's "le".
  std::set<std::string> LabelNames() const;
};

struct PrometheusText {
  std::vector<MetricFamilyText> families;  // in the order declared
  std::vector<std::string> comments;       // "# ..." lines but HELP and TYPE

  // Null when no family has that name.
  const MetricFamilyText* Find(absl::string_view name) const;
};

absl::StatusOr<PrometheusText> ParsePrometheusText(absl::string_view text);

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_PROMETHEUS_TEXT_H_
