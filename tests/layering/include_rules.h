// File: include_rules.h
//
// The checker behind the `layering` test: reads the project's sources,
// names the component of every file (by its path) and of every header it
// includes (by the include's prefix), and reports each include that a
// layering rule forbids. The rules themselves are data (IncludeRule), given
// by the test; this file knows only the repository's layout: which folder
// and which include prefix belong to which component.
//
// Component names: core/<folder> for lib/deviceshare (core/base for
// clock.h and status_macros.h), gpu_abi, backend/hamicore (with vgpu),
// backend/mig, backend/mps, builtin, plugin/<name> (cli, kube, input,
// proto, extender, simulate, agent, scheduler-main for plugins/scheduler/
// main.cc), test/<folder> for tests/<folder>, bench, examples, and
// kUnmappedHeader for a "deviceshare/..." header of no known component.
#ifndef DEVICESHARE_TESTS_LAYERING_INCLUDE_RULES_H_
#define DEVICESHARE_TESTS_LAYERING_INCLUDE_RULES_H_

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace deviceshare::layering {

// The component of an included "deviceshare/..." header that is in no
// component of the layout table: a rule reports it, so that a new folder
// gets its line in the table instead of escaping every rule.
inline constexpr std::string_view kUnmappedHeader = "?unmapped";

// One forbidden kind of include. An include from a file of component F of a
// header of component T breaks the rule when F matches `from` and none of
// `from_except`, T matches `to` and none of `to_except`, and F != T (a
// component may always include itself). Patterns: "*" matches every
// component, "x/*" every component named "x/...", anything else itself.
struct IncludeRule {
  std::string_view name;
  std::vector<std::string_view> from;
  std::vector<std::string_view> from_except;
  std::vector<std::string_view> to;
  std::vector<std::string_view> to_except;
  std::string_view reason;
};

// A known break of a rule, tolerated until it is fixed: `file` (relative to
// the root, '/'-separated) may include `header` despite rule `rule`.
struct Exemption {
  std::string_view rule;
  std::string_view file;
  std::string_view header;
  std::string_view todo;
};

// One `#include "..."` line.
struct Include {
  std::string file;  // relative to the scanned root, '/'-separated
  int line = 0;      // 1-based
  std::string header;
};

struct Violation {
  Include include;
  std::string from;  // the component of include.file
  std::string to;    // the component of include.header
  const IncludeRule* rule = nullptr;
};

// The component of a file, from its '/'-separated path relative to the
// repository root; "" for a file in no component (docs/, a top-level file).
std::string ComponentOfFile(std::string_view path);

// The component of `header` as included by the file at `path`; "" for a
// header outside the project (third-party, system). Bare names ("x.h") and
// "./", "../" paths are resolved against the including file; inside the
// core's sources "<folder>/x.h" names core/<folder>.
std::string ComponentOfHeader(std::string_view path, std::string_view header);

// True when `component` matches `pattern` (see IncludeRule).
bool Matches(std::string_view pattern, std::string_view component);

// The quoted includes in `text`, the contents of the file at `path`.
// Angle-bracket includes and includes inside // or /* */ comments are not
// returned.
std::vector<Include> ParseIncludes(std::string_view path,
                                   std::string_view text);

// The quoted includes of every source file (.h .hh .hpp .c .cc .cpp .cu)
// under `root`, skipping folders whose name starts with "." (.git), the
// top-level folders whose name starts with "build" (build trees) and the
// folders in `skip` (relative to `root`, '/'-separated). Sorted by file.
std::vector<Include> ScanTree(const std::filesystem::path& root,
                              std::span<const std::string_view> skip = {});

// The includes that break a rule, once per (include, rule).
std::vector<Violation> FindViolations(std::span<const Include> includes,
                                      std::span<const IncludeRule> rules);

// `violations` less the exempted ones. Every exemption that matched none is
// appended to `unused` (a fixed break whose exemption should go).
std::vector<Violation> RemoveExempted(std::span<const Violation> violations,
                                      std::span<const Exemption> exemptions,
                                      std::vector<const Exemption*>* unused);

// "file:line: includes \"header\" (from -> to): rule: reason".
std::string Describe(const Violation& violation);

}  // namespace deviceshare::layering

#endif  // DEVICESHARE_TESTS_LAYERING_INCLUDE_RULES_H_
