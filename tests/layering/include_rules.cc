// File: include_rules.cc
//
// The layout tables (folder -> component, include prefix -> component), the
// include scanner and the rule matcher of the `layering` test.
#include "include_rules.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <sstream>
#include <tuple>

namespace deviceshare::layering {
namespace {

struct PrefixComponent {
  std::string_view prefix;  // a folder ("x/") or a file
  std::string_view component;
};

// Where each component's files live, relative to the repository root. The
// longest matching prefix wins. lib/deviceshare/ and tests/ are split by
// their subfolders in ComponentOfFile. A future subfolder of
// plugins/scheduler/src/ counts as simulate until it gets its own line.
constexpr PrefixComponent kFolders[] = {
    {"lib/deviceshare/", "core/base"},
    {"lib/gpu_abi/", "gpu_abi"},
    {"lib/hamicore/", "backend/hamicore"},  // vgpu/ (libvgpu.so) included
    {"lib/mig/", "backend/mig"},
    {"lib/mps/", "backend/mps"},
    {"lib/builtin/", "builtin"},
    {"plugins/cli/", "plugin/cli"},
    {"plugins/kube/", "plugin/kube"},
    {"plugins/trust/", "plugin/trust"},
    {"plugins/input/", "plugin/input"},
    {"plugins/capi/", "plugin/capi"},
    {"plugins/proto/", "plugin/proto"},
    {"plugins/node-agent/", "plugin/agent"},
    {"plugins/scheduler/main.cc", "plugin/scheduler-main"},
    {"plugins/scheduler/include/deviceshare/extender/", "plugin/extender"},
    {"plugins/scheduler/src/extender/", "plugin/extender"},
    {"plugins/scheduler/src/extender_wire/", "plugin/extender"},
    {"plugins/scheduler/include/deviceshare/simulate/", "plugin/simulate"},
    {"plugins/scheduler/src/", "plugin/simulate"},
    {"bench/", "bench"},
    {"examples/", "examples"},
};

// Which component an include path names. Again the longest prefix wins.
constexpr PrefixComponent kHeaders[] = {
    {"deviceshare/clock.h", "core/base"},
    {"deviceshare/status_macros.h", "core/base"},
    {"deviceshare/json_text.h", "core/base"},
    {"deviceshare/model/", "core/model"},
    {"deviceshare/codec/", "core/codec"},
    {"deviceshare/config/", "core/config"},
    {"deviceshare/policy/", "core/policy"},
    {"deviceshare/backend/", "core/backend"},
    {"deviceshare/dra/", "core/dra"},
    {"deviceshare/k8s/", "core/k8s"},
    {"deviceshare/scheduler/", "core/scheduler"},
    {"deviceshare/admission/", "core/admission"},
    {"deviceshare/preemption/", "core/preemption"},
    {"deviceshare/defrag/", "core/defrag"},
    {"gpu_abi/", "gpu_abi"},
    {"deviceshare/hamicore/", "backend/hamicore"},
    {"deviceshare/mig/", "backend/mig"},
    {"deviceshare/mps/", "backend/mps"},
    {"deviceshare/builtin_backends.h", "builtin"},
    {"deviceshare/cli/", "plugin/cli"},
    {"deviceshare/kube/", "plugin/kube"},
    {"deviceshare/trust/", "plugin/trust"},
    {"deviceshare/input/", "plugin/input"},
    {"deviceshare/c/", "plugin/capi"},
    {"deviceplugin/v1beta1/", "plugin/proto"},
    {"dra/v1/", "plugin/proto"},
    {"dra/v1beta1/", "plugin/proto"},
    {"pluginregistration/v1/", "plugin/proto"},
    {"deviceshare/extender/", "plugin/extender"},
    {"deviceshare/simulate/", "plugin/simulate"},
    {"deviceshare/agent/", "plugin/agent"},
    {"testing/", "test/testing"},
};

constexpr std::string_view kCoreRoot = "lib/deviceshare/";
constexpr std::string_view kCoreSources = "lib/deviceshare/src/";
constexpr std::string_view kCoreHeaders =
    "lib/deviceshare/include/deviceshare/";
constexpr std::string_view kTestsRoot = "tests/";

constexpr std::string_view kSourceExtensions[] = {".h",  ".hh",  ".hpp", ".c",
                                                  ".cc", ".cpp", ".cu"};

// The component of the longest prefix of `path` in `table`; "" if none.
std::string_view LongestPrefix(std::span<const PrefixComponent> table,
                               std::string_view path) {
  const PrefixComponent* best = nullptr;
  for (const PrefixComponent& entry : table) {
    if (path.starts_with(entry.prefix) &&
        (best == nullptr || entry.prefix.size() > best->prefix.size())) {
      best = &entry;
    }
  }
  return best == nullptr ? std::string_view() : best->component;
}

// "x" for a path "<root>x/...", "" when `path` has no subfolder of `root`.
std::string_view SubfolderOf(std::string_view root, std::string_view path) {
  if (!path.starts_with(root)) return {};
  std::string_view rest = path.substr(root.size());
  const size_t slash = rest.find('/');
  return slash == std::string_view::npos ? std::string_view()
                                         : rest.substr(0, slash);
}

// The code of one line: // comments, /* */ comments (tracked across lines
// in `in_block`) removed; string literals kept whole.
std::string StripComments(std::string_view line, bool& in_block) {
  std::string code;
  for (size_t i = 0; i < line.size(); ++i) {
    if (in_block) {
      if (line.compare(i, 2, "*/") == 0) {
        in_block = false;
        ++i;
      }
    } else if (line.compare(i, 2, "/*") == 0) {
      in_block = true;
      ++i;
      code += ' ';
    } else if (line.compare(i, 2, "//") == 0) {
      break;
    } else if (line[i] == '"') {
      const size_t close = line.find('"', i + 1);
      const size_t end = close == std::string_view::npos ? line.size() : close;
      code.append(line.substr(i, end - i + 1));
      i = end;
    } else {
      code += line[i];
    }
  }
  return code;
}

// Drops leading blanks and then `word`; false when `code` does not start
// with `word` after the blanks.
bool Consume(std::string_view& code, std::string_view word) {
  const size_t start = code.find_first_not_of(" \t");
  if (start == std::string_view::npos) return false;
  code.remove_prefix(start);
  if (!code.starts_with(word)) return false;
  code.remove_prefix(word.size());
  return true;
}

// The quoted header of an `#include "..."` line; "" for any other line.
std::string_view QuotedInclude(std::string_view code) {
  if (!Consume(code, "#") || !Consume(code, "include") ||
      !Consume(code, "\"")) {
    return {};
  }
  const size_t close = code.find('"');
  return close == std::string_view::npos ? std::string_view()
                                         : code.substr(0, close);
}

bool IsSourceFile(const std::filesystem::path& file) {
  const std::string extension = file.extension().string();
  return std::find(std::begin(kSourceExtensions), std::end(kSourceExtensions),
                   extension) != std::end(kSourceExtensions);
}

bool SkipFolder(const std::filesystem::path& folder, std::string_view relative,
                std::span<const std::string_view> skip) {
  const std::string name = folder.filename().string();
  const bool top_level = relative.find('/') == std::string_view::npos;
  return name.starts_with(".") || (top_level && name.starts_with("build")) ||
         std::find(skip.begin(), skip.end(), relative) != skip.end();
}

bool MatchesAny(std::span<const std::string_view> patterns,
                std::string_view component) {
  return std::any_of(
      patterns.begin(), patterns.end(),
      [&](std::string_view pattern) { return Matches(pattern, component); });
}

bool Breaks(const IncludeRule& rule, std::string_view from,
            std::string_view to) {
  return MatchesAny(rule.from, from) && !MatchesAny(rule.from_except, from) &&
         MatchesAny(rule.to, to) && !MatchesAny(rule.to_except, to);
}

}  // namespace

std::string ComponentOfFile(std::string_view path) {
  if (std::string_view test = SubfolderOf(kTestsRoot, path); !test.empty()) {
    return "test/" + std::string(test);
  }
  if (path.starts_with(kCoreRoot)) {
    std::string_view folder = SubfolderOf(kCoreSources, path);
    if (folder.empty()) folder = SubfolderOf(kCoreHeaders, path);
    if (!folder.empty()) return "core/" + std::string(folder);
  }
  return std::string(LongestPrefix(kFolders, path));
}

std::string ComponentOfHeader(std::string_view path, std::string_view header) {
  if (std::string_view named = LongestPrefix(kHeaders, header);
      !named.empty()) {
    return std::string(named);
  }
  if (header.find('/') == std::string_view::npos || header.starts_with("./") ||
      header.starts_with("../")) {
    const std::string resolved =
        (std::filesystem::path(path).parent_path() / header)
            .lexically_normal()
            .generic_string();
    if (resolved.starts_with("../")) return {};
    return ComponentOfFile(resolved);
  }
  // The core's sources see lib/deviceshare/src/ on their include path:
  // "config/x.h" is the internal header src/config/x.h.
  if (path.starts_with(kCoreSources)) {
    const std::string as_public = "deviceshare/" + std::string(header);
    std::string_view named = LongestPrefix(kHeaders, as_public);
    if (named.starts_with("core/")) return std::string(named);
  }
  if (header.starts_with("deviceshare/")) return std::string(kUnmappedHeader);
  return {};
}

bool Matches(std::string_view pattern, std::string_view component) {
  if (pattern == "*") return true;
  if (pattern.ends_with("/*")) {
    return component.starts_with(pattern.substr(0, pattern.size() - 1));
  }
  return pattern == component;
}

std::vector<Include> ParseIncludes(std::string_view path,
                                   std::string_view text) {
  std::vector<Include> includes;
  bool in_block = false;
  int number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    ++number;
    const std::string code = StripComments(line, in_block);
    if (std::string_view header = QuotedInclude(code); !header.empty()) {
      includes.push_back(
          Include{std::string(path), number, std::string(header)});
    }
  }
  return includes;
}

