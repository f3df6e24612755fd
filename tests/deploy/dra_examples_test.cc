// examples/dra (claims users copy) and deploy/dra (the node agent
// as a DRA driver): every document of every file parses, and the shapes a
// user would otherwise only learn from the API server hold. Requests are
// resource.k8s.io/v1's (name + exactly), name a DeviceClass that
// deviceclasses.yaml defines and capacities the driver publishes, in valid
// quantities; pods name claims that exist; the DaemonSet runs `serve --dra`
// with kubelet's plugin directories mounted; the ClusterRole writes
// ResourceSlices and reads ResourceClaims; the kustomization lists what is
// there. A file the READMEs promise that is missing fails every test.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "deviceshare/codec/yaml_json.h"
#include "deviceshare/model/units.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

namespace fs = std::filesystem;
using ::nlohmann::json;
using ::testing::UnorderedElementsAreArray;

const fs::path kExamplesDir = DEVICESHARE_EXAMPLES_DIR;
const fs::path kClaimsDir = kExamplesDir / "dra";
const fs::path kDeployDir = DEVICESHARE_DEPLOY_DIR;
const fs::path kDeployDraDir = kDeployDir / "dra";

// The driver name the DeviceClasses select (--dra-driver-name's default).
constexpr char kDriver[] = "gpu.deviceshare.io";
constexpr char kAgent[] = "deviceshare-node-agent";

// The files the READMEs promise. Each one missing is a failure, not a skip.
const std::vector<std::string> kClaimFiles = {
    "README.md", "claim-template.yaml", "one-gpu-claim.yaml",
    "two-gpu-claim.yaml"};
const std::vector<std::string> kDeployDraFiles = {
    "configmap.yaml", "deviceclasses.yaml", "kustomization.yaml",
    "node-agent-daemonset.yaml", "node-agent-rbac.yaml"};

// apiVersion -> the kinds these files may hold.
const std::map<std::string, std::set<std::string>> kKnownKinds = {
    {"v1", {"Pod", "ServiceAccount", "ConfigMap"}},
    {"apps/v1", {"Deployment", "DaemonSet", "StatefulSet", "ReplicaSet"}},
    {"batch/v1", {"Job"}},
    {"rbac.authorization.k8s.io/v1",
     {"ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"}},
    {"resource.k8s.io/v1",
     {"DeviceClass", "ResourceClaim", "ResourceClaimTemplate"}},
    {"kustomize.config.k8s.io/v1beta1", {"Kustomization"}},
};
const std::set<std::string> kClusterScoped = {
    "DeviceClass", "ClusterRole", "ClusterRoleBinding", "Kustomization"};
const std::set<std::string> kWorkloads = {
    "Pod", "Deployment", "DaemonSet", "StatefulSet", "ReplicaSet", "Job"};

// What the driver publishes (deploy/README.md, "What the driver
// publishes"): attributes by domain, capacities by DeviceClass. `shares`
// (one per claim, up to the split count) is the driver's own, not HAMi's.
const std::map<std::string, std::set<std::string>> kAttributes = {
    {kDriver,
     {"mode", "type", "uuid", "productName", "architecture",
      "cudaComputeCapability", "driverVersion", "index", "numa", "profile",
      "parentUUID", "placementStart"}},
    {"resource.kubernetes.io", {"pcieRoot"}},
};
const std::set<std::string> kModes = {"hami-core", "mps", "mig"};
const std::map<std::string, std::set<std::string>> kCapacitiesByClass = {
    {"gpu.deviceshare.io", {"memory", "cores", "shares", "multiprocessors"}},
    {"hami-core.gpu.deviceshare.io", {"memory", "cores", "shares"}},
    {"mps.gpu.deviceshare.io", {"memory", "cores", "shares"}},
    {"mig.gpu.deviceshare.io", {"memory", "multiprocessors"}},
};

// serve's flags: the DRA ones and those of the device-plugin agent. The two
// booleans may stand alone; every other flag is written --name=value.
const std::set<std::string> kBooleanFlags = {"--dra", "--device-plugin"};
const std::set<std::string> kServeFlags = {"--dra",
                                           "--device-plugin",
                                           "--dra-driver-name",
                                           "--dra-plugin-dir",
                                           "--dra-registry-dir",
                                           "--cdi-dir",
                                           "--node-name",
                                           "--kubeconfig",
                                           "--inventory",
                                           "--device-plugin-dir",
                                           "--config",
                                           "--dialect",
                                           "--state-dir",
                                           "--hook-path",
                                           "--vgpu-library",
                                           "--mps-root",
                                           "--mps-control",
                                           "--gpu-mode",
                                           "--cdi-kind",
                                           "--nvml-library",
                                           "--health-interval",
                                           "--register-interval",
                                           "--metrics-address",
                                           "--log-level"};
// The directories the agent hands to kubelet or the runtime, and their
// defaults.
const std::map<std::string, std::string> kDirFlags = {
    {"--dra-plugin-dir", "/var/lib/kubelet/plugins"},
    {"--dra-registry-dir", "/var/lib/kubelet/plugins_registry"},
    {"--cdi-dir", "/var/run/cdi"},
    {"--state-dir", "/run/deviceshare"},
    {"--hook-path", "/usr/local/vgpu"},
    {"--mps-root", "/run/deviceshare/mps"},
};

