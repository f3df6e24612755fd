// churn_soak: `deviceshare-scheduler serve` under continuous pod churn with
// API server faults, for minutes (a soak, not a test: CI does not run it).
//
// Starts the real serve against the tests' in-memory API server
// (tests/testing/fake_api_server.h) holding N nodes x G GPUs, then runs,
// all at once:
//   - a creator: --rate pods a second, of five shapes (1 GPU 10-40 GB up to
//     4 whole GPUs);
//   - --workers scheduling threads playing kube-scheduler: filter,
//     prioritize, bind to the best node; a failed call or a pod that fits
//     nowhere goes back to the queue with kube-scheduler's backoff (1 s
//     doubling, at most 10 s); a pod pending --give_up_s is deleted;
//   - a deleter: each bound pod is deleted after a lifetime drawn in
//     [0.5, 1.5] x --lifetime_s (one in five first turns Succeeded), so
//     pods leave at the rate they come and the cluster stays busy; and
//     --race_percent of the pods are deleted 0-100 ms after their cycle
//     starts, racing their filter and bind;
//   - a fault injector (bench/churn_faults.h): one fault every
//     --fault_every seconds;
//   - a sampler: each second, /metrics and the API server's pods; no GPU
//     may be over its capacity by serve's ledger or by the bound pods'
//     allocation records.
// Then it stops the load and the faults and waits for quiescence (the
// reservation TTL, watches synced): serve's ledger must equal the
// recomputation from the bound pods' records on every GPU, with no
// reservation in flight and no pod allocating; serve's resident memory at
// the end is compared with the one after the warm-up. Prints the figures;
// exits 1 when a check fails. Figures and command line: bench/README.md.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <optional>
#include <queue>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "churn_audit.h"
#include "churn_faults.h"
#include "httplib.h"
#include "serve_rig.h"
#include "testing/fake_api_server.h"
#include "testing/kube_objects.h"
#include "testing/server_process.h"

ABSL_FLAG(int, nodes, 200, "nodes in the cluster");
ABSL_FLAG(int, gpus, 8, "GPUs per node");
ABSL_FLAG(double, rate, 50, "pods created a second (and, once full, deleted)");
ABSL_FLAG(double, minutes, 5, "duration of the load");
ABSL_FLAG(int, seconds, 0, "duration of the load; overrides --minutes if > 0");
ABSL_FLAG(double, fault_every, 3, "seconds between faults (0: no faults)");
ABSL_FLAG(uint64_t, seed, 1, "seed of the shapes, lifetimes and faults");
ABSL_FLAG(int, workers, 4,
          "scheduling threads (parallel kube-scheduler calls)");
ABSL_FLAG(double, lifetime_s, 60, "mean lifetime of a bound pod, seconds");
ABSL_FLAG(int, race_percent, 2,
          "pods deleted 0-100 ms after their scheduling cycle starts, racing "
          "their filter and bind (a user's delete at any time)");
ABSL_FLAG(double, give_up_s, 120, "a pod pending this long is deleted");
ABSL_FLAG(int, reservation_ttl_s, 10, "serve's --reservation-ttl, seconds");
ABSL_FLAG(int, settle_s, 120,
          "how long, after the load stops, the ledger may take to match");
ABSL_FLAG(std::string, serve_log, "",
          "write serve's log (stderr, info level) to this file at the end");
ABSL_FLAG(int, rss_growth_limit_mib, 64,
          "most VmRSS growth from the warm-up (a quarter in) to the end");

