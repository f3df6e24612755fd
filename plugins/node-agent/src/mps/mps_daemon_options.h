// File: mps/mps_daemon_options.h
//
// What MpsDaemonOptions mean for the processes: validation, the MPS
// environment the daemon and its control clients share, and the commands
// sent after each start.
#ifndef DEVICESHARE_AGENT_MPS_MPS_DAEMON_OPTIONS_H_
#define DEVICESHARE_AGENT_MPS_MPS_DAEMON_OPTIONS_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "deviceshare/agent/mps_daemon.h"

namespace deviceshare::agent::mps {

// InvalidArgument naming the first bad field and its value.
absl::Status ValidateMpsDaemonOptions(const MpsDaemonOptions& options);

// CUDA_MPS_PIPE_DIRECTORY, CUDA_MPS_LOG_DIRECTORY and CUDA_VISIBLE_DEVICES,
// as "KEY=VALUE".
std::vector<std::string> MpsEnvironment(const MpsDaemonOptions& options);

// The `set_default_*` commands for the configured defaults, in order.
std::vector<std::string> DefaultCommands(const MpsDaemonOptions& options);

}  // namespace deviceshare::agent::mps

#endif  // DEVICESHARE_AGENT_MPS_MPS_DAEMON_OPTIONS_H_