std::optional<std::string> ReadFile(const fs::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> YamlFilesIn(const fs::path& dir) {
  std::vector<std::string> files;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    const std::string extension = entry.path().extension().string();
    if (entry.is_regular_file() &&
        (extension == ".yaml" || extension == ".yml")) {
      files.push_back(entry.path().filename().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

bool IsDnsLabel(const std::string& name) {
  static const std::regex kLabel("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  return name.size() <= 63 && std::regex_match(name, kLabel);
}

bool IsDnsSubdomain(const std::string& name) {
  static const std::regex kSubdomain(
      "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
  return name.size() <= 253 && std::regex_match(name, kSubdomain);
}

// The keys of `object` that are not in `allowed` (what the API server's
// strict field validation would reject).
std::vector<std::string> UnknownKeys(const json& object,
                                     const std::set<std::string>& allowed) {
  std::vector<std::string> unknown;
  if (!object.is_object()) return unknown;
  for (const auto& [key, value] : object.items()) {
    if (!allowed.contains(key)) unknown.push_back(key);
  }
  return unknown;
}

std::string StringOr(const json& value, const std::string& fallback = "") {
  return value.is_string() ? value.get<std::string>() : fallback;
}

// object[key][key2]...: null where a key is missing or a value on the way
// is not a map (nlohmann's const operator[] may not be asked for a missing
// key, and a broken manifest must fail the test, not crash it). A null
// iterates as empty.
const json& Get(const json& object) { return object; }

template <typename... Keys>
const json& Get(const json& object, std::string_view key, Keys... rest) {
  static const json kNull;
  if (!object.is_object()) return kNull;
  const auto it = object.find(std::string(key));
  return it == object.end() ? kNull : Get(*it, rest...);
}

// One document and the file it came from ("dra/one-gpu-claim.yaml").
struct Manifest {
  std::string file;
  json object;

  std::string Kind() const { return Get(object, "kind").get<std::string>(); }
  std::string Name() const { return StringOr(Get(object, "metadata", "name")); }
  std::string Namespace() const {
    return StringOr(Get(object, "metadata", "namespace"));
  }
  std::string Where() const { return file + ": " + Kind() + "/" + Name(); }
};

// A claim's spec (ResourceClaim.spec or ResourceClaimTemplate.spec.spec).
struct ClaimSpec {
  const Manifest* manifest;
  const json* spec;
};

class DraExamplesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const auto& [dir, files] :
         {std::pair{kClaimsDir, kClaimFiles},
          std::pair{kDeployDraDir, kDeployDraFiles}}) {
      ASSERT_TRUE(fs::is_directory(dir)) << dir << " is missing";
      for (const std::string& file : files) {
        ASSERT_TRUE(fs::is_regular_file(dir / file))
            << (dir / file) << " is missing";
      }
      const std::vector<std::string> yaml_files = YamlFilesIn(dir);
      ASSERT_FALSE(yaml_files.empty()) << dir;
      for (const std::string& file : yaml_files) {
        Load(dir, file);
        if (HasFatalFailure()) return;
      }
    }
  }

  void Load(const fs::path& dir, const std::string& file) {
    // Deploy-kit files are labelled from the repository root ("deploy/..."),
    // examples from examples/ ("dra/...").
    const bool in_deploy_kit =
        !fs::relative(dir, kDeployDir).generic_string().starts_with("..");
    const std::string label =
        in_deploy_kit
            ? "deploy/" + fs::relative(dir / file, kDeployDir).generic_string()
            : fs::relative(dir / file, kExamplesDir).generic_string();
    const std::optional<std::string> text = ReadFile(dir / file);
    ASSERT_TRUE(text.has_value()) << label << " cannot be read";
    texts_[label] = *text;
    auto documents = ParseYamlDocuments(*text);
    ASSERT_OK(documents) << label;
    ASSERT_FALSE(documents->empty()) << label << " holds no document";
    for (json& document : *documents) {
      ASSERT_TRUE(document.is_object()) << label;
      ASSERT_TRUE(Get(document, "apiVersion").is_string()) << label;
      ASSERT_TRUE(Get(document, "kind").is_string()) << label;
      if (Get(document, "kind") != "Kustomization") {
        ASSERT_TRUE(Get(document, "metadata", "name").is_string())
            << label << ": a " << Get(document, "kind") << " without a name";
      }
      manifests_.push_back({label, std::move(document)});
    }
  }

  std::vector<const Manifest*> OfKind(const std::string& kind,
                                      const std::string& dir = "") const {
    std::vector<const Manifest*> found;
    for (const Manifest& manifest : manifests_) {
      if (manifest.Kind() == kind &&
          (dir.empty() || absl::StartsWith(manifest.file, dir + "/"))) {
        found.push_back(&manifest);
      }
    }
    return found;
  }

  const Manifest* Find(const std::string& kind, const std::string& name,
                       const std::string& ns = "") const {
    for (const Manifest& manifest : manifests_) {
      if (manifest.Kind() == kind && manifest.Name() == name &&
          manifest.Namespace() == ns) {
        return &manifest;
      }
    }
    return nullptr;
  }

  // The object a test cannot do without; nullptr (and a failure) if absent.
  const json* Require(const std::string& kind, const std::string& name,
                      const std::string& ns = "") const {
    const Manifest* manifest = Find(kind, name, ns);
    EXPECT_NE(manifest, nullptr) << "no " << kind << " " << ns << "/" << name;
    return manifest == nullptr ? nullptr : &manifest->object;
  }

  std::set<std::string> DeviceClassNames() const {
    std::set<std::string> names;
    for (const Manifest* manifest : OfKind("DeviceClass")) {
      names.insert(manifest->Name());
    }
    return names;
  }

  std::vector<ClaimSpec> ClaimSpecs() const {
    std::vector<ClaimSpec> specs;
    for (const Manifest* claim : OfKind("ResourceClaim")) {
      specs.push_back({claim, &Get(claim->object, "spec")});
    }
    for (const Manifest* tmpl : OfKind("ResourceClaimTemplate")) {
      specs.push_back({tmpl, &Get(tmpl->object, "spec", "spec")});
    }
    return specs;
  }

  // The pod spec of a Pod or of a workload's template.
  static const json& PodSpec(const Manifest& manifest) {
    return manifest.Kind() == "Pod"
               ? Get(manifest.object, "spec")
               : Get(manifest.object, "spec", "template", "spec");
  }

  std::vector<const Manifest*> Workloads() const {
    std::vector<const Manifest*> found;
    for (const Manifest& manifest : manifests_) {
      if (kWorkloads.contains(manifest.Kind())) found.push_back(&manifest);
    }
    return found;
  }

  const json& Agent() const {
    static const json kNull;
    const json* daemon_set = Require("DaemonSet", kAgent, "kube-system");
    if (daemon_set == nullptr) return kNull;
    for (const json& container :
         Get((*daemon_set), "spec", "template", "spec", "containers")) {
      if (Get(container, "name") == kAgent) return container;
    }
    ADD_FAILURE() << "no container " << kAgent;
    return kNull;
  }

  const json& AgentPod() const {
    static const json kNull;
    const json* daemon_set = Require("DaemonSet", kAgent, "kube-system");
    return daemon_set == nullptr
               ? kNull
               : Get((*daemon_set), "spec", "template", "spec");
  }

  // The agent's command line, command then args.
  std::vector<std::string> AgentCommandLine() const {
    std::vector<std::string> line;
    for (const char* part : {"command", "args"}) {
      for (const json& word : Get(Agent(), part)) {
        line.push_back(StringOr(word, "<not a string>"));
      }
    }
    return line;
  }

  // The flags after `deviceshare-node-agent serve`: --name=value, or a
  // boolean alone ("true").
  std::map<std::string, std::string> AgentFlags() const {
    std::map<std::string, std::string> flags;
    const std::vector<std::string> line = AgentCommandLine();
    for (size_t i = 2; i < line.size(); ++i) {
      const std::string& word = line[i];
      const size_t equals = word.find('=');
      if (!absl::StartsWith(word, "--")) {
        ADD_FAILURE() << "not a flag: " << word;
      } else if (equals != std::string::npos) {
        EXPECT_TRUE(
            flags.emplace(word.substr(0, equals), word.substr(equals + 1))
                .second)
            << word << " given twice";
      } else if (kBooleanFlags.contains(word)) {
        EXPECT_TRUE(flags.emplace(word, "true").second) << word;
      } else {
        ADD_FAILURE() << "write agent flags as --name=value: " << word;
      }
    }
    return flags;
  }

  // The volume mounted at the longest mountPath holding `path` in `pod`'s
  // `container`, and that mount; nulls when none does.
  static std::pair<const json*, const json*> VolumeHolding(
      const json& pod, const json& container, const std::string& path) {
    const json* best = nullptr;
    for (const json& mount : Get(container, "volumeMounts")) {
      const std::string at = StringOr(Get(mount, "mountPath"));
      if (path != at && !absl::StartsWith(path, at + "/")) continue;
      if (best == nullptr ||
          at.size() > StringOr(Get((*best), "mountPath")).size()) {
        best = &mount;
      }
    }
    if (best == nullptr) return {nullptr, nullptr};
    for (const json& volume : Get(pod, "volumes")) {
      if (Get(volume, "name") == Get((*best), "name")) return {&volume, best};
    }
    ADD_FAILURE() << "no volume " << Get((*best), "name");
    return {nullptr, nullptr};
  }

  // "group/resource" ("pods" for the core group) -> verbs, over the rules
  // of `role`.
  static std::map<std::string, std::set<std::string>> Granted(
      const json& role) {
    std::map<std::string, std::set<std::string>> granted;
    for (const json& rule : Get(role, "rules")) {
      for (const json& group : Get(rule, "apiGroups")) {
        for (const json& resource : Get(rule, "resources")) {
          const std::string key =
              group == "" ? StringOr(resource)
                          : StringOr(group) + "/" + StringOr(resource);
          for (const json& verb : Get(rule, "verbs")) {
            granted[key].insert(StringOr(verb));
          }
        }
      }
    }
    return granted;
  }

  std::vector<Manifest> manifests_;
  std::map<std::string, std::string> texts_;  // file -> its text
};

// The kubelet's reading of a quantity: a number or a string such as "4Gi",
// "30", "500m". Returns thousandths of the unit, or nullopt.
std::optional<int64_t> QuantityMilli(const json& value,
                                     const std::string& field) {
  std::string text;
  if (value.is_string()) {
    text = value.get<std::string>();
  } else if (value.is_number()) {
    text = value.dump();
  } else {
    return std::nullopt;
  }
  auto milli = ParseQuantityMilli(text, field);
  if (!milli.ok()) return std::nullopt;
  return *milli;
}

// Every CEL expression: the DeviceClasses' selectors and the requests'.
std::vector<std::pair<std::string, std::string>> CelExpressions(
    const std::vector<Manifest>& manifests) {
  std::vector<std::pair<std::string, std::string>> expressions;
  const auto collect = [&](const std::string& where, const json& selectors) {
    for (const json& selector : selectors) {
      expressions.emplace_back(where,
                               StringOr(Get(selector, "cel", "expression")));
    }
  };
  for (const Manifest& manifest : manifests) {
    if (manifest.Kind() == "DeviceClass") {
      collect(manifest.Where(), Get(manifest.object, "spec", "selectors"));
      continue;
    }
    const json* spec = manifest.Kind() == "ResourceClaim"
                           ? &Get(manifest.object, "spec")
                       : manifest.Kind() == "ResourceClaimTemplate"
                           ? &Get(manifest.object, "spec", "spec")
                           : nullptr;
    if (spec == nullptr) continue;
    for (const json& request : Get((*spec), "devices", "requests")) {
      const std::string where =
          manifest.Where() + " request " + StringOr(Get(request, "name"));
      collect(where, Get(request, "exactly", "selectors"));
      for (const json& sub : Get(request, "firstAvailable")) {
        collect(where, Get(sub, "selectors"));
      }
    }
  }
  return expressions;
}

TEST_F(DraExamplesTest, EveryExampleFileHasAHeaderAndIsInTheReadme) {
  const std::string readme = ReadFile(kClaimsDir / "README.md").value_or("");
  const std::vector<std::string> files = YamlFilesIn(kClaimsDir);
  for (const std::string& file : files) {
    EXPECT_TRUE(absl::StrContains(readme, "`" + file + "`"))
        << file << " is not in examples/dra/README.md";
    // The comment header saying what it asks for.
    const std::string& text = texts_["dra/" + file];
    EXPECT_TRUE(absl::StartsWith(text, "# ")) << file;
  }
  for (const std::string& file : kClaimFiles) {
    if (file != "README.md") {
      EXPECT_THAT(files, ::testing::Contains(file));
    }
  }
  // Each example holds a claim (or template) and what uses it.
  for (const std::string& file : files) {
    bool has_claim = false;
    bool has_workload = false;
    for (const Manifest& manifest : manifests_) {
      if (manifest.file != "dra/" + file) continue;
      has_claim |= manifest.Kind() == "ResourceClaim" ||
                   manifest.Kind() == "ResourceClaimTemplate";
      has_workload |= kWorkloads.contains(manifest.Kind());
    }
    EXPECT_TRUE(has_claim) << file;
    EXPECT_TRUE(has_workload) << file;
  }

  const std::string deploy_readme =
      ReadFile(kDeployDir / "README.md").value_or("");
  for (const char* needed : {"## DRA driver", "DRAConsumableCapacity",
                             "DRAPartitionableDevices", "1.34", "--dra"}) {
    EXPECT_TRUE(absl::StrContains(deploy_readme, needed))
        << "deploy/README.md does not say " << needed;
  }
  for (const std::string& file : YamlFilesIn(kDeployDraDir)) {
    EXPECT_TRUE(absl::StrContains(deploy_readme, "`dra/" + file + "`"))
        << "dra/" << file << " is not in deploy/README.md";
  }
}

TEST_F(DraExamplesTest, EveryDocumentIsAKnownKindWithAValidName) {
  std::set<std::string> seen;
  for (const Manifest& manifest : manifests_) {
    const std::string api_version = Get(manifest.object, "apiVersion");
    const auto kinds = kKnownKinds.find(api_version);
    ASSERT_NE(kinds, kKnownKinds.end())
        << manifest.file << ": unknown apiVersion " << api_version;
    EXPECT_TRUE(kinds->second.contains(manifest.Kind()))
        << manifest.file << ": " << api_version << " has no kind "
        << manifest.Kind();
    if (manifest.Kind() == "Kustomization") continue;
    EXPECT_TRUE(IsDnsSubdomain(manifest.Name())) << manifest.Where();
    if (kClusterScoped.contains(manifest.Kind())) {
      EXPECT_FALSE(Get(manifest.object, "metadata").contains("namespace"))
          << manifest.Where() << " is cluster-scoped";
    }
    EXPECT_TRUE(seen.insert(manifest.Kind() + "/" + manifest.Namespace() + "/" +
                            manifest.Name())
                    .second)
        << manifest.Where() << " is defined twice";
  }
  // The driver's objects live beside the device-plugin agent's.
  for (const Manifest& manifest : manifests_) {
    if (absl::StartsWith(manifest.file, "deploy/") &&
        !kClusterScoped.contains(manifest.Kind())) {
      EXPECT_EQ(manifest.Namespace(), "kube-system") << manifest.Where();
    }
  }
}

TEST_F(DraExamplesTest, DeviceClassesSelectTheDriversDevicesByMode) {
  std::set<std::string> names;
  for (const Manifest* manifest : OfKind("DeviceClass")) {
    EXPECT_EQ(manifest->file, "deploy/dra/deviceclasses.yaml");
    names.insert(manifest->Name());
    EXPECT_THAT(UnknownKeys(Get(manifest->object, "spec"),
                            {"selectors", "config", "extendedResourceName"}),
                ::testing::IsEmpty())
        << manifest->Where();
    const json& selectors = Get(manifest->object, "spec", "selectors");
    ASSERT_TRUE(selectors.is_array()) << manifest->Where();
    ASSERT_EQ(selectors.size(), 1u) << manifest->Where();
    EXPECT_THAT(UnknownKeys(selectors[0], {"cel"}), ::testing::IsEmpty());
    const std::string expression =
        StringOr(Get(selectors[0], "cel", "expression"));
    const std::string driver_test =
        std::string("device.driver == \"") + kDriver + "\"";
    if (manifest->Name() == kDriver) {
      EXPECT_EQ(expression, driver_test);
      continue;
    }
    // <mode>.gpu.deviceshare.io: the driver's devices of that mode, the
    // driver tested first so that other drivers' devices (without the
    // attribute) are not an evaluation error.
    ASSERT_TRUE(absl::EndsWith(manifest->Name(), std::string(".") + kDriver))
        << manifest->Name();
    const std::string mode = manifest->Name().substr(
        0, manifest->Name().size() - std::string(kDriver).size() - 1);
    EXPECT_TRUE(kModes.contains(mode)) << manifest->Name();
    const std::string escaped_driver =
        std::regex_replace(std::string(kDriver), std::regex("\\."), "\\.");
    const std::regex expected("\\s*device\\.driver == \"" + escaped_driver +
                              "\"\\s*&&\\s*device\\.attributes\\[\"" +
                              escaped_driver + "\"\\]\\.mode == \"" + mode +
                              "\"\\s*");
    EXPECT_TRUE(std::regex_match(expression, expected))
        << manifest->Where() << ": " << expression;
  }
  std::set<std::string> expected;
  for (const auto& [name, capacities] : kCapacitiesByClass) {
    expected.insert(name);
  }
  EXPECT_EQ(names, expected);
}

TEST_F(DraExamplesTest, ClaimRequestsUseV1ShapesAndDefinedClasses) {
  const std::set<std::string> classes = DeviceClassNames();
  ASSERT_FALSE(ClaimSpecs().empty());
  for (const ClaimSpec& claim : ClaimSpecs()) {
    const std::string where = claim.manifest->Where();
    if (claim.manifest->Kind() == "ResourceClaimTemplate") {
      EXPECT_THAT(UnknownKeys(Get(claim.manifest->object, "spec"),
                              {"metadata", "spec"}),
                  ::testing::IsEmpty())
          << where;
    }
    EXPECT_THAT(UnknownKeys(*claim.spec, {"devices"}), ::testing::IsEmpty())
        << where;
    const json& devices = Get((*claim.spec), "devices");
    EXPECT_THAT(UnknownKeys(devices, {"requests", "constraints", "config"}),
                ::testing::IsEmpty())
        << where;
    const json& requests = Get(devices, "requests");
    ASSERT_TRUE(requests.is_array() && !requests.empty())
        << where << ": spec.devices.requests is empty";

    // The fields an exact request (or a firstAvailable subrequest, which
    // carries them directly) may have, checked the same way.
    const auto check_exact = [&](const std::string& at, const json& exact) {
      const std::string class_name = StringOr(Get(exact, "deviceClassName"));
      EXPECT_TRUE(classes.contains(class_name))
          << at << ": deviceClassName \"" << class_name
          << "\" is not a DeviceClass of deviceclasses.yaml";
      const std::string mode =
          StringOr(Get(exact, "allocationMode"), "ExactCount");
      EXPECT_THAT(mode, ::testing::AnyOf("ExactCount", "All")) << at;
      if (mode == "ExactCount" && exact.contains("count")) {
        EXPECT_TRUE(Get(exact, "count").is_number_integer() &&
                    Get(exact, "count").get<int64_t>() >= 1)
            << at << ": count " << Get(exact, "count");
      }
      if (mode == "All") {
        EXPECT_FALSE(exact.contains("count")) << at;
      }
      for (const json& selector : Get(exact, "selectors")) {
        EXPECT_THAT(UnknownKeys(selector, {"cel"}), ::testing::IsEmpty()) << at;
        EXPECT_FALSE(StringOr(Get(selector, "cel", "expression")).empty())
            << at << ": a selector without a CEL expression";
      }
      if (!exact.contains("capacity")) return;
      EXPECT_THAT(UnknownKeys(Get(exact, "capacity"), {"requests"}),
                  ::testing::IsEmpty())
          << at;
      const json& wanted = Get(exact, "capacity", "requests");
      ASSERT_TRUE(wanted.is_object() && !wanted.empty())
          << at << ": capacity.requests is not a map";
      const auto published = kCapacitiesByClass.find(class_name);
      for (const auto& [key, value] : wanted.items()) {
        std::string capacity = key;
        if (absl::StartsWith(key, std::string(kDriver) + "/")) {
          capacity = key.substr(std::string(kDriver).size() + 1);
        }
        if (published != kCapacitiesByClass.end()) {
          EXPECT_TRUE(published->second.contains(capacity))
              << at << ": class " << class_name << "'s devices have no "
              << "capacity " << key;
        }
        const std::optional<int64_t> milli =
            QuantityMilli(value, at + " capacity " + key);
        ASSERT_TRUE(milli.has_value()) << at << ": capacity " << key << ": "
                                       << value.dump() << " is not a quantity";
        EXPECT_GT(*milli, 0) << at << " capacity " << key;
        if (capacity == "cores") {
          // Percent of the GPU's SMs; 100 is the whole GPU.
          EXPECT_LE(*milli, 100 * 1000) << at << ": cores " << value.dump();
        }
        if (capacity == "memory") {
          // Bytes: "4Gi", not HAMi's MiB count ("4096").
          EXPECT_GE(*milli, int64_t{1024} * 1024 * 1000)
              << at << ": memory " << value.dump()
              << " is under 1 MiB; capacity memory is in bytes";
        }
      }
    };

    std::set<std::string> names;
    for (const json& request : requests) {
      const std::string name = StringOr(Get(request, "name"));
      const std::string at = where + " request " + name;
      EXPECT_TRUE(IsDnsLabel(name))
          << where << ": request name \"" << name << "\"";
      EXPECT_TRUE(names.insert(name).second) << at << " is named twice";
      // v1: the device fields sit under `exactly` (v1beta1 had them on the
      // request itself).
      EXPECT_THAT(UnknownKeys(request, {"name", "exactly", "firstAvailable"}),
                  ::testing::IsEmpty())
          << at;
      EXPECT_NE(request.contains("exactly"), request.contains("firstAvailable"))
          << at << ": one of exactly and firstAvailable";
      if (request.contains("exactly")) {
        EXPECT_THAT(
            UnknownKeys(Get(request, "exactly"),
                        {"deviceClassName", "selectors", "allocationMode",
                         "count", "adminAccess", "tolerations", "capacity"}),
            ::testing::IsEmpty())
            << at;
        check_exact(at, Get(request, "exactly"));
      }
      for (const json& sub : Get(request, "firstAvailable")) {
        const std::string sub_at = at + "/" + StringOr(Get(sub, "name"));
        EXPECT_TRUE(IsDnsLabel(StringOr(Get(sub, "name")))) << sub_at;
        EXPECT_THAT(UnknownKeys(sub, {"name", "deviceClassName", "selectors",
                                      "allocationMode", "count", "tolerations",
                                      "capacity"}),
                    ::testing::IsEmpty())
            << sub_at;
        check_exact(sub_at, sub);
      }
    }
  }
}

TEST_F(DraExamplesTest, ConstraintsNameTheClaimsRequestsAndKnownAttributes) {
  for (const ClaimSpec& claim : ClaimSpecs()) {
    const std::string where = claim.manifest->Where();
    std::set<std::string> requests;
    for (const json& request : Get((*claim.spec), "devices", "requests")) {
      requests.insert(StringOr(Get(request, "name")));
    }
    for (const json& constraint :
         Get((*claim.spec), "devices", "constraints")) {
      EXPECT_THAT(UnknownKeys(constraint, {"requests", "matchAttribute",
                                           "distinctAttribute"}),
                  ::testing::IsEmpty())
          << where;
      for (const json& name : Get(constraint, "requests")) {
        EXPECT_TRUE(requests.contains(StringOr(name)))
            << where << ": constraint names request " << name
            << ", which the claim does not have";
      }
      EXPECT_NE(constraint.contains("matchAttribute"),
                constraint.contains("distinctAttribute"))
          << where << ": one of matchAttribute and distinctAttribute";
      for (const char* field : {"matchAttribute", "distinctAttribute"}) {
        if (!constraint.contains(field)) continue;
        // A fully qualified name: <domain>/<attribute>.
        const std::string attribute = StringOr(Get(constraint, field));
        const size_t slash = attribute.find('/');
        ASSERT_NE(slash, std::string::npos)
            << where << ": " << field << " " << attribute
            << " is not <domain>/<name>";
        const auto domain = kAttributes.find(attribute.substr(0, slash));
        ASSERT_NE(domain, kAttributes.end()) << where << ": " << attribute;
        EXPECT_TRUE(domain->second.contains(attribute.substr(slash + 1)))
            << where << ": the driver publishes no attribute " << attribute;
      }
    }
  }
}

TEST_F(DraExamplesTest, SelectorsUseWhatTheDriverPublishes) {
  const std::regex lookup(
      "device\\.(attributes|capacity)\\[\"([^\"]+)\"\\]\\.([A-Za-z0-9_]+)");
  const std::regex driver_test("device\\.driver\\s*==\\s*\"([^\"]*)\"");
  const std::regex mode_test("\\.mode\\s*==\\s*\"([^\"]*)\"");
  std::set<std::string> capacities;
  for (const auto& [name, published] : kCapacitiesByClass) {
    capacities.insert(published.begin(), published.end());
  }
  const auto expressions = CelExpressions(manifests_);
  EXPECT_FALSE(expressions.empty());
  for (const auto& [where, expression] : expressions) {
    EXPECT_FALSE(expression.empty()) << where;
    EXPECT_EQ(std::count(expression.begin(), expression.end(), '('),
              std::count(expression.begin(), expression.end(), ')'))
        << where << ": " << expression;
    EXPECT_EQ(std::count(expression.begin(), expression.end(), '"') % 2, 0)
        << where << ": " << expression;
    for (std::sregex_iterator it(expression.begin(), expression.end(), lookup),
         end;
         it != end; ++it) {
      const std::string field = (*it)[1];
      const std::string domain = (*it)[2];
      const std::string name = (*it)[3];
      if (field == "attributes") {
        const auto known = kAttributes.find(domain);
        ASSERT_NE(known, kAttributes.end())
            << where << ": attributes of domain " << domain;
        EXPECT_TRUE(known->second.contains(name))
            << where << ": the driver publishes no attribute " << domain << "/"
            << name;
      } else {
        EXPECT_EQ(domain, kDriver) << where;
        EXPECT_TRUE(capacities.contains(name))
            << where << ": the driver publishes no capacity " << name;
      }
    }
    for (std::sregex_iterator
             it(expression.begin(), expression.end(), driver_test),
         end;
         it != end; ++it) {
      EXPECT_EQ((*it)[1], kDriver) << where;
    }
    for (std::sregex_iterator
             it(expression.begin(), expression.end(), mode_test),
         end;
         it != end; ++it) {
      EXPECT_TRUE(kModes.contains((*it)[1])) << where << ": mode " << (*it)[1];
    }
  }
}

TEST_F(DraExamplesTest, PodsUseClaimsThatExist) {
  std::set<std::string> used;  // "Kind/namespace/name" of claims pods use
  ASSERT_FALSE(Workloads().empty());
  for (const Manifest* workload : Workloads()) {
    const std::string where = workload->Where();
    const json& pod = PodSpec(*workload);
    ASSERT_TRUE(pod.is_object()) << where << " has no pod spec";
    // pod claim name -> the claim's request names (empty if unknown).
    std::map<std::string, std::set<std::string>> pod_claims;
    for (const json& entry : Get(pod, "resourceClaims")) {
      const std::string name = StringOr(Get(entry, "name"));
      const std::string at = where + " resourceClaims " + name;
      EXPECT_TRUE(IsDnsLabel(name)) << at;
      // v1: the reference sits on the entry (before 1.31 it was in `source`).
      EXPECT_THAT(UnknownKeys(entry, {"name", "resourceClaimName",
                                      "resourceClaimTemplateName"}),
                  ::testing::IsEmpty())
          << at;
      const bool by_name = entry.contains("resourceClaimName");
      const bool by_template = entry.contains("resourceClaimTemplateName");
      EXPECT_NE(by_name, by_template)
          << at << ": one of resourceClaimName and resourceClaimTemplateName";
      const std::string kind =
          by_name ? "ResourceClaim" : "ResourceClaimTemplate";
      const std::string target = StringOr(Get(
          entry, by_name ? "resourceClaimName" : "resourceClaimTemplateName"));
      const Manifest* claim = Find(kind, target, workload->Namespace());
      EXPECT_NE(claim, nullptr)
          << at << ": no " << kind << " " << target
          << " among the examples (in the pod's namespace)";
      std::set<std::string> requests;
      if (claim != nullptr) {
        used.insert(kind + "/" + claim->Namespace() + "/" + claim->Name());
        const json& spec = by_name ? Get(claim->object, "spec")
                                   : Get(claim->object, "spec", "spec");
        for (const json& request : Get(spec, "devices", "requests")) {
          requests.insert(StringOr(Get(request, "name")));
        }
      }
      EXPECT_TRUE(pod_claims.emplace(name, requests).second)
          << at << " is listed twice";
    }

    std::set<std::string> referenced;
    for (const char* list : {"initContainers", "containers"}) {
      for (const json& container : Get(pod, list)) {
        const std::string at =
            where + " container " + StringOr(Get(container, "name"));
        for (const json& claim : Get(container, "resources", "claims")) {
          EXPECT_THAT(UnknownKeys(claim, {"name", "request"}),
                      ::testing::IsEmpty())
              << at;
          const std::string name = StringOr(Get(claim, "name"));
          const auto it = pod_claims.find(name);
          ASSERT_TRUE(it != pod_claims.end())
              << at << ": resources.claims names " << name
              << ", which is not in the pod's spec.resourceClaims";
          referenced.insert(name);
          if (claim.contains("request")) {
            EXPECT_TRUE(it->second.contains(StringOr(Get(claim, "request"))))
                << at << ": claim " << name << " has no request "
                << Get(claim, "request");
          }
        }
      }
    }
    // A pod claim no container names is prepared for nothing.
    for (const auto& [name, requests] : pod_claims) {
      EXPECT_TRUE(referenced.contains(name))
          << where << ": no container uses claim " << name;
    }
  }
  // And every example claim is used by an example pod.
  for (const Manifest& manifest : manifests_) {
    if (manifest.Kind() != "ResourceClaim" &&
        manifest.Kind() != "ResourceClaimTemplate") {
      continue;
    }
    EXPECT_TRUE(used.contains(manifest.Kind() + "/" + manifest.Namespace() +
                              "/" + manifest.Name()))
        << manifest.Where() << " is used by no pod";
  }
}

TEST_F(DraExamplesTest, NodeAgentServesDraWithKubeletsDirectoriesMounted) {
  const std::vector<std::string> line = AgentCommandLine();
  ASSERT_GE(line.size(), 2u);
  EXPECT_EQ(line[0], kAgent);
  EXPECT_EQ(line[1], "serve");
  const std::map<std::string, std::string> flags = AgentFlags();
  ASSERT_TRUE(flags.contains("--dra")) << "the DaemonSet does not run --dra";
  EXPECT_EQ(flags.at("--dra"), "true");
  for (const auto& [flag, value] : flags) {
    EXPECT_TRUE(kServeFlags.contains(flag)) << "serve has no flag " << flag;
  }
  EXPECT_EQ(flags.contains("--dra-driver-name") ? flags.at("--dra-driver-name")
                                                : std::string(kDriver),
            kDriver)
      << "deviceclasses.yaml selects " << kDriver;
  ASSERT_TRUE(flags.contains("--node-name"));
  EXPECT_EQ(flags.at("--node-name"), "$(NODE_NAME)");

  const json& pod = AgentPod();
  const json& container = Agent();
  EXPECT_EQ(Get(container, "securityContext", "privileged"), true);
  EXPECT_EQ(Get(pod, "hostPID"), false);

  // kubelet's plugin directories and the CDI directory, at their host
  // paths, writable: kubelet and the runtime read what the agent writes.
  for (const std::string path :
       {"/var/lib/kubelet/plugins", "/var/lib/kubelet/plugins_registry",
        "/var/run/cdi"}) {
    const auto [volume, mount] = VolumeHolding(pod, container, path);
    ASSERT_NE(volume, nullptr) << path << " is not mounted";
    EXPECT_EQ(Get((*mount), "mountPath"), path);
    EXPECT_EQ(Get((*volume), "hostPath", "path"), path);
    EXPECT_NE(Get(*mount, "readOnly"), true) << path;
  }
  // Each directory flag (or its default) is that same host directory.
  for (const auto& [flag, fallback] : kDirFlags) {
    const std::string path = flags.contains(flag) ? flags.at(flag) : fallback;
    const auto [volume, mount] = VolumeHolding(pod, container, path);
    ASSERT_NE(volume, nullptr) << flag << " " << path << " is not mounted";
    ASSERT_TRUE(volume->contains("hostPath")) << flag;
    EXPECT_EQ(Get((*volume), "hostPath", "path"), Get((*mount), "mountPath"))
        << flag;
    EXPECT_NE(Get(*mount, "readOnly"), true) << flag;
  }

  // Everything the device-plugin DaemonSet mounts, mounted the same way.
  const std::optional<std::string> base_text =
      ReadFile(kDeployDir / "node-agent-daemonset.yaml");
  ASSERT_TRUE(base_text.has_value());
  auto base = ParseJsonOrYaml(*base_text);
  ASSERT_OK(base);
  const json& base_pod = Get((*base), "spec", "template", "spec");
  ASSERT_FALSE(Get(base_pod, "containers").empty());
  const json& base_container = Get(base_pod, "containers")[0];
  for (const json& base_mount : Get(base_container, "volumeMounts")) {
    const std::string path = Get(base_mount, "mountPath");
    const auto [base_volume, unused] =
        VolumeHolding(base_pod, base_container, path);
    ASSERT_NE(base_volume, nullptr) << path;
    const auto [volume, mount] = VolumeHolding(pod, container, path);
    ASSERT_NE(volume, nullptr) << path << " is not mounted";
    EXPECT_EQ(Get((*mount), "mountPath"), path);
    EXPECT_EQ(Get(*mount, "readOnly") == true,
              Get(base_mount, "readOnly") == true)
        << path;
    for (const char* source : {"hostPath", "configMap"}) {
      if (base_volume->contains(source)) {
        EXPECT_EQ(Get(*volume, source, "path"),
                  Get(*base_volume, source, "path"))
            << path;
        EXPECT_EQ(Get(*volume, source, "name"),
                  Get(*base_volume, source, "name"))
            << path;
      }
    }
  }

  // --config is a key of this kustomization's ConfigMap.
  ASSERT_TRUE(flags.contains("--config"));
  const fs::path config = flags.at("--config");
  const auto [config_volume, config_mount] =
      VolumeHolding(pod, container, config.string());
  ASSERT_NE(config_volume, nullptr) << config << " is not mounted";
  const std::string config_map =
      StringOr(Get((*config_volume), "configMap", "name"));
  const json* map = Require("ConfigMap", config_map, "kube-system");
  ASSERT_NE(map, nullptr);
  EXPECT_TRUE(Get((*map), "data").contains(config.filename().string()));

  // Every $(VAR) is set, and NODE_NAME is the pod's node.
  std::map<std::string, json> env;
  for (const json& var : Get(container, "env")) {
    env[StringOr(Get(var, "name"))] = var;
  }
  const std::regex reference("\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)");
  for (const std::string& word : line) {
    for (std::sregex_iterator it(word.begin(), word.end(), reference), end;
         it != end; ++it) {
      EXPECT_TRUE(env.contains((*it)[1].str())) << word;
    }
  }
  EXPECT_EQ(Get(env["NODE_NAME"], "valueFrom", "fieldRef", "fieldPath"),
            "spec.nodeName");
}

// Once the binary has the DRA driver, its --help is the authority on flags.
TEST_F(DraExamplesTest, NodeAgentFlagsAreTheBinarys) {
  std::string help;
  FILE* pipe = popen(
      (std::string("'") + DEVICESHARE_NODE_AGENT_BIN + "' --help 2>&1").c_str(),
      "r");
  ASSERT_NE(pipe, nullptr);
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    help.append(buffer, n);
  }
  pclose(pipe);
  for (const auto& [flag, value] : AgentFlags()) {
    EXPECT_TRUE(std::regex_search(
        help, std::regex("(^|[^-a-z])" + flag + "([^-a-z]|$)")))
        << flag << " is not in `deviceshare-node-agent --help`:\n"
        << help;
  }
}

TEST_F(DraExamplesTest, RbacWritesResourceSlicesAndReadsClaims) {
  const std::string account = StringOr(Get(AgentPod(), "serviceAccountName"));
  ASSERT_FALSE(account.empty()) << "the DaemonSet names no service account";
  ASSERT_NE(Require("ServiceAccount", account, "kube-system"), nullptr);

  // The ClusterRoles bound to the account.
  std::map<std::string, std::set<std::string>> granted;
  int bindings = 0;
  for (const Manifest* binding : OfKind("ClusterRoleBinding")) {
    bool to_agent = false;
    for (const json& subject : Get(binding->object, "subjects")) {
      to_agent |= Get(subject, "kind") == "ServiceAccount" &&
                  Get(subject, "name") == account &&
                  Get(subject, "namespace") == "kube-system";
    }
    if (!to_agent) continue;
    ++bindings;
    EXPECT_EQ(Get(binding->object, "roleRef", "kind"), "ClusterRole");
    EXPECT_EQ(Get(binding->object, "roleRef", "apiGroup"),
              "rbac.authorization.k8s.io");
    const json* role = Require(
        "ClusterRole", StringOr(Get(binding->object, "roleRef", "name")));
    ASSERT_NE(role, nullptr);
    for (const json& rule : Get((*role), "rules")) {
      for (const char* list : {"apiGroups", "resources", "verbs"}) {
        for (const json& entry : Get(rule, list)) {
          EXPECT_NE(entry, "*") << "no wildcards in " << list;
        }
      }
    }
    for (const auto& [resource, verbs] : Granted(*role)) {
      granted[resource].insert(verbs.begin(), verbs.end());
    }
  }
  EXPECT_EQ(bindings, 1);

  const auto has = [&](const std::string& resource,
                       const std::vector<std::string>& verbs) {
    for (const std::string& verb : verbs) {
      EXPECT_TRUE(granted[resource].contains(verb)) << resource << " " << verb;
    }
  };
  has("resource.k8s.io/resourceslices",
      {"get", "list", "watch", "create", "update", "patch", "delete"});
  has("resource.k8s.io/resourceclaims", {"get", "list", "watch"});
  has("resource.k8s.io/resourceclaims/status", {"get"});
  // Reading is all prepare needs: no writes to claims.
  for (const char* resource : {"resource.k8s.io/resourceclaims",
                               "resource.k8s.io/resourceclaims/status"}) {
    for (const char* verb :
         {"create", "update", "patch", "delete", "deletecollection"}) {
      EXPECT_FALSE(granted[resource].contains(verb)) << resource << " " << verb;
    }
  }
  EXPECT_FALSE(granted.contains("resource.k8s.io/deviceclasses"));
  EXPECT_FALSE(granted.contains("pods/binding"));

  // The device-plugin agent's rights too: this role takes its name.
  const std::optional<std::string> base_text =
      ReadFile(kDeployDir / "node-agent-rbac.yaml");
  ASSERT_TRUE(base_text.has_value());
  auto base = ParseYamlDocuments(*base_text);
  ASSERT_OK(base);
  for (const json& document : *base) {
    if (Get(document, "kind") != "ClusterRole") continue;
    for (const auto& [resource, verbs] : Granted(document)) {
      has(resource, std::vector<std::string>(verbs.begin(), verbs.end()));
    }
  }
}

TEST_F(DraExamplesTest, KustomizationListsEveryManifest) {
  const std::vector<const Manifest*> kustomizations = OfKind("Kustomization");
  ASSERT_EQ(kustomizations.size(), 1u);
  const Manifest& kustomization = *kustomizations[0];
  EXPECT_EQ(kustomization.file, "deploy/dra/kustomization.yaml");
  std::vector<std::string> listed;
  for (const json& resource : Get(kustomization.object, "resources")) {
    listed.push_back(StringOr(resource));
    EXPECT_TRUE(fs::is_regular_file(kDeployDraDir / StringOr(resource)))
        << "kustomization.yaml lists " << resource << ", which is not there";
  }
  std::vector<std::string> manifests;
  for (const std::string& file : YamlFilesIn(kDeployDraDir)) {
    if (file != "kustomization.yaml") manifests.push_back(file);
  }
  EXPECT_THAT(listed, UnorderedElementsAreArray(manifests));

  bool image_listed = false;
  for (const json& image : Get(kustomization.object, "images")) {
    image_listed |= Get(image, "name") == kAgent;
  }
  EXPECT_TRUE(image_listed);
  EXPECT_TRUE(absl::StartsWith(StringOr(Get(Agent(), "image")),
                               std::string(kAgent) + ":"));
}

TEST_F(DraExamplesTest, ConfigMapIsTheDevicePluginAgentsOne) {
  const json* copy = Require("ConfigMap", "deviceshare-config", "kube-system");
  ASSERT_NE(copy, nullptr);
  const std::optional<std::string> text =
      ReadFile(kDeployDir / "configmap.yaml");
  ASSERT_TRUE(text.has_value());
  auto original = ParseJsonOrYaml(*text);
  ASSERT_OK(original);
  EXPECT_EQ(*copy, *original)
      << "deploy/dra/configmap.yaml differs from deploy/configmap.yaml";
}

}  // namespace
}  // namespace deviceshare