namespace {

using ::deviceshare::bench::AddHamiNodes;
using ::deviceshare::bench::BenchFolder;
using ::deviceshare::bench::FaultInjector;
using ::deviceshare::bench::FilterAndPrioritize;
using ::deviceshare::bench::GpuUse;
using ::deviceshare::bench::LedgerDiff;
using ::deviceshare::bench::OverCapacity;
using ::deviceshare::bench::ReadServeView;
using ::deviceshare::bench::ServeArgs;
using ::deviceshare::bench::ServeView;
using ::deviceshare::bench::UsesFromPods;
using ::deviceshare::bench::UsesOf;
using ::deviceshare::bench::WaitUntilReady;
using ::deviceshare::testing::FakeApiServer;
using ::deviceshare::testing::HamiPodObject;
using ::deviceshare::testing::PodSpec;
using ::deviceshare::testing::SchedulerProcess;
using nlohmann::json;

struct Shape {
  int gpus;
  int64_t memory_mib;
  int cores;
  int weight;  // in 100
};
constexpr Shape kShapes[] = {{1, 10000, 10, 35},
                             {1, 20000, 25, 30},
                             {1, 40000, 50, 20},
                             {2, 30000, 30, 10},
                             {4, 81920, 100, 5}};

struct Counters {
  std::atomic<int64_t> created{0}, bound{0}, bound_behind{0};
  std::atomic<int64_t> deleted_bound{0}, deleted_pending{0}, finished{0};
  std::atomic<int64_t> racing{0}, deleted_racing{0};
  std::atomic<int64_t> filter_errors{0}, unschedulable{0}, bind_errors{0};
};

// The pods kube-scheduler's queue holds, and the bound pods' departures.
class PodBook {
 public:
  struct Pending {
    std::string name;
    absl::Time created;
    int attempts = 0;
  };

  void Add(Pending pod, absl::Time when) {
    absl::MutexLock lock(&mu_);
    queue_.emplace(when, std::move(pod));
  }
  // Back to the queue after a failed attempt, with kube-scheduler's backoff.
  void Retry(Pending pod) {
    pod.attempts = std::min(pod.attempts + 1, 5);
    const absl::Duration backoff =
        std::min(absl::Seconds(1 << (pod.attempts - 1)), absl::Seconds(10));
    Add(std::move(pod), absl::Now() + backoff);
  }
  std::optional<Pending> TakeDue(absl::Time now) {
    absl::MutexLock lock(&mu_);
    if (queue_.empty() || queue_.begin()->first > now) return std::nullopt;
    Pending pod = std::move(queue_.begin()->second);
    queue_.erase(queue_.begin());
    return pod;
  }
  // The queued pods created before `cutoff`, taken out.
  std::vector<std::string> TakeCreatedBefore(absl::Time cutoff) {
    absl::MutexLock lock(&mu_);
    std::vector<std::string> names;
    for (auto it = queue_.begin(); it != queue_.end();) {
      if (it->second.created >= cutoff) {
        ++it;
        continue;
      }
      names.push_back(it->second.name);
      it = queue_.erase(it);
    }
    return names;
  }
  size_t pending() const {
    absl::MutexLock lock(&mu_);
    return queue_.size();
  }

  struct Departure {
    absl::Time at;
    std::string name;
    bool finish_first;
    bool racing = false;  // deleted while being scheduled
    bool operator>(const Departure& other) const { return at > other.at; }
  };
  void Leave(Departure departure) {
    absl::MutexLock lock(&mu_);
    departures_.push(std::move(departure));
  }
  std::optional<Departure> TakeDeparture(absl::Time now) {
    absl::MutexLock lock(&mu_);
    if (departures_.empty() || departures_.top().at > now) return std::nullopt;
    Departure departure = departures_.top();
    departures_.pop();
    return departure;
  }

