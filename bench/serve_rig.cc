#include "serve_rig.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <system_error>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "testing/kube_objects.h"
#include "testing/wait_for.h"

namespace deviceshare::bench {

nlohmann::json AddHamiNodes(testing::FakeApiServer& api, int nodes, int gpus) {
  nlohmann::json names = nlohmann::json::array();
  for (int i = 0; i < nodes; ++i) {
    const std::string name = absl::StrCat("node-", i);
    api.UpsertNode(testing::HamiNodeObject({.name = name, .gpus = gpus}));
    names.push_back(name);
  }
  return names;
}

BenchFolder::BenchFolder(absl::string_view name)
    : path_(std::filesystem::temp_directory_path() /
            absl::StrCat("deviceshare-", name, "-", getpid())) {
  std::filesystem::create_directories(path_);
}

BenchFolder::~BenchFolder() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::vector<std::string> ServeArgs(const testing::FakeApiServer& api,
                                   const BenchFolder& folder,
                                   std::vector<std::string> extra) {
  std::vector<std::string> args = {
      "--kubeconfig",        api.WriteKubeconfig(folder.path().string()),
      "--address",           "127.0.0.1:0",
      "--reservation-ttl",   "5m",
      "--in-flight-timeout", "0s"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

bool WaitUntilReady(const testing::SchedulerProcess& scheduler,
                    absl::Duration timeout, absl::Duration poll) {
  httplib::Client client("127.0.0.1", scheduler.port());
  if (!testing::WaitFor(
          [&] {
            auto ready = client.Get("/readyz");
            if (ready && ready->status == 200) return true;
            absl::SleepFor(poll);
            return false;
          },
          timeout)) {
    std::fprintf(stderr, "not ready:\n%s\n", scheduler.Log().c_str());
    return false;
  }
  return true;
}

std::string ArgsText(absl::string_view pod_json, absl::string_view names) {
  return absl::StrCat("{\"Pod\":", pod_json, ",\"NodeNames\":", names, "}");
}

// Node names hold no brackets.
absl::string_view NodeNamesText(absl::string_view answer) {
  const size_t key = answer.find("\"NodeNames\":");
  if (key == absl::string_view::npos) return "[]";
  const size_t open = answer.find('[', key);
  const size_t close = answer.find(']', open);
  if (open == absl::string_view::npos || close == absl::string_view::npos) {
    return "[]";
  }
  return answer.substr(open, close - open + 1);
}

std::optional<std::string> FilterAndPrioritize(httplib::Client& client,
                                               const std::string& pod_json,
                                               const std::string& names_json,
                                               bool pick) {
  auto filtered = client.Post("/filter", ArgsText(pod_json, names_json),
                              "application/json");
  if (!filtered || filtered->status != 200) return std::nullopt;
  auto prioritized = client.Post(
      "/prioritize", ArgsText(pod_json, NodeNamesText(filtered->body)),
      "application/json");
  if (!prioritized || prioritized->status != 200) return std::nullopt;
  std::string best;
  if (!pick) return best;
  int64_t best_score = -1;
  for (const nlohmann::json& entry : nlohmann::json::parse(prioritized->body)) {
    if (entry["Score"].get<int64_t>() > best_score) {
      best_score = entry["Score"];
      best = entry["Host"];
    }
  }
  return best;
}

bool BindPod(httplib::Client& client, const nlohmann::json& pod,
             const std::string& node) {
  const std::string body = nlohmann::json({{"PodName", pod["metadata"]["name"]},
                                           {"PodNamespace", "default"},
                                           {"PodUID", pod["metadata"]["uid"]},
                                           {"Node", node}})
                               .dump();
  auto bound = client.Post("/bind", body, "application/json");
  return bound && nlohmann::json::parse(bound->body)["Error"] == "";
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t rank = static_cast<size_t>(p / 100.0 * values.size());
  return values[std::min(rank, values.size() - 1)];
}

double MillisecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

ProcessMemory ReadProcessMemory(pid_t pid) {
  ProcessMemory memory;
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t:"), absl::SkipEmpty());
    if (fields.size() < 2) continue;
    int64_t value = 0;
    if (!absl::SimpleAtoi(fields[1], &value)) continue;
    if (fields[0] == "VmRSS") memory.rss_kb = value;
    if (fields[0] == "VmHWM") memory.hwm_kb = value;
    if (fields[0] == "RssAnon") memory.anon_kb = value;
    if (fields[0] == "Threads") memory.threads = static_cast<int>(value);
  }
  return memory;
}

}  // namespace deviceshare::bench
