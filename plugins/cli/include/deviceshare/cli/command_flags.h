// File: cli/command_flags.h
//
// The command-line conventions both executables share: `<program> <command>
// [flags]`, where the flags after the command are absl flags written with
// dashes or underscores (--trace-nodes, --trace_nodes), as `--flag=value`
// or `--flag value`, and each command accepts only its own list. Errors are
// one line naming the flag and the value.
#ifndef DEVICESHARE_CLI_COMMAND_FLAGS_H_
#define DEVICESHARE_CLI_COMMAND_FLAGS_H_

#include <optional>
#include <set>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace deviceshare::cli {

// A flag a command accepts: its absl name (underscores) and whether it may
// be given without a value.
struct FlagSpec {
  const char* name;
  bool is_bool;
};

// Parses argv[2..] into the absl flags. Fills `given` with the dashed names
// of the flags given; returns an error message, or nullopt.
std::optional<std::string> ParseCommandFlags(int argc, char** argv,
                                             absl::Span<const FlagSpec> flags,
                                             std::set<std::string>& given);

// --help, -help, -h, help, --helpfull.
bool IsHelp(absl::string_view arg);

}  // namespace deviceshare::cli

#endif  // DEVICESHARE_CLI_COMMAND_FLAGS_H_