 private:
  mutable absl::Mutex mu_;
  std::multimap<absl::Time, Pending> queue_ ABSL_GUARDED_BY(mu_);
  std::priority_queue<Departure, std::vector<Departure>, std::greater<>>
      departures_ ABSL_GUARDED_BY(mu_);
};

// What the sampler saw during the load.
struct Samples {
  int64_t scrapes = 0, scrape_failures = 0;
  int64_t ledger_over = 0, records_over = 0;  // samples with a GPU over
  std::vector<std::string> over_examples;
  int64_t max_in_flight = 0;
  double busy_memory_sum = 0;  // fraction of all GPU memory held, summed
  int64_t busy_samples = 0;    // over the second half
  int64_t warm_rss_kb = -1;
};

int64_t ReadKb(pid_t pid, absl::string_view field) {
  std::ifstream status(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(status, line)) {
    std::vector<absl::string_view> parts =
        absl::StrSplit(line, absl::ByAnyChar(" \t:"), absl::SkipEmpty());
    int64_t value = 0;
    if (parts.size() >= 2 && parts[0] == field &&
        absl::SimpleAtoi(parts[1], &value)) {
      return value;
    }
  }
  return -1;
}

// "" when serve bound the pod, else its error (or the HTTP failure).
std::string Bind(httplib::Client& client, const json& pod,
                 const std::string& node) {
  const std::string body = json({{"PodName", pod["metadata"]["name"]},
                                 {"PodNamespace", "default"},
                                 {"PodUID", pod["metadata"]["uid"]},
                                 {"Node", node}})
                               .dump();
  auto answer = client.Post("/bind", body, "application/json");
  if (!answer) return "HTTP failure";
  const json result = json::parse(answer->body, nullptr, false);
  if (!result.is_object()) return absl::StrCat("HTTP ", answer->status);
  return result.value("Error", "");
}

class Soak {
 public:
  Soak(FakeApiServer& api, const SchedulerProcess& serve, std::string names)
      : api_(api), serve_(serve), names_json_(std::move(names)) {}

  void Run(absl::Duration duration);
  // Waits for the ledger to match the pods; returns the last diff.
  std::vector<std::string> Settle(absl::Duration limit, ServeView& last,
                                  double& settled_s);
  void Report(const ServeView& end, const std::vector<std::string>& diff,
              double settled_s, double seconds) const;
  const Samples& samples() const { return samples_; }
  const FaultInjector& faults() const { return faults_; }

 private:
  void Create(absl::Time start);
  void Schedule(uint64_t seed);
  void Delete(uint64_t seed);
  void InjectFaults();
  void Sample(absl::Time start, absl::Duration duration);
  bool SampleOnce(httplib::Client& client, bool second_half);
  std::optional<ServeView> Scrape(httplib::Client& client);
  void SleepUnlessStopped(absl::Duration duration) const;

