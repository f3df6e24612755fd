// File: bench/serve_rig.h
//
// What the benchmarks of `deviceshare-scheduler serve` share: a cluster of
// HAMi-registered nodes on the tests' in-memory API server, the benchmark's
// own temporary folder, serve started against that API server and waited
// for, and the client's side of /filter and /prioritize (bodies from JSON
// text serialised once, answers scanned rather than parsed, so that the
// client costs little of the cores it shares with the extender).
#ifndef DEVICESHARE_BENCH_SERVE_RIG_H_
#define DEVICESHARE_BENCH_SERVE_RIG_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "httplib.h"
#include "nlohmann/json.hpp"
#include "testing/fake_api_server.h"
#include "testing/server_process.h"

namespace deviceshare::bench {

// Registers node-0 .. node-<nodes - 1> of `gpus` A100-80GB each (split 10,
// HAMi's JSON form); returns their names.
nlohmann::json AddHamiNodes(testing::FakeApiServer& api, int nodes, int gpus);

// A new folder <TMPDIR>/deviceshare-<name>-<pid>; removed on destruction.
class BenchFolder {
 public:
  explicit BenchFolder(absl::string_view name);
  ~BenchFolder();
  BenchFolder(const BenchFolder&) = delete;
  BenchFolder& operator=(const BenchFolder&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// `serve`'s arguments against `api` (kubeconfig written to `folder`), on a
// free loopback port, reservations kept 5 minutes and the in-flight wait
// off (no node agent runs to mark pods served, so the figures are the
// extender's own), then `extra`.
std::vector<std::string> ServeArgs(const testing::FakeApiServer& api,
                                   const BenchFolder& folder,
                                   std::vector<std::string> extra = {});

// True once serve answers /readyz 200: the first list of every watched
// collection is in and applied. False, with its log on stderr, after
// `timeout`. Asks again `poll` after a refusal (plus a few ms), so that a
// long start is not slowed by the asking.
bool WaitUntilReady(const testing::SchedulerProcess& scheduler,
                    absl::Duration timeout,
                    absl::Duration poll = absl::ZeroDuration());

// An ExtenderArgs body from the pod's JSON text and a JSON array of names.
std::string ArgsText(absl::string_view pod_json, absl::string_view names);

// The raw text of an answer's NodeNames array ("[]" when it has none).
absl::string_view NodeNamesText(absl::string_view answer);

// /filter then /prioritize over the nodes that pass. With `pick`, the node
// with the highest priority ("" when none passes); without, "". nullopt on
// an HTTP failure.
std::optional<std::string> FilterAndPrioritize(httplib::Client& client,
                                               const std::string& pod_json,
                                               const std::string& names_json,
                                               bool pick);

// The `p`th percentile (0..100) of `values` by rank; 0 when empty.
double Percentile(std::vector<double> values, double p);

// Milliseconds from `start` to now on the steady clock.
double MillisecondsSince(std::chrono::steady_clock::time_point start);

// The kB figures of /proc/<pid>/status that say where memory is (-1: not
// read).
struct ProcessMemory {
  int64_t rss_kb = -1;
  int64_t hwm_kb = -1;  // the peak
  int64_t anon_kb = -1;
  int threads = -1;
};
ProcessMemory ReadProcessMemory(pid_t pid);

// POST /bind of `pod` (as the API server holds it) to `node`; true when the
// extender answers without an Error.
bool BindPod(httplib::Client& client, const nlohmann::json& pod,
             const std::string& node);

}  // namespace deviceshare::bench

#endif  // DEVICESHARE_BENCH_SERVE_RIG_H_