std::vector<Include> ScanTree(const std::filesystem::path& root,
                              std::span<const std::string_view> skip) {
  namespace fs = std::filesystem;
  std::vector<Include> includes;
  for (auto it = fs::recursive_directory_iterator(root);
       it != fs::recursive_directory_iterator(); ++it) {
    const std::string relative =
        it->path().lexically_relative(root).generic_string();
    if (it->is_directory()) {
      if (SkipFolder(it->path(), relative, skip))
        it.disable_recursion_pending();
      continue;
    }
    if (!it->is_regular_file() || !IsSourceFile(it->path())) continue;
    std::ifstream in(it->path(), std::ios::binary);
    std::stringstream text;
    text << in.rdbuf();
    std::vector<Include> found = ParseIncludes(relative, text.str());
    includes.insert(includes.end(), found.begin(), found.end());
  }
  std::stable_sort(includes.begin(), includes.end(),
                   [](const Include& a, const Include& b) {
                     return std::tie(a.file, a.line) < std::tie(b.file, b.line);
                   });
  return includes;
}

std::vector<Violation> FindViolations(std::span<const Include> includes,
                                      std::span<const IncludeRule> rules) {
  std::vector<Violation> violations;
  for (const Include& include : includes) {
    const std::string from = ComponentOfFile(include.file);
    const std::string to = ComponentOfHeader(include.file, include.header);
    if (to.empty() || from == to) continue;
    for (const IncludeRule& rule : rules) {
      if (Breaks(rule, from, to)) {
        violations.push_back(Violation{include, from, to, &rule});
      }
    }
  }
  return violations;
}

std::vector<Violation> RemoveExempted(std::span<const Violation> violations,
                                      std::span<const Exemption> exemptions,
                                      std::vector<const Exemption*>* unused) {
  std::vector<bool> used(exemptions.size(), false);
  std::vector<Violation> kept;
  for (const Violation& violation : violations) {
    bool exempt = false;
    for (size_t i = 0; i < exemptions.size(); ++i) {
      const Exemption& exemption = exemptions[i];
      if (exemption.rule == violation.rule->name &&
          exemption.file == violation.include.file &&
          exemption.header == violation.include.header) {
        used[i] = exempt = true;
      }
    }
    if (!exempt) kept.push_back(violation);
  }
  for (size_t i = 0; i < exemptions.size(); ++i) {
    if (!used[i] && unused != nullptr) unused->push_back(&exemptions[i]);
  }
  return kept;
}

std::string Describe(const Violation& violation) {
  std::ostringstream out;
  out << violation.include.file << ":" << violation.include.line
      << ": includes \"" << violation.include.header << "\" ("
      << (violation.from.empty() ? "?outside" : violation.from) << " -> "
      << violation.to << "): breaks " << violation.rule->name << ": "
      << violation.rule->reason;
  return out.str();
}

}  // namespace deviceshare::layering