  FakeApiServer& api_;
  const SchedulerProcess& serve_;
  const std::string names_json_;
  PodBook book_;
  Counters counts_;
  Samples samples_;
  FaultInjector faults_{&api_, absl::GetFlag(FLAGS_seed) * 7919};
  std::atomic<bool> stop_{false};
  std::atomic<bool> stop_sampler_{false};
};

void Soak::SleepUnlessStopped(absl::Duration duration) const {
  const absl::Time until = absl::Now() + duration;
  while (!stop_.load() && absl::Now() < until) {
    absl::SleepFor(std::min(absl::Milliseconds(50), until - absl::Now()));
  }
}

void Soak::Create(absl::Time start) {
  std::mt19937_64 random(absl::GetFlag(FLAGS_seed));
  std::uniform_int_distribution<int> percent(0, 99);
  const double rate = absl::GetFlag(FLAGS_rate);
  for (int64_t i = 0; !stop_.load(); ++i) {
    const absl::Time due = start + absl::Seconds(i / rate);
    if (due > absl::Now()) SleepUnlessStopped(due - absl::Now());
    if (stop_.load()) break;
    int pick = percent(random);
    const Shape* shape = &kShapes[0];
    for (const Shape& candidate : kShapes) {
      shape = &candidate;
      if (pick < candidate.weight) break;
      pick -= candidate.weight;
    }
    const std::string name = absl::StrCat("churn-", i);
    api_.UpsertPod(HamiPodObject(PodSpec{.name = name,
                                         .gpus = shape->gpus,
                                         .memory_mib = shape->memory_mib,
                                         .cores = shape->cores}));
    ++counts_.created;
    book_.Add({name, absl::Now()}, absl::Now());
  }
}

void Soak::Schedule(uint64_t seed) {
  std::mt19937_64 random(seed);
  const double mean = absl::GetFlag(FLAGS_lifetime_s);
  std::uniform_real_distribution<double> lifetime(0.5 * mean, 1.5 * mean);
  std::uniform_int_distribution<int> percent(0, 99);
  std::uniform_int_distribution<int> race_ms(0, 100);
  const int race_percent = absl::GetFlag(FLAGS_race_percent);
  auto depart = [&](const std::string& name) {
    book_.Leave({absl::Now() + absl::Seconds(lifetime(random)), name,
                 percent(random) < 20});
  };
  httplib::Client client("127.0.0.1", serve_.port());
  client.set_read_timeout(60, 0);
  client.set_tcp_nodelay(true);
  while (!stop_.load()) {
    std::optional<PodBook::Pending> pending = book_.TakeDue(absl::Now());
    if (!pending) {
      absl::SleepFor(absl::Milliseconds(5));
      continue;
    }
    std::optional<json> pod = api_.GetPod("default", pending->name);
    if (!pod) continue;  // given up on
    if (!pod->value("spec", json::object()).value("nodeName", "").empty()) {
      ++counts_.bound_behind;  // an earlier bind that reported an error
      depart(pending->name);
      continue;
    }
    const bool racing = percent(random) < race_percent;
    if (racing) {
      ++counts_.racing;
      book_.Leave({absl::Now() + absl::Milliseconds(race_ms(random)),
                   pending->name, false, true});
    }
    std::optional<std::string> best =
        FilterAndPrioritize(client, pod->dump(), names_json_, true);
    if (!best || best->empty()) {
      ++(best ? counts_.unschedulable : counts_.filter_errors);
      book_.Retry(*std::move(pending));
      continue;
    }
    if (std::string error = Bind(client, *pod, *best); !error.empty()) {
      ++counts_.bind_errors;
      book_.Retry(*std::move(pending));
      continue;
    }
    ++counts_.bound;
    if (!racing) depart(pending->name);
  }
}

void Soak::Delete(uint64_t seed) {
  const absl::Duration give_up = absl::Seconds(absl::GetFlag(FLAGS_give_up_s));
  while (!stop_.load()) {
    while (std::optional<PodBook::Departure> leaving =
               book_.TakeDeparture(absl::Now())) {
      if (leaving->finish_first) {
        api_.SetPodPhase("default", leaving->name, "Succeeded");
        ++counts_.finished;
        book_.Leave({absl::Now() + absl::Seconds(1), leaving->name, false});
        continue;
      }
      if (api_.DeletePod("default", leaving->name)) {
        ++(leaving->racing ? counts_.deleted_racing : counts_.deleted_bound);
      }
    }
    for (const std::string& name :
         book_.TakeCreatedBefore(absl::Now() - give_up)) {
      api_.DeletePod("default", name);
      ++counts_.deleted_pending;
    }
    SleepUnlessStopped(absl::Milliseconds(50));
  }
  (void)seed;
}

void Soak::InjectFaults() {
  const double every = absl::GetFlag(FLAGS_fault_every);
  if (every <= 0) return;
  while (!stop_.load()) {
    SleepUnlessStopped(absl::Seconds(every));
    if (!stop_.load()) faults_.Inject();
  }
  faults_.Clear();
}

std::optional<ServeView> Soak::Scrape(httplib::Client& client) {
  auto metrics = client.Get("/metrics");
  if (!metrics || metrics->status != 200) return std::nullopt;
  absl::StatusOr<ServeView> view = ReadServeView(metrics->body);
  if (!view.ok()) {
    std::fprintf(stderr, "%s\n", std::string(view.status().message()).c_str());
    return std::nullopt;
  }
  return *std::move(view);
}

// One sample: both over-capacity checks; false when /metrics failed.
bool Soak::SampleOnce(httplib::Client& client, bool second_half) {
  std::optional<ServeView> view = Scrape(client);
  if (!view) return false;
  const std::map<std::string, GpuUse> records =
      UsesFromPods(api_.PodSnapshot(), nullptr);
  const std::vector<std::string> ledger_over =
      OverCapacity(UsesOf(view->gpus), view->gpus);
  const std::vector<std::string> records_over =
      OverCapacity(records, view->gpus);
  samples_.ledger_over += ledger_over.empty() ? 0 : 1;
  samples_.records_over += records_over.empty() ? 0 : 1;
  for (const auto* over : {&ledger_over, &records_over}) {
    for (const std::string& line : *over) {
      if (samples_.over_examples.size() < 8) {
        samples_.over_examples.push_back(
            absl::StrCat(over == &ledger_over ? "ledger " : "records ", line));
      }
    }
  }
  samples_.max_in_flight =
      std::max(samples_.max_in_flight, view->reservations_in_flight);
  if (second_half) {
    int64_t held = 0, capacity = 0;
    for (const auto& [uuid, gpu] : view->gpus) {
      capacity += gpu.memory_capacity_mib;
      auto use = records.find(uuid);
      if (use != records.end()) held += use->second.memory_mib;
    }
    samples_.busy_memory_sum += capacity > 0 ? double(held) / capacity : 0;
    ++samples_.busy_samples;
  }
  return true;
}

void Soak::Sample(absl::Time start, absl::Duration duration) {
  httplib::Client client("127.0.0.1", serve_.port());
  client.set_read_timeout(60, 0);
  while (!stop_sampler_.load()) {
    const absl::Time tick = absl::Now();
    const absl::Duration elapsed = tick - start;
    ++samples_.scrapes;
    if (!SampleOnce(client, elapsed >= duration / 2)) {
      ++samples_.scrape_failures;
    }
    if (samples_.warm_rss_kb < 0 && elapsed >= duration / 4) {
      samples_.warm_rss_kb = ReadKb(serve_.pid(), "VmRSS");
    }
    absl::SleepFor(absl::Seconds(1) - (absl::Now() - tick));
  }
}

void Soak::Run(absl::Duration duration) {
  const absl::Time start = absl::Now();
  std::vector<std::thread> threads;
  std::thread sampler([&] { Sample(start, duration); });
  threads.emplace_back([&] { Create(start); });
  const int workers = absl::GetFlag(FLAGS_workers);
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back(
        [this, w] { Schedule(absl::GetFlag(FLAGS_seed) * 1000 + w); });
  }
  threads.emplace_back([this] { Delete(absl::GetFlag(FLAGS_seed)); });
  threads.emplace_back([this] { InjectFaults(); });
  while (absl::Now() - start < duration) {
    absl::SleepFor(absl::Seconds(10));
    std::printf(
        "  %4.0f s: created %lld bound %lld deleted %lld pending %zu "
        "faults %lld serve VmRSS %.1f MiB\n",
        absl::ToDoubleSeconds(absl::Now() - start),
        static_cast<long long>(counts_.created.load()),
        static_cast<long long>(counts_.bound.load()),
        static_cast<long long>(counts_.deleted_bound.load()), book_.pending(),
        static_cast<long long>(faults_.total()),
        ReadKb(serve_.pid(), "VmRSS") / 1024.0);
    std::fflush(stdout);
  }
  stop_ = true;
  for (std::thread& thread : threads) thread.join();
  stop_sampler_ = true;
  sampler.join();
}

