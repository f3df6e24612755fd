#include "deviceshare/cli/command_flags.h"

#include "absl/flags/reflection.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

namespace deviceshare::cli {

std::optional<std::string> ParseCommandFlags(int argc, char** argv,
                                             absl::Span<const FlagSpec> flags,
                                             std::set<std::string>& given) {
  for (int i = 2; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg.size() < 2 || arg[0] != '-') {
      return absl::StrCat("unexpected argument \"", arg,
                          "\" (flags start with --; see --help)");
    }
    arg.remove_prefix(arg[1] == '-' ? 2 : 1);
    std::optional<std::string> value;
    if (size_t eq = arg.find('='); eq != absl::string_view::npos) {
      value = std::string(arg.substr(eq + 1));
      arg = arg.substr(0, eq);
    }
    const std::string name = absl::StrReplaceAll(arg, {{"-", "_"}});
    const std::string dashed = absl::StrReplaceAll(arg, {{"_", "-"}});
    const FlagSpec* spec = nullptr;
    for (const FlagSpec& f : flags) {
      if (name == f.name) spec = &f;
    }
    if (spec == nullptr) {
      return absl::StrCat("unknown flag --", dashed, " (see --help)");
    }
    if (!value) {
      if (spec->is_bool) {
        value = "true";
      } else if (i + 1 < argc) {
        value = argv[++i];
      } else {
        return absl::StrCat("--", dashed, " needs a value");
      }
    }
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    std::string error;
    if (flag == nullptr || !flag->ParseFrom(*value, &error)) {
      return absl::StrCat("--", dashed, "=", *value, ": ", error);
    }
    given.insert(dashed);
  }
  return std::nullopt;
}

bool IsHelp(absl::string_view arg) {
  return arg == "--help" || arg == "-help" || arg == "-h" || arg == "help" ||
         arg == "--helpfull";
}

}  // namespace deviceshare::cli
