#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/extender/metrics.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/prometheus_text.h"
#include "testing/status_matchers.h"

namespace deviceshare::extender {
namespace {

using ::deviceshare::testing::StatusIs;
using ::testing::HasSubstr;

TEST(MetricsRegistryTest, RendersASmallRegistryExactly) {
  MetricsRegistry registry;
  auto requests = registry.AddCounter("deviceshare_requests_total",
                                      "Requests by verb.", {"verb", "code"});
  ASSERT_OK(requests);
  auto binds = registry.AddCounter("deviceshare_binds_total", "Binds.");
  ASSERT_OK(binds);
  auto reserved =
      registry.AddGauge("deviceshare_reservations", "Reservations in flight.");
  ASSERT_OK(reserved);
  (*requests)->Increment({"prioritize", "200"});
  (*requests)->Increment({"filter", "200"}, 3);
  (*requests)->Increment({"filter", "400"});
  (*binds)->Increment({});
  (*reserved)->Set({}, 2);
  (*reserved)->Add({}, 0.5);

  EXPECT_EQ(registry.Render(),
            "# HELP deviceshare_requests_total Requests by verb.\n"
            "# TYPE deviceshare_requests_total counter\n"
            "deviceshare_requests_total{verb=\"filter\",code=\"200\"} 3\n"
            "deviceshare_requests_total{verb=\"filter\",code=\"400\"} 1\n"
            "deviceshare_requests_total{verb=\"prioritize\",code=\"200\"} 1\n"
            "# HELP deviceshare_binds_total Binds.\n"
            "# TYPE deviceshare_binds_total counter\n"
            "deviceshare_binds_total 1\n"
            "# HELP deviceshare_reservations Reservations in flight.\n"
            "# TYPE deviceshare_reservations gauge\n"
            "deviceshare_reservations 2.5\n");
}

TEST(MetricsRegistryTest, FamilyWithoutSamplesRendersItsHeader) {
  MetricsRegistry registry;
  ASSERT_OK(registry.AddCounter("a_total", "A.", {"x"}));
  EXPECT_EQ(registry.Render(), "# HELP a_total A.\n# TYPE a_total counter\n");
}

TEST(MetricsRegistryTest, HistogramBucketsAreCumulative) {
  MetricsRegistry registry;
  auto latency = registry.AddHistogram("lat_seconds", "Latency.", {"verb"},
                                       {0.001, 0.01, 0.1});
  ASSERT_OK(latency);
  for (double seconds : {0.0005, 0.001, 0.002, 0.05, 0.05, 3.0}) {
    (*latency)->Observe({"filter"}, seconds);
  }
  (*latency)->Observe({"bind"}, 0.25);
  EXPECT_EQ(registry.Render(),
            "# HELP lat_seconds Latency.\n"
            "# TYPE lat_seconds histogram\n"
            "lat_seconds_count{verb=\"bind\"} 1\n"
            "lat_seconds_sum{verb=\"bind\"} 0.25\n"
            "lat_seconds_bucket{verb=\"bind\",le=\"0.001\"} 0\n"
            "lat_seconds_bucket{verb=\"bind\",le=\"0.01\"} 0\n"
            "lat_seconds_bucket{verb=\"bind\",le=\"0.1\"} 0\n"
            "lat_seconds_bucket{verb=\"bind\",le=\"+Inf\"} 1\n"
            "lat_seconds_count{verb=\"filter\"} 6\n"
            "lat_seconds_sum{verb=\"filter\"} 3.1035\n"
            "lat_seconds_bucket{verb=\"filter\",le=\"0.001\"} 2\n"
            "lat_seconds_bucket{verb=\"filter\",le=\"0.01\"} 3\n"
            "lat_seconds_bucket{verb=\"filter\",le=\"0.1\"} 5\n"
            "lat_seconds_bucket{verb=\"filter\",le=\"+Inf\"} 6\n");
}

TEST(MetricsRegistryTest, UnlabelledHistogramAndNaN) {
  MetricsRegistry registry;
  auto h = registry.AddHistogram("h", "H.", {}, {1});
  ASSERT_OK(h);
  (*h)->Observe({}, std::numeric_limits<double>::quiet_NaN());
  EXPECT_EQ(registry.Render(),
            "# HELP h H.\n# TYPE h histogram\n"
            "h_count 1\n"
            "h_sum Nan\n"  // prometheus-cpp's spelling; Prometheus reads it
            "h_bucket{le=\"1\"} 0\n"
            "h_bucket{le=\"+Inf\"} 1\n");
}

TEST(MetricsRegistryTest, LatencyBucketsSpan100usTo10s) {
  MetricsRegistry registry;
  auto h = registry.AddHistogram("l", "L.", {}, LatencyBucketsSeconds());
  ASSERT_OK(h);
  (*h)->Observe({}, 0.0002);
  (*h)->Observe({}, 20);
  const std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr("l_bucket{le=\"0.0001\"} 0\n"
                              "l_bucket{le=\"0.00025\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("l_bucket{le=\"10\"} 1\n"
                              "l_bucket{le=\"+Inf\"} 2\n"));
}

TEST(MetricsRegistryTest, EscapesLabelValuesAndHelp) {
  MetricsRegistry registry;
  auto c = registry.AddCounter("c", "Back\\slash and\nnewline \"kept\".",
                               {"reason"});
  ASSERT_OK(c);
  (*c)->Increment({"a\\b \"q\"\nz"});
  EXPECT_EQ(registry.Render(),
            "# HELP c Back\\\\slash and\\nnewline \"kept\".\n"
            "# TYPE c counter\n"
            "c{reason=\"a\\\\b \\\"q\\\"\\nz\"} 1\n");
}

TEST(MetricsRegistryTest, CollectorsRenderGaugesAtScrapeTime) {
  MetricsRegistry registry;
  ASSERT_OK(registry.AddCounter("x_total", "X."));
  int scrapes = 0;
  registry.AddCollector([&](GaugeWriter& out) {
    ++scrapes;
    out.Write("gpu_mib", "Allocated MiB.", {{"node", "n1"}, {"gpu", "0"}},
              1024);
    out.Write("synced", "Synced.", {}, 1);
    out.Write("gpu_mib", "ignored", {{"node", "n\"2"}, {"gpu", "1"}}, 0.5);
  });
  EXPECT_EQ(registry.Render(),
            "# HELP x_total X.\n# TYPE x_total counter\nx_total 0\n"
            "# HELP gpu_mib Allocated MiB.\n# TYPE gpu_mib gauge\n"
            "gpu_mib{node=\"n1\",gpu=\"0\"} 1024\n"
            "gpu_mib{node=\"n\\\"2\",gpu=\"1\"} 0.5\n"
            "# HELP synced Synced.\n# TYPE synced gauge\n"
            "synced 1\n");
  registry.Render();
  EXPECT_EQ(scrapes, 2);
}

TEST(MetricsRegistryTest, BadCollectorSamplesBecomeComments) {
  MetricsRegistry registry;
  ASSERT_OK(registry.AddHistogram("h", "H.", {}, {}));
  registry.AddCollector([](GaugeWriter& out) {
    out.Write("1bad", "", {}, 1);
    out.Write("ok", "", {{"__reserved", "v"}}, 1);
    out.Write("h_count", "", {}, 1);  // a histogram's series
  });
  const std::string text = registry.Render();
  EXPECT_THAT(text, HasSubstr("# deviceshare: collector sample dropped: bad "
                              "metric name \"1bad\"\n"));
  EXPECT_THAT(text, HasSubstr("# deviceshare: collector sample dropped: bad "
                              "label name \"__reserved\" of ok\n"));
  EXPECT_THAT(text, HasSubstr("# deviceshare: collector gauge h_count "
                              "dropped: the name is taken\n"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("\nok ")));
}

TEST(MetricsRegistryTest, WrongLabelCountIsReportedNotRecorded) {
  MetricsRegistry registry;
  auto c = registry.AddCounter("c_total", "C.", {"a", "b"});
  ASSERT_OK(c);
  (*c)->Increment({"only-one"});
  (*c)->Increment({"x", "y", "z"}, 5);
  EXPECT_EQ(registry.Render(),
            "# HELP c_total C.\n# TYPE c_total counter\n"
            "# deviceshare: 2 updates of c_total dropped: not 2 label "
            "values\n");
}

TEST(MetricsRegistryTest, RejectsBadNamesAndBounds) {
  MetricsRegistry registry;
  EXPECT_THAT(registry.AddCounter("", "x"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "counter \"\": not a Prometheus metric name"));
  EXPECT_THAT(registry.AddGauge("a-b", "x"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("\"a-b\": not a Prometheus metric name")));
  EXPECT_THAT(registry.AddCounter("a", "x", {"ok", "bad-label"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "counter a: label name \"bad-label\" is not allowed"));
  EXPECT_THAT(registry.AddCounter("a", "x", {"v", "v"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "counter a: label name \"v\" is repeated"));
  EXPECT_THAT(registry.AddHistogram("h", "x", {"le"}, {1}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "histogram h: label name \"le\" is not allowed"));
  EXPECT_THAT(registry.AddHistogram("h", "x", {}, {1, 1}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("bucket bound 1 (1) is not finite")));
  EXPECT_THAT(registry.AddHistogram("h", "x", {},
                                    {std::numeric_limits<double>::infinity()}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("bucket bound 0 (+Inf)")));

  ASSERT_OK(registry.AddHistogram("lat", "x", {}, {1}));
  EXPECT_THAT(registry.AddCounter("lat", "x"),
              StatusIs(absl::StatusCode::kAlreadyExists,
                       "counter lat: the metric name lat is taken"));
  EXPECT_THAT(registry.AddGauge("lat_sum", "x"),
              StatusIs(absl::StatusCode::kAlreadyExists));
  ASSERT_OK(registry.AddCounter("other_count", "x"));
  EXPECT_THAT(registry.AddHistogram("other", "x", {}, {}),
              StatusIs(absl::StatusCode::kAlreadyExists,
                       HasSubstr("other_count is taken")));
}

TEST(MetricsRegistryTest, ConcurrentUpdatesSumExactly) {
  MetricsRegistry registry;
  auto counter = registry.AddCounter("c_total", "C.", {"k"});
  auto histogram = registry.AddHistogram("h", "H.", {"k"}, {0.5});
  auto gauge = registry.AddGauge("g", "G.", {"k"});
  ASSERT_OK(counter);
  ASSERT_OK(histogram);
  ASSERT_OK(gauge);
  constexpr int kThreads = 8;
  constexpr int kPerThread = 20000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      const std::string own = absl::StrCat("t", t);
      for (int i = 0; i < kPerThread; ++i) {
        // A shared label set, and per-thread ones created mid-flight.
        (*counter)->Increment({"shared"});
        (*counter)->Increment({own}, 2);
        (*histogram)->Observe({"shared"}, i % 2 == 0 ? 0.25 : 1.0);
        (*gauge)->Add({"shared"}, 1);
        if (i % 1000 == 0) registry.Render();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const std::string text = registry.Render();
  constexpr int kTotal = kThreads * kPerThread;
  EXPECT_THAT(text,
              HasSubstr(absl::StrCat("c_total{k=\"shared\"} ", kTotal, "\n")));
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_THAT(text, HasSubstr(absl::StrCat("c_total{k=\"t", t, "\"} ",
                                             2 * kPerThread, "\n")));
  }
  EXPECT_THAT(text, HasSubstr(absl::StrCat("h_bucket{k=\"shared\",le=\"0.5\"} ",
                                           kTotal / 2, "\n")));
  EXPECT_THAT(text,
              HasSubstr(absl::StrCat("h_count{k=\"shared\"} ", kTotal, "\n")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("h_sum{k=\"shared\"} ",
                                           kTotal / 2 * 1.25, "\n")));
  EXPECT_THAT(text, HasSubstr(absl::StrCat("g{k=\"shared\"} ", kTotal, "\n")));
}

// What a scraper reads back from Render: the families, their types and
// labels, the unescaped values (testing/prometheus_text.h).
TEST(MetricsRegistryTest, ScraperReadsBackWhatWasRecorded) {
  MetricsRegistry registry;
  auto requests =
      registry.AddCounter("req_total", "Requests\nby verb.", {"verb", "code"});
  auto latency = registry.AddHistogram("lat_seconds", "L.", {"verb"}, {0.1});
  auto empty = registry.AddGauge("empty", "No sample yet.", {"k"});
  ASSERT_OK(requests);
  ASSERT_OK(latency);
  ASSERT_OK(empty);
  (*requests)->Increment({"filter", "200"}, 2);
  (*requests)->Increment({"a\"b\\c", "500"});
  (*latency)->Observe({"bind"}, 0.05);
  (*latency)->Observe({"bind"}, std::numeric_limits<double>::quiet_NaN());
  registry.AddCollector([](GaugeWriter& out) {
    out.Write("gpu_mib", "MiB.", {{"node", "n"}, {"gpu", "g"}}, 7);
  });

  absl::StatusOr<testing::PrometheusText> text =
      testing::ParsePrometheusText(registry.Render());
  ASSERT_OK(text);
  ASSERT_EQ(text->families.size(), 4u);
  const testing::MetricFamilyText* req = text->Find("req_total");
  ASSERT_NE(req, nullptr);
  EXPECT_EQ(req->type, "counter");
  EXPECT_EQ(req->help, "Requests\nby verb.");
  EXPECT_EQ(req->LabelNames(), (std::set<std::string>{"code", "verb"}));
  ASSERT_EQ(req->samples.size(), 2u);
  EXPECT_EQ(req->samples[0].labels.at("verb"), "a\"b\\c");
  EXPECT_EQ(req->samples[1].value, 2);

  const testing::MetricFamilyText* lat = text->Find("lat_seconds");
  ASSERT_NE(lat, nullptr);
  EXPECT_EQ(lat->type, "histogram");
  EXPECT_EQ(lat->LabelNames(), (std::set<std::string>{"verb"}));
  std::map<std::string, double> series;
  for (const testing::SampleText& sample : lat->samples) {
    auto le = sample.labels.find("le");
    const std::string key =
        le == sample.labels.end()
            ? sample.name
            : absl::StrCat(sample.name, "{", le->second, "}");
    series[key] = sample.value;
  }
  EXPECT_EQ(series.at("lat_seconds_bucket{0.1}"), 1);
  EXPECT_EQ(series.at("lat_seconds_bucket{+Inf}"), 2);
  EXPECT_EQ(series.at("lat_seconds_count"), 2);
  EXPECT_TRUE(std::isnan(series.at("lat_seconds_sum")));

  const testing::MetricFamilyText* none = text->Find("empty");
  ASSERT_NE(none, nullptr);
  EXPECT_EQ(none->type, "gauge");
  EXPECT_TRUE(none->samples.empty());
  const testing::MetricFamilyText* gpu = text->Find("gpu_mib");
  ASSERT_NE(gpu, nullptr);
  EXPECT_EQ(gpu->type, "gauge");
  EXPECT_EQ(gpu->LabelNames(), (std::set<std::string>{"gpu", "node"}));
}

// A scrape of a large cluster writes the collectors' samples out in
// chunks: every sample once, in the order written, under one header per
// family, whatever the interleaving.
TEST(MetricsRegistryTest, ManyCollectorSamplesKeepOneFamilyEach) {
  MetricsRegistry registry;
  constexpr int kGpus = 10000;
  registry.AddCollector([](GaugeWriter& out) {
    for (int i = 0; i < kGpus; ++i) {
      const std::string gpu = absl::StrCat("GPU-", i);
      out.Write("gpu_mib", "MiB.", {{"gpu", gpu}}, i);
      out.Write("gpu_cores", "Cores.", {{"gpu", gpu}}, i % 100);
    }
  });
  const std::string rendered = registry.Render();
  absl::StatusOr<testing::PrometheusText> text =
      testing::ParsePrometheusText(rendered);
  ASSERT_OK(text);
  ASSERT_EQ(text->families.size(), 2u);
  EXPECT_EQ(text->families[0].name, "gpu_mib");
  EXPECT_EQ(text->families[1].name, "gpu_cores");
  for (const testing::MetricFamilyText& family : text->families) {
    ASSERT_EQ(family.samples.size(), static_cast<size_t>(kGpus));
    for (int i = 0; i < kGpus; ++i) {
      ASSERT_EQ(family.samples[i].labels.at("gpu"), absl::StrCat("GPU-", i));
      ASSERT_EQ(family.samples[i].value,
                family.name == "gpu_mib" ? i : i % 100);
    }
  }
  size_t headers = 0;
  for (size_t at = rendered.find("# TYPE "); at != std::string::npos;
       at = rendered.find("# TYPE ", at + 1)) {
    ++headers;
  }
  EXPECT_EQ(headers, 2u);
}

TEST(PrometheusTextTest, RefusesWhatAScraperWouldRefuse) {
  using testing::ParsePrometheusText;
  EXPECT_THAT(ParsePrometheusText("x 1\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("outside its family")));
  EXPECT_THAT(
      ParsePrometheusText("# TYPE x gauge\nx{a=\"1} 2\n"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not closed")));
  EXPECT_THAT(ParsePrometheusText("# TYPE x gauge\nx one\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("line 2 \"x one\": value \"one\"")));
  EXPECT_THAT(
      ParsePrometheusText("# TYPE x gauge\n# TYPE x counter\n"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("second TYPE")));
  EXPECT_THAT(ParsePrometheusText("# TYPE x gauge\nx_count 1\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("outside its family")));
}

}  // namespace
}  // namespace deviceshare::extender