std::vector<std::string> Soak::Settle(absl::Duration limit, ServeView& last,
                                      double& settled_s) {
  httplib::Client client("127.0.0.1", serve_.port());
  client.set_read_timeout(60, 0);
  const absl::Time stopped = absl::Now();
  // Filter reservations of the pods left pending need one TTL to expire.
  absl::SleepFor(absl::Seconds(absl::GetFlag(FLAGS_reservation_ttl_s) + 2));
  std::vector<std::string> diff = {"no scrape"};
  while (true) {
    if (std::optional<ServeView> view = Scrape(client)) {
      last = *std::move(view);
      diff = LedgerDiff(last.gpus, UsesFromPods(api_.PodSnapshot(), nullptr));
      if (diff.empty() && last.watches_synced &&
          last.reservations_in_flight == 0 && last.pods_allocating == 0) {
        break;
      }
    }
    if (absl::Now() - stopped > limit) break;
    absl::SleepFor(absl::Seconds(1));
  }
  settled_s = absl::ToDoubleSeconds(absl::Now() - stopped);
  return diff;
}

}  // namespace

namespace {

std::string FaultCounts(const FaultInjector& faults) {
  std::vector<std::string> parts;
  for (int kind = 0; kind < FaultInjector::kKinds; ++kind) {
    parts.push_back(absl::StrCat(FaultInjector::KindName(kind), " ",
                                 faults.counts()[kind]));
  }
  return absl::StrJoin(parts, ", ");
}

std::string BindFailures(const ServeView& view) {
  std::vector<std::string> parts;
  for (const auto& [stage, count] : view.bind_failures) {
    parts.push_back(absl::StrCat(stage, " ", count));
  }
  return parts.empty() ? "none" : absl::StrJoin(parts, ", ");
}

void Soak::Report(const ServeView& end, const std::vector<std::string>& diff,
                  double settled_s, double seconds) const {
  const Counters& c = counts_;
  std::printf(
      "pods: created %lld (%.1f/s), bound %lld (%.1f/s; %lld more found "
      "bound after a bind error), deleted %lld bound (%lld turned Succeeded "
      "first) + %lld pending given up + %lld racing their scheduling (of "
      "%lld doomed), pending at the end %zu\n",
      (long long)c.created, c.created / seconds, (long long)c.bound,
      c.bound / seconds, (long long)c.bound_behind, (long long)c.deleted_bound,
      (long long)c.finished, (long long)c.deleted_pending,
      (long long)c.deleted_racing, (long long)c.racing, book_.pending());
  std::printf(
      "scheduling answers: filter/prioritize HTTP failures %lld, fits "
      "nowhere %lld, bind errors %lld\n",
      (long long)c.filter_errors, (long long)c.unschedulable,
      (long long)c.bind_errors);
  std::printf("faults: %lld (%s)\n", (long long)faults_.total(),
              FaultCounts(faults_).c_str());
  std::printf(
      "serve: binds %lld, bind failures by stage: %s; reservations expired "
      "%lld; records unaccounted %lld; watch relists %lld, watch errors "
      "%lld\n",
      (long long)end.binds, BindFailures(end).c_str(),
      (long long)end.reservations_expired, (long long)end.unaccounted_pods,
      (long long)end.watch_relists, (long long)end.watch_errors);
  std::printf(
      "samples: %lld (%lld failed); with a GPU over capacity: ledger %lld, "
      "bound pods' records %lld; most reservations in flight %lld; GPU "
      "memory held over the second half %.1f %%\n",
      (long long)samples_.scrapes, (long long)samples_.scrape_failures,
      (long long)samples_.ledger_over, (long long)samples_.records_over,
      (long long)samples_.max_in_flight,
      samples_.busy_samples > 0
          ? 100.0 * samples_.busy_memory_sum / samples_.busy_samples
          : 0.0);
  for (const std::string& line : samples_.over_examples) {
    std::printf("  over: %s\n", line.c_str());
  }
  std::printf(
      "end (%.1f s after the load stopped): GPUs whose ledger differs from "
      "the pods' records %zu of %zu; reservations in flight %lld; pods "
      "allocating %lld; pods and nodes synced %s (collections not synced: "
      "%s)\n",
      settled_s, diff.size(), end.gpus.size(),
      (long long)end.reservations_in_flight, (long long)end.pods_allocating,
      end.watches_synced ? "yes" : "no",
      end.unsynced.empty() ? "none"
                           : absl::StrJoin(end.unsynced, ", ").c_str());
  for (size_t i = 0; i < diff.size() && i < 10; ++i) {
    std::printf("  diff: %s\n", diff[i].c_str());
  }
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const int nodes = absl::GetFlag(FLAGS_nodes);
  const int gpus = absl::GetFlag(FLAGS_gpus);
  const absl::Duration duration =
      absl::GetFlag(FLAGS_seconds) > 0
          ? absl::Seconds(absl::GetFlag(FLAGS_seconds))
          : absl::Seconds(60 * absl::GetFlag(FLAGS_minutes));
  if (nodes <= 0 || gpus < 4 || absl::GetFlag(FLAGS_rate) <= 0 ||
      absl::GetFlag(FLAGS_workers) <= 0) {
    std::fprintf(stderr,
                 "--nodes, --rate and --workers must be > 0, --gpus >= 4\n");
    return 2;
  }
  FakeApiServer api;
  const std::string names_json = AddHamiNodes(api, nodes, gpus).dump();
  const BenchFolder folder("churn-soak");
  SchedulerProcess serve(
      DEVICESHARE_SCHEDULER_BIN,
      ServeArgs(api, folder,
                {"--reservation-ttl",
                 absl::StrCat(absl::GetFlag(FLAGS_reservation_ttl_s), "s")}));
  if (absl::Status started = serve.Start(); !started.ok()) {
    std::fprintf(stderr, "%s\n", std::string(started.message()).c_str());
    return 1;
  }
  if (!WaitUntilReady(serve, absl::Seconds(60))) return 1;
  const int64_t ready_rss_kb = ReadKb(serve.pid(), "VmRSS");
  const double seconds = absl::ToDoubleSeconds(duration);
  std::printf(
      "churn_soak: %d nodes x %d GPUs, %.0f pods/s for %.0f s, %d workers, "
      "lifetime %.0f s, a fault every %.1f s, seed %llu, reservation TTL "
      "%d s; %u hardware threads shared by the soak, its API server and "
      "serve\n",
      nodes, gpus, absl::GetFlag(FLAGS_rate), seconds,
      absl::GetFlag(FLAGS_workers), absl::GetFlag(FLAGS_lifetime_s),
      absl::GetFlag(FLAGS_fault_every),
      static_cast<unsigned long long>(absl::GetFlag(FLAGS_seed)),
      absl::GetFlag(FLAGS_reservation_ttl_s),
      std::thread::hardware_concurrency());
  std::fflush(stdout);

  Soak soak(api, serve, names_json);
  soak.Run(duration);
  ServeView end;
  double settled_s = 0;
  const std::vector<std::string> diff =
      soak.Settle(absl::Seconds(absl::GetFlag(FLAGS_settle_s)), end, settled_s);
  soak.Report(end, diff, settled_s, seconds);
  const int64_t end_rss_kb = ReadKb(serve.pid(), "VmRSS");
  const int64_t warm_rss_kb = soak.samples().warm_rss_kb;
  std::printf(
      "serve memory: VmRSS ready %.1f MiB, after the warm-up %.1f MiB, end "
      "%.1f MiB; VmHWM %.1f MiB\n",
      ready_rss_kb / 1024.0, warm_rss_kb / 1024.0, end_rss_kb / 1024.0,
      ReadKb(serve.pid(), "VmHWM") / 1024.0);

  std::vector<std::string> failures;
  if (!diff.empty()) failures.push_back("ledger != pods' records");
  if (soak.samples().ledger_over + soak.samples().records_over > 0) {
    failures.push_back("a GPU over capacity");
  }
  if (!end.watches_synced) failures.push_back("pods or nodes not synced");
  if (end.reservations_in_flight != 0 || end.pods_allocating != 0) {
    failures.push_back("reservations or in-flight entries left");
  }
  if (warm_rss_kb < 0 ||
      end_rss_kb - warm_rss_kb >
          1024 * int64_t{absl::GetFlag(FLAGS_rss_growth_limit_mib)}) {
    failures.push_back("serve's memory grew");
  }
  std::printf("result: %s\n", failures.empty()
                                  ? "PASS"
                                  : absl::StrJoin(failures, "; ").c_str());
  serve.Kill(SIGTERM);
  if (const std::string path = absl::GetFlag(FLAGS_serve_log); !path.empty()) {
    std::ofstream(path) << serve.Log();
  }
  return failures.empty() ? 0 : 1;
}
