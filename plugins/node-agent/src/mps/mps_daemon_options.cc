#include "mps/mps_daemon_options.h"

#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace deviceshare::agent::mps {
namespace {

absl::Status Invalid(absl::string_view field, absl::string_view value,
                     absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("MpsDaemonOptions.", field, " \"", value, "\": ", why));
}

absl::Status PositiveDuration(absl::string_view field, absl::Duration d) {
  if (d > absl::ZeroDuration()) return absl::OkStatus();
  return Invalid(field, absl::FormatDuration(d), "must be positive");
}

}  // namespace

absl::Status ValidateMpsDaemonOptions(const MpsDaemonOptions& options) {
  if (options.control_binary.empty()) {
    return Invalid("control_binary", "", "must name the control binary");
  }
  if (options.mps_root.empty() || options.mps_root.front() != '/') {
    return Invalid("mps_root", options.mps_root, "must be an absolute path");
  }
  if (options.gpu_uuids.empty()) {
    return Invalid("gpu_uuids", "", "the daemon must serve at least one GPU");
  }
  for (size_t i = 0; i < options.gpu_uuids.size(); ++i) {
    const std::string& uuid = options.gpu_uuids[i];
    const bool bad_char = uuid.find_first_of(", \t\n=") != std::string::npos;
    if (uuid.empty() || bad_char) {
      return Invalid(absl::StrCat("gpu_uuids[", i, "]"), uuid,
                     "must be a non-empty uuid without commas or spaces");
    }
  }
  if (options.default_pinned_memory_mib.has_value() &&
      *options.default_pinned_memory_mib <= 0) {
    return Invalid("default_pinned_memory_mib",
                   absl::StrCat(*options.default_pinned_memory_mib),
                   "must be positive (MiB)");
  }
  if (options.default_active_thread_percentage.has_value() &&
      (*options.default_active_thread_percentage < 1 ||
       *options.default_active_thread_percentage > 100)) {
    return Invalid("default_active_thread_percentage",
                   absl::StrCat(*options.default_active_thread_percentage),
                   "must be 1..100");
  }
  for (const auto& [field, value] :
       {std::pair<absl::string_view, absl::Duration>{"initial_backoff",
                                                     options.initial_backoff},
        {"max_backoff", options.max_backoff},
        {"ready_timeout", options.ready_timeout},
        {"stop_grace", options.stop_grace},
        {"command_timeout", options.command_timeout}}) {
    absl::Status status = PositiveDuration(field, value);
    if (!status.ok()) return status;
  }
  if (options.max_backoff < options.initial_backoff) {
    return Invalid(
        "max_backoff", absl::FormatDuration(options.max_backoff),
        absl::StrCat("must be at least initial_backoff (",
                     absl::FormatDuration(options.initial_backoff), ")"));
  }
  return absl::OkStatus();
}

std::vector<std::string> MpsEnvironment(const MpsDaemonOptions& options) {
  return {
      absl::StrCat("CUDA_MPS_PIPE_DIRECTORY=", options.mps_root, "/pipe"),
      absl::StrCat("CUDA_MPS_LOG_DIRECTORY=", options.mps_root, "/log"),
      absl::StrCat("CUDA_VISIBLE_DEVICES=",
                   absl::StrJoin(options.gpu_uuids, ",")),
  };
}

std::vector<std::string> DefaultCommands(const MpsDaemonOptions& options) {
  std::vector<std::string> commands;
  if (options.default_pinned_memory_mib.has_value()) {
    // MPS numbers the devices 0.. in CUDA_VISIBLE_DEVICES order.
    for (size_t i = 0; i < options.gpu_uuids.size(); ++i) {
      commands.push_back(absl::StrCat("set_default_device_pinned_mem_limit ", i,
                                      " ", *options.default_pinned_memory_mib,
                                      "M"));
    }
  }
  if (options.default_active_thread_percentage.has_value()) {
    commands.push_back(absl::StrCat("set_default_active_thread_percentage ",
                                    *options.default_active_thread_percentage));
  }
  return commands;
}

}  // namespace deviceshare::agent::mps
