// File: simulate/replay_command.h
//
// `simulate --replay fgd` as a library call: the Alibaba trace's nodes, one
// or more of its pod lists, the policies and seeds in, a ReplayResult out
// (render it with fgd_replay_report.h). Each policy name is used at both
// levels (scheduler.nodePolicy and gpuPolicy) over the --config file's
// settings; an unknown name is an error naming it.
//
// Errors: InvalidArgument for bad options (naming the flag and value); the
// loaders' errors for bad files.
#ifndef DEVICESHARE_SIMULATE_REPLAY_COMMAND_H_
#define DEVICESHARE_SIMULATE_REPLAY_COMMAND_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "deviceshare/simulate/fgd_replay_report.h"

namespace deviceshare::simulate {

struct ReplayCommandOptions {
  std::string trace_nodes_path;
  std::vector<std::string> trace_pods_paths;
  std::string config_path;  // optional base config
  std::vector<std::string> policies = {"binpack"};
  std::vector<uint64_t> seeds = FgdSeeds();
  double inflate = kFgdInflate;
};

// "42-51" (a range, both ends in), "42,45" (a list) or "10" (a count:
// FGD's seeds from 42). Errors name `flag` and the text.
absl::StatusOr<std::vector<uint64_t>> ParseSeeds(absl::string_view flag,
                                                 absl::string_view text);

// "openb_pod_list_gpushare40.csv" -> "gpushare40"; other names lose their
// folder and extension only.
std::string TraceName(absl::string_view path);

absl::StatusOr<ReplayResult> RunReplayCommand(
    const ReplayCommandOptions& options,
    const std::function<void(size_t, size_t)>& progress = {});

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_REPLAY_COMMAND_H_
