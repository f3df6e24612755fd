// The real `deviceshare-scheduler serve`'s GET /metrics, read as a
// Prometheus scraper reads it: every family it exported before the registry
// moved to prometheus-cpp (the golden list below was taken from that binary)
// is still there, with the same type and label names, and nothing else is.
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "httplib.h"
#include "testing/fake_api_server.h"
#include "testing/kube_objects.h"
#include "testing/prometheus_text.h"
#include "testing/server_process.h"
#include "testing/temp_folder.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::FakeApiServer;
using ::deviceshare::testing::HamiNodeObject;
using ::deviceshare::testing::HamiPodObject;
using ::deviceshare::testing::MetricFamilyText;
using ::deviceshare::testing::ParsePrometheusText;
using ::deviceshare::testing::PrometheusText;
using ::deviceshare::testing::ReadyClient;
using ::deviceshare::testing::SchedulerProcess;
using ::deviceshare::testing::TempFolder;

// What one family looks like to a scraper.
struct FamilyShape {
  std::string type;
  std::set<std::string> labels;
  bool operator==(const FamilyShape&) const = default;
};

void PrintTo(const FamilyShape& shape, std::ostream* out) {
  *out << shape.type << " {" << absl::StrJoin(shape.labels, ",") << "}";
}

// Taken from serve's /metrics before the move to prometheus-cpp (commit
// 38f3b41), after the same calls as below, plus the families added since
// (refused_records_total: signed records; connections_*,
// requests_waiting_for_memory: the event-driven listener). Families with no
// sample yet show no label names.
const std::map<std::string, FamilyShape>& GoldenFamilies() {
  static const auto* golden = new std::map<std::string, FamilyShape>{
      {"deviceshare_extender_bind_failures_total", {"counter", {}}},
      {"deviceshare_extender_binds_deferred_total", {"counter", {}}},
      {"deviceshare_extender_binds_total", {"counter", {}}},
      {"deviceshare_extender_connections_closed_total",
       {"counter", {"reason"}}},
      {"deviceshare_extender_connections_open", {"gauge", {}}},
      {"deviceshare_extender_pods_allocating", {"gauge", {}}},
      {"deviceshare_extender_refused_records_total", {"counter", {}}},
      {"deviceshare_extender_rejections_total", {"counter", {"reason"}}},
      {"deviceshare_extender_request_seconds", {"histogram", {"verb"}}},
      {"deviceshare_extender_requests_total", {"counter", {"code", "verb"}}},
      {"deviceshare_extender_reservations_expired_total", {"counter", {}}},
      {"deviceshare_extender_reservations_in_flight", {"gauge", {}}},
      {"deviceshare_extender_requests_waiting_for_memory", {"gauge", {}}},
      {"deviceshare_extender_unaccounted_pods_total", {"counter", {}}},
      {"deviceshare_gpu_cores_allocated_percent",
       {"gauge", {"gpu", "model", "node"}}},
      {"deviceshare_gpu_memory_allocated_mib",
       {"gauge", {"gpu", "model", "node"}}},
      {"deviceshare_gpu_memory_capacity_mib",
       {"gauge", {"gpu", "model", "node"}}},
      {"deviceshare_gpu_tenants", {"gauge", {"gpu", "model", "node"}}},
      {"deviceshare_watch_errors_total", {"counter", {"resource"}}},
      {"deviceshare_watch_relists_total", {"counter", {"resource"}}},
      {"deviceshare_watch_synced", {"gauge", {"resource"}}},
  };
  return *golden;
}

std::map<std::string, FamilyShape> Shapes(const PrometheusText& text) {
  std::map<std::string, FamilyShape> shapes;
  for (const MetricFamilyText& family : text.families) {
    shapes[family.name] = {family.type, family.LabelNames()};
  }
  return shapes;
}

TEST(ExtenderMetricsScrapeTest, FamiliesKeepTheirNamesTypesAndLabels) {
  TempFolder dir;
  FakeApiServer api;
  api.UpsertNode(HamiNodeObject({.name = "n", .gpus = 1, .memory_mib = 10000}));
  api.UpsertPod(HamiPodObject({.name = "p", .memory_mib = 6000}));
  api.UpsertPod(HamiPodObject({.name = "q", .memory_mib = 6000}));
  SchedulerProcess scheduler(DEVICESHARE_SCHEDULER_BIN,
                             {"--kubeconfig", api.WriteKubeconfig(dir.path()),
                              "--address", "127.0.0.1:0"});
  ASSERT_TRUE(scheduler.Start().ok()) << scheduler.Log();
  absl::StatusOr<std::unique_ptr<httplib::Client>> client =
      ReadyClient(scheduler);
  ASSERT_TRUE(client.ok()) << client.status();

  // p fits and is bound; q does not fit beside it.
  auto args = [&](const std::string& pod) {
    return nlohmann::json{{"Pod", *api.GetPod("default", pod)},
                          {"NodeNames", {"n"}}}
        .dump();
  };
  auto filtered = (*client)->Post("/filter", args("p"), "application/json");
  ASSERT_TRUE(filtered && filtered->status == 200);
  nlohmann::json pod = *api.GetPod("default", "p");
  auto bound =
      (*client)->Post("/bind",
                      nlohmann::json{{"PodName", "p"},
                                     {"PodNamespace", "default"},
                                     {"PodUID", pod["metadata"]["uid"]},
                                     {"Node", "n"}}
                          .dump(),
                      "application/json");
  ASSERT_TRUE(bound && bound->status == 200);
  auto refused = (*client)->Post("/filter", args("q"), "application/json");
  ASSERT_TRUE(refused && refused->status == 200);

  auto scraped = (*client)->Get("/metrics");
  ASSERT_TRUE(scraped);
  ASSERT_EQ(scraped->status, 200);
  EXPECT_THAT(scraped->get_header_value("Content-Type"),
              ::testing::StartsWith("text/plain; version=0.0.4"));
  absl::StatusOr<PrometheusText> text = ParsePrometheusText(scraped->body);
  ASSERT_TRUE(text.ok()) << text.status() << "\n" << scraped->body;
  const std::map<std::string, FamilyShape> shapes = Shapes(*text);
  EXPECT_EQ(shapes, GoldenFamilies()) << scraped->body;
  // Answered 200 (the code was "-1", httplib's unset status, before).
  const MetricFamilyText* requests =
      text->Find("deviceshare_extender_requests_total");
  ASSERT_NE(requests, nullptr);
  std::map<std::string, double> by_verb_and_code;
  for (const auto& sample : requests->samples) {
    by_verb_and_code[absl::StrCat(sample.labels.at("verb"), " ",
                                  sample.labels.at("code"))] = sample.value;
  }
  EXPECT_EQ(by_verb_and_code,
            (std::map<std::string, double>{{"bind 200", 1}, {"filter 200", 2}}))
      << scraped->body;
  EXPECT_THAT(text->comments, ::testing::IsEmpty());
}

}  // namespace
}  // namespace deviceshare
