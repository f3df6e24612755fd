// File: layering_test.cc
//
// The layering of the repository, checked on its sources: kRules below is
// the table of forbidden includes (which component may not include which),
// kExemptions the known breaks still to fix. The test scans the real tree
// (DEVICESHARE_SOURCE_DIR) and fails on any include the table forbids,
// naming file, line, rule and reason; it also scans fixture/, a small tree
// shaped like the real one with deliberate bad includes, to show that each
// rule fires (and that allowed includes do not). Components and the layout
// that names them: include_rules.h.
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "include_rules.h"

namespace deviceshare::layering {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// The forbidden includes. A row forbids a file of a `from` component (but
// none of `from_except`) to include a header of a `to` component (but none
// of `to_except`); a component may always include itself.
// clang-format off
const std::vector<IncludeRule> kRules = {
    // 1. The core builds alone.
    {.name = "core-builds-alone",
     .from = {"core/*"}, .to = {"*"}, .to_except = {"core/*"},
     .reason = "the core (lib/deviceshare) is the bottom layer every backend "
               "and plugin builds on; it links no backend, plugin or gpu_abi"},

    // 2. Inside the core the folders form a DAG:
    //    model <- codec <- config <- policy <- backend, k8s <- scheduler;
    //    model <- dra <- backend.
    //    core/base is clock.h and status_macros.h; scheduler may include
    //    every core folder, so it has no row.
    {.name = "core-dag",
     .from = {"core/base"}, .to = {"core/*"},
     .reason = "clock.h and status_macros.h sit below every core folder"},
    {.name = "core-dag",
     .from = {"core/model"}, .to = {"core/*"}, .to_except = {"core/base"},
     .reason = "model is the vocabulary of every layer; it depends on none "
               "(in particular model must not include backend)"},
    {.name = "core-dag",
     .from = {"core/codec"}, .to = {"core/*"},
     .to_except = {"core/base", "core/model"},
     .reason = "codecs turn model values into annotation strings and back; "
               "config reads YAML through codec, not the reverse"},
    {.name = "core-dag",
     .from = {"core/config"}, .to = {"core/*"},
     .to_except = {"core/base", "core/model", "core/codec"},
     .reason = "config parses YAML (codec) into model terms; policies and "
               "backends read config, not the reverse"},
    {.name = "core-dag",
     .from = {"core/policy"}, .to = {"core/*"},
     .to_except = {"core/base", "core/model", "core/config"},
     .reason = "a policy ranks candidates by model and config alone; it "
               "knows no backend, codec or Kubernetes object"},
    {.name = "core-dag",
     .from = {"core/dra"}, .to = {"core/*"},
     .to_except = {"core/base", "core/model"},
     .reason = "DRA's ResourceSlice and claim types are value types over "
               "model units; backends describe their devices in them"},
    {.name = "core-dag",
     .from = {"core/backend"}, .to = {"core/*"},
     .to_except = {"core/base", "core/model", "core/config", "core/policy",
                   "core/dra"},
     .reason = "the backend interface fits model requests under a config and "
               "a policy; it parses no pod and encodes no annotation"},
    {.name = "core-dag",
     .from = {"core/k8s"}, .to = {"core/*"},
     .to_except = {"core/base", "core/model", "core/codec", "core/config",
                   "core/dra"},
     .reason = "the pod and node parsers decode annotations (codec) and a "
               "pod's DRA claim references (dra) under a config into model "
               "requests; they never schedule"},
    {.name = "core-dag",
     .from = {"core/admission"}, .to = {"core/*"},
     .to_except = {"core/base", "core/model", "core/codec", "core/config",
                   "core/k8s"},
     .reason = "the admission webhook's decision rewrites a Pod object by "
               "the config's resource names and checks it with the pod "
               "parser (k8s); it never schedules"},

    {.name = "core-dag",
     .from = {"core/*"}, .from_except = {"core/defrag"},
     .to = {"core/defrag"},
     .reason = "the defragmentation planner sits on the victim search and "
               "the decision path; nothing below it plans moves"},

    // 3. Backends stand side by side on the core.
    {.name = "backends-only-core",
     .from = {"backend/*"}, .to = {"*"}, .to_except = {"core/*", "gpu_abi"},
     .reason = "a backend (hami-core with libvgpu.so, mig, mps) implements "
               "the core's Backend on gpu_abi; it must not know a sibling, "
               "builtin (the list of all backends) or a plugin"},

    // 4. Libraries never reach into the programs that use them.
    {.name = "libraries-below-plugins",
     .from = {"core/*", "gpu_abi", "backend/*", "builtin"},
     .to = {"plugin/*"},
     .reason = "plugins (CLI, Kubernetes, files, extender, simulate, agent) "
               "use the libraries under lib/; the reverse would drag a "
               "plugin into every other one"},

    // 5. simulate is a leaf.
    {.name = "simulate-private",
     .from = {"*"},
     .from_except = {"plugin/simulate", "plugin/scheduler-main",
                     "test/simulate", "test/fuzz"},
     .to = {"plugin/simulate"},
     .reason = "simulate is the offline what-if tool: only its own sources, "
               "the scheduler executable, tests/simulate and the fuzzers "
               "of its file readers use it; the extender, the agent, bench "
               "and the shared test doubles must not depend on it"},

    // 6. The C API stands apart: it is for hosts in other languages.
    {.name = "capi-apart",
     .from = {"plugin/capi"}, .to = {"plugin/*"},
     .to_except = {"plugin/capi", "plugin/input"},
     .reason = "libdeviceshare_c.so carries the core, the backends and the "
               "input readers, nothing else: no HTTP, gRPC, NVML or "
               "Kubernetes client in a library other schedulers load"},
    {.name = "capi-apart",
     .from = {"plugin/*"}, .from_except = {"plugin/capi"},
     .to = {"plugin/capi"},
     .reason = "the C API wraps the library for hosts that cannot link C++; "
               "a C++ plugin uses the library itself"},

    // The table covers every deviceshare/ header.
    {.name = "known-headers",
     .from = {"*"}, .to = {std::string_view(kUnmappedHeader)},
     .reason = "every deviceshare/ include prefix needs its line in "
               "include_rules.cc's kHeaders, or no rule would see it"},
};
// clang-format on

// Known breaks of kRules in the real tree, each to be fixed and then
// removed (the test fails on an exemption that no longer matches).
const std::vector<Exemption> kExemptions = {};

constexpr std::string_view kFixture = "tests/layering/fixture";

std::filesystem::path SourceDir() { return DEVICESHARE_SOURCE_DIR; }

// "file:line header rule" of each violation, to compare with expectations.
std::vector<std::string> Summaries(std::span<const Violation> violations) {
  std::vector<std::string> out;
  for (const Violation& v : violations) {
    out.push_back(v.include.file + ":" + std::to_string(v.include.line) + " " +
                  v.include.header + " " + std::string(v.rule->name));
  }
  return out;
}

TEST(LayeringTest, RepositoryKeepsTheLayers) {
  const std::string_view skip[] = {kFixture};
  const std::vector<Include> includes = ScanTree(SourceDir(), skip);
  // A wrong root would find nothing and pass: the tree has thousands.
  ASSERT_GT(includes.size(), 1000u) << SourceDir();

  std::vector<const Exemption*> unused;
  const std::vector<Violation> violations =
      RemoveExempted(FindViolations(includes, kRules), kExemptions, &unused);
  for (const Violation& violation : violations) {
    ADD_FAILURE() << Describe(violation);
  }
  for (const Exemption* exemption : unused) {
    ADD_FAILURE() << "exemption no longer needed, remove it: "
                  << exemption->file << " may include " << exemption->header
                  << " (" << exemption->rule << ")";
  }
  EXPECT_THAT(Summaries(violations), IsEmpty());
}

TEST(LayeringTest, FixtureBreaksEachRule) {
  const std::vector<Include> includes =
      ScanTree(SourceDir() / std::filesystem::path(kFixture));
  const std::vector<Violation> violations = FindViolations(includes, kRules);
  std::string described;
  for (const Violation& violation : violations) {
    described += Describe(violation) + "\n";
  }
  EXPECT_THAT(
      Summaries(violations),
      ElementsAre(
          "lib/deviceshare/src/codec/reads_config.cc:7 "
          "config/mig_geometry_parser.h core-dag",
          "lib/deviceshare/src/model/bad.cc:15 deviceshare/backend/fit.h "
          "core-dag",
          "lib/deviceshare/src/scheduler/uses_mig.cc:9 "
          "deviceshare/mig/mig_backend.h core-builds-alone",
          "lib/hamicore/vgpu/src/interposer/hook.cc:7 "
          "deviceshare/mps/mps_backend.h backends-only-core",
          "lib/mig/src/bad.cc:10 deviceshare/builtin_backends.h "
          "backends-only-core",
          "lib/mig/src/bad.cc:11 deviceshare/extender/extender.h "
          "backends-only-core",
          "lib/mig/src/bad.cc:11 deviceshare/extender/extender.h "
          "libraries-below-plugins",
          "plugins/capi/src/bad.cc:9 deviceshare/extender/extender.h "
          "capi-apart",
          "plugins/cli/src/unknown.cc:6 deviceshare/nowhere/x.h "
          "known-headers",
          "plugins/kube/src/uses_capi.cc:7 deviceshare/c/deviceshare.h "
          "capi-apart",
          "plugins/node-agent/src/bad.cc:10 deviceshare/simulate/simulate.h "
          "simulate-private"))
      << described;
}

TEST(LayeringTest, DescribeNamesFileRuleAndReason) {
  const IncludeRule rule = {.name = "core-dag", .reason = "why"};
  const Violation violation = {.include = {"lib/deviceshare/src/model/units.cc",
                                           3, "deviceshare/backend/fit.h"},
                               .from = "core/model",
                               .to = "core/backend",
                               .rule = &rule};
  EXPECT_EQ(Describe(violation),
            "lib/deviceshare/src/model/units.cc:3: includes "
            "\"deviceshare/backend/fit.h\" (core/model -> core/backend): "
            "breaks core-dag: why");
}

TEST(LayeringTest, ExemptionsRemoveOnlyTheirInclude) {
  const Include a = {"lib/x.cc", 1, "deviceshare/mig/a.h"};
  const Include b = {"lib/x.cc", 2, "deviceshare/mig/b.h"};
  const std::vector<Violation> violations = {{a, "", "", &kRules[0]},
                                             {b, "", "", &kRules[0]}};
  const std::vector<Exemption> exemptions = {
      {kRules[0].name, "lib/x.cc", "deviceshare/mig/b.h", "TODO"},
      {kRules[0].name, "lib/y.cc", "deviceshare/mig/b.h", "TODO"}};
  std::vector<const Exemption*> unused;
  EXPECT_THAT(Summaries(RemoveExempted(violations, exemptions, &unused)),
              ElementsAre("lib/x.cc:1 deviceshare/mig/a.h core-builds-alone"));
  ASSERT_EQ(unused.size(), 1u);
  EXPECT_EQ(unused[0]->file, "lib/y.cc");
}

TEST(LayeringTest, ParseIncludesSkipsCommentsAndSystemHeaders) {
  const std::vector<Include> includes = ParseIncludes("a.cc",
                                                      "#include <vector>\n"
                                                      "#include \"a.h\"\n"
                                                      "// #include \"b.h\"\n"
                                                      "/* #include \"c.h\"\n"
                                                      "#include \"d.h\" */\n"
                                                      "  #  include \"e.h\"\n"
                                                      "#include \"f.h\"  // x\n"
                                                      "int x = 1; /* y */\n");
  std::vector<std::string> found;
  for (const Include& include : includes) {
    found.push_back(std::to_string(include.line) + " " + include.header);
  }
  EXPECT_THAT(found, ElementsAre("2 a.h", "6 e.h", "7 f.h"));
}

TEST(LayeringTest, FilesMapToComponentsByPath) {
  EXPECT_EQ(ComponentOfFile("lib/deviceshare/src/model/units.cc"),
            "core/model");
  EXPECT_EQ(ComponentOfFile("lib/deviceshare/include/deviceshare/k8s/x.h"),
            "core/k8s");
  EXPECT_EQ(ComponentOfFile("lib/deviceshare/src/clock.cc"), "core/base");
  EXPECT_EQ(ComponentOfFile("lib/hamicore/vgpu/src/interposer/charge.cc"),
            "backend/hamicore");
  EXPECT_EQ(ComponentOfFile("plugins/scheduler/src/simulate.cc"),
            "plugin/simulate");
  EXPECT_EQ(ComponentOfFile("plugins/scheduler/src/extender_wire/x.cc"),
            "plugin/extender");
  EXPECT_EQ(ComponentOfFile("plugins/scheduler/main.cc"),
            "plugin/scheduler-main");
  EXPECT_EQ(ComponentOfFile("plugins/node-agent/main.cc"), "plugin/agent");
  EXPECT_EQ(ComponentOfFile("plugins/capi/src/c_status.cc"), "plugin/capi");
  EXPECT_EQ(ComponentOfFile("tests/simulate/step_api_test.cc"),
            "test/simulate");
  EXPECT_EQ(ComponentOfFile("docs/x.cc"), "");
}

TEST(LayeringTest, HeadersMapToComponentsByPrefix) {
  const std::string core = "lib/deviceshare/src/codec/hami_codec.cc";
  EXPECT_EQ(ComponentOfHeader(core, "deviceshare/model/units.h"), "core/model");
  EXPECT_EQ(ComponentOfHeader(core, "config/mig_geometry_parser.h"),
            "core/config");
  EXPECT_EQ(ComponentOfHeader(core, "register_entry.h"), "core/codec");
  EXPECT_EQ(ComponentOfHeader(core, "../backend/x.h"), "core/backend");
  EXPECT_EQ(ComponentOfHeader(core, "absl/strings/str_cat.h"), "");
  EXPECT_EQ(ComponentOfHeader("plugins/node-agent/src/nvml/a.cc",
                              "nvml/nvml_library.h"),
            "");  // the agent's own include path: not a project prefix
  EXPECT_EQ(ComponentOfHeader("tests/x/a.cc", "deviceplugin/v1beta1/api.h"),
            "plugin/proto");
  EXPECT_EQ(ComponentOfHeader("tests/capi/a.c", "deviceshare/c/deviceshare.h"),
            "plugin/capi");
  EXPECT_EQ(ComponentOfHeader("tests/x/a.cc", "deviceshare/nowhere/x.h"),
            kUnmappedHeader);
}

// The two tables of include_rules.cc agree: each public header, included by
// its path under include/, names the component its file is in.
TEST(LayeringTest, EveryPublicHeaderMapsToItsOwnComponent) {
  namespace fs = std::filesystem;
  int headers = 0;
  for (const char* top : {"lib", "plugins"}) {
    for (const fs::directory_entry& library :
         fs::directory_iterator(SourceDir() / top)) {
      const fs::path include = library.path() / "include";
      if (!fs::is_directory(include)) continue;
      for (const fs::directory_entry& file :
           fs::recursive_directory_iterator(include)) {
        if (!file.is_regular_file()) continue;
        const std::string path =
            file.path().lexically_relative(SourceDir()).generic_string();
        const std::string header =
            file.path().lexically_relative(include).generic_string();
        EXPECT_EQ(ComponentOfHeader("tests/x/a.cc", header),
                  ComponentOfFile(path))
            << path;
        ++headers;
      }
    }
  }
  EXPECT_GT(headers, 100);
}

// Every source file of a library or plugin is in a component, so none
// escapes the rules.
TEST(LayeringTest, EverySourceUnderLibAndPluginsHasAComponent) {
  const std::string_view skip[] = {kFixture};
  for (const Include& include : ScanTree(SourceDir(), skip)) {
    if (include.file.starts_with("lib/") ||
        include.file.starts_with("plugins/")) {
      EXPECT_NE(ComponentOfFile(include.file), "") << include.file;
    }
  }
}

}  // namespace
}  // namespace deviceshare::layering
