#include "deviceshare/simulate/replay_command.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "deviceshare/input/input_file.h"
#include "deviceshare/policy/policy_registry.h"
#include "deviceshare/simulate/simulate.h"
#include "deviceshare/simulate/trace_loader.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::simulate {
namespace {

// The most seeds one run takes: each is a full replay per trace and policy.
constexpr uint64_t kMaxSeeds = 1000;

absl::Status BadSeeds(absl::string_view flag, absl::string_view text,
                      absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s \"%s\": %s", flag, text, why));
}

}  // namespace

absl::StatusOr<std::vector<uint64_t>> ParseSeeds(absl::string_view flag,
                                                 absl::string_view text) {
  std::vector<uint64_t> seeds;
  if (absl::StrContains(text, '-')) {
    const std::pair<absl::string_view, absl::string_view> range =
        absl::StrSplit(text, absl::MaxSplits('-', 1));
    uint64_t first = 0;
    uint64_t last = 0;
    if (!absl::SimpleAtoi(range.first, &first) ||
        !absl::SimpleAtoi(range.second, &last) || last < first) {
      return BadSeeds(flag, text, "want FIRST-LAST with FIRST <= LAST");
    }
    if (last - first >= kMaxSeeds) {
      return BadSeeds(flag, text, "more than 1000 seeds");
    }
    for (uint64_t seed = first; seed <= last; ++seed) seeds.push_back(seed);
    return seeds;
  }
  if (absl::StrContains(text, ',')) {
    for (absl::string_view part : absl::StrSplit(text, ',')) {
      uint64_t seed = 0;
      if (!absl::SimpleAtoi(part, &seed)) {
        return BadSeeds(flag, text,
                        absl::StrFormat("\"%s\" is not a seed", part));
      }
      seeds.push_back(seed);
    }
    return seeds;
  }
  uint64_t count = 0;
  if (!absl::SimpleAtoi(text, &count) || count == 0 || count > kMaxSeeds) {
    return BadSeeds(flag, text,
                    "want a count 1..1000, FIRST-LAST or a comma list");
  }
  for (uint64_t i = 0; i < count; ++i) seeds.push_back(42 + i);
  return seeds;
}

std::string TraceName(absl::string_view path) {
  absl::string_view name = path;
  if (const size_t slash = name.rfind('/'); slash != name.npos) {
    name.remove_prefix(slash + 1);
  }
  absl::ConsumeSuffix(&name, ".csv");
  absl::ConsumePrefix(&name, "openb_pod_list_");
  return std::string(name);
}

absl::StatusOr<ReplayResult> RunReplayCommand(
    const ReplayCommandOptions& options,
    const std::function<void(size_t, size_t)>& progress) {
  if (options.trace_nodes_path.empty() || options.trace_pods_paths.empty()) {
    return absl::InvalidArgumentError(
        "--replay fgd needs --trace-nodes and --trace-pods");
  }
  if (!(options.inflate > 0 && options.inflate <= 10)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--inflate %g: want a factor above 0 and at most 10", options.inflate));
  }
  const PolicyRegistry& registry = BuiltinPolicies();
  for (const std::string& name : options.policies) {
    if (!registry.Contains(name)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--policies: \"%s\" is not a registered policy (registered: %s)",
          name, absl::StrJoin(registry.RegisteredNames(), ", ")));
    }
  }
  SimulateOptions base;
  base.config_path = options.config_path;
  DS_ASSIGN_OR_RETURN(const Config config, LoadConfig(base));
  DS_ASSIGN_OR_RETURN(
      std::string nodes_text,
      input::ReadInputFile("--trace-nodes", options.trace_nodes_path));
  DS_ASSIGN_OR_RETURN(
      TraceNodes nodes,
      LoadTraceNodes(nodes_text, options.trace_nodes_path, config.device));
  std::vector<ReplayTrace> traces;
  for (const std::string& path : options.trace_pods_paths) {
    DS_ASSIGN_OR_RETURN(std::string text,
                        input::ReadInputFile("--trace-pods", path));
    DS_ASSIGN_OR_RETURN(std::vector<TracePod> pods, LoadTracePods(text, path));
    traces.push_back(ReplayTrace{TraceName(path), std::move(pods)});
  }
  std::vector<ReplayPolicy> policies;
  for (const std::string& name : options.policies) {
    ReplayPolicy policy{name, config};
    policy.config.scheduler.node_policy = name;
    policy.config.scheduler.gpu_policy = name;
    policies.push_back(std::move(policy));
  }
  return RunReplays(nodes.nodes, traces, policies, options.seeds,
                    options.inflate, progress);
}

}  // namespace deviceshare::simulate
