// deploy: every manifest parses, and the pieces that must agree
// (the extender's verbs and managed resources, the config file, mounts,
// ports, names) do.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/codec/yaml_json.h"
#include "deviceshare/config/config_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/status_matchers.h"

namespace deviceshare {
namespace {

using ::nlohmann::json;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAreArray;

const std::filesystem::path kDeployDir =
    std::filesystem::path(DEVICESHARE_DEPLOY_DIR);

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::vector<std::string> YamlFiles() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(kDeployDir)) {
    if (entry.path().extension() == ".yaml") {
      files.push_back(entry.path().filename().string());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

// Every document of every file in deploy, keyed "Kind/name".
class DeployManifestsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const std::string& file : YamlFiles()) {
      auto documents = ParseYamlDocuments(ReadFile(kDeployDir / file));
      ASSERT_OK(documents) << file;
      ASSERT_FALSE(documents->empty()) << file;
      for (json& document : *documents) {
        ASSERT_TRUE(document.is_object()) << file;
        ASSERT_TRUE(document.contains("apiVersion")) << file;
        ASSERT_TRUE(document["kind"].is_string()) << file;
        std::string name =
            document["kind"] == "Kustomization"
                ? file
                : document["metadata"]["name"].get<std::string>();
        const std::string key =
            document["kind"].get<std::string>() + "/" + std::move(name);
        ASSERT_TRUE(objects_.emplace(key, std::move(document)).second) << key;
      }
    }
  }

  const json& Object(const std::string& key) {
    static const json kNull;
    auto it = objects_.find(key);
    EXPECT_NE(it, objects_.end()) << key;
    return it == objects_.end() ? kNull : it->second;
  }

  const json& Container(const std::string& name) {
    static const json kNull;
    const json& deployment = Object("Deployment/deviceshare-scheduler");
    for (const json& container :
         deployment["spec"]["template"]["spec"]["containers"]) {
      if (container["name"] == name) return container;
    }
    ADD_FAILURE() << "no container " << name;
    return kNull;
  }

  // The mount path of the volume that holds ConfigMap `config_map`.
  std::string MountPathOf(const json& container,
                          const std::string& config_map) {
    const json& pod =
        Object("Deployment/deviceshare-scheduler")["spec"]["template"]["spec"];
    for (const json& volume : pod["volumes"]) {
      if (volume["configMap"]["name"] != config_map) continue;
      for (const json& mount : container["volumeMounts"]) {
        if (mount["name"] == volume["name"]) return mount["mountPath"];
      }
    }
    ADD_FAILURE() << "ConfigMap " << config_map << " is not mounted";
    return "";
  }

  json SchedulerConfiguration() {
    const json& config_map =
        Object("ConfigMap/deviceshare-kube-scheduler-config");
    auto parsed =
        ParseJsonOrYaml(config_map["data"]["config.yaml"].get<std::string>());
    EXPECT_OK(parsed);
    return parsed.ok() ? *parsed : json();
  }

  // resource -> verbs, over the rules of ClusterRole `role`.
  std::map<std::string, std::set<std::string>> Granted(
      const std::string& role) {
    std::map<std::string, std::set<std::string>> granted;
    for (const json& rule : Object("ClusterRole/" + role)["rules"]) {
      for (const json& resource : rule["resources"]) {
        for (const json& verb : rule["verbs"]) {
          granted[resource.get<std::string>()].insert(verb.get<std::string>());
        }
      }
    }
    return granted;
  }

  // The roles bound to ServiceAccount kube-system/`account`.
  std::set<std::string> RolesBoundTo(const std::string& account) {
    std::set<std::string> roles;
    for (const auto& [key, object] : objects_) {
      if (object["kind"] != "ClusterRoleBinding" &&
          object["kind"] != "RoleBinding") {
        continue;
      }
      for (const json& subject : object["subjects"]) {
        if (subject["kind"] == "ServiceAccount" && subject["name"] == account &&
            subject["namespace"] == "kube-system") {
          roles.insert(object["roleRef"]["name"].get<std::string>());
        }
      }
    }
    return roles;
  }

  const json& AgentPod() {
    return Object(
        "DaemonSet/deviceshare-node-agent")["spec"]["template"]["spec"];
  }

  const json& AgentContainer() {
    static const json kNull;
    for (const json& container : AgentPod()["containers"]) {
      if (container["name"] == "deviceshare-node-agent") return container;
    }
    ADD_FAILURE() << "no container deviceshare-node-agent";
    return kNull;
  }

  // The agent's command line, command then args.
  std::vector<std::string> AgentCommandLine() {
    std::vector<std::string> line;
    const json& container = AgentContainer();
    for (const char* part : {"command", "args"}) {
      if (!container.contains(part)) continue;
      for (const json& word : container[part]) {
        line.push_back(word.get<std::string>());
      }
    }
    return line;
  }

  // --name=value flags of the agent's command line, after the subcommand.
  std::map<std::string, std::string> AgentFlags() {
    std::map<std::string, std::string> flags;
    const std::vector<std::string> line = AgentCommandLine();
    for (size_t i = 2; i < line.size(); ++i) {
      const size_t equals = line[i].find('=');
      if (!absl::StartsWith(line[i], "--") || equals == std::string::npos) {
        ADD_FAILURE() << "write agent flags as --name=value: " << line[i];
        continue;
      }
      flags[line[i].substr(0, equals)] = line[i].substr(equals + 1);
    }
    return flags;
  }

  // The agent's volume mounted at the longest mountPath holding `path`,
  // and that mount; nulls when none does.
  std::pair<const json*, const json*> AgentVolumeHolding(
      const std::string& path) {
    const json* best_mount = nullptr;
    for (const json& mount : AgentContainer()["volumeMounts"]) {
      const std::string at = mount["mountPath"];
      if (path != at && !absl::StartsWith(path, at + "/")) continue;
      if (best_mount == nullptr ||
          at.size() > (*best_mount)["mountPath"].get<std::string>().size()) {
        best_mount = &mount;
      }
    }
    if (best_mount == nullptr) return {nullptr, nullptr};
    for (const json& volume : AgentPod()["volumes"]) {
      if (volume["name"] == (*best_mount)["name"]) {
        return {&volume, best_mount};
      }
    }
    ADD_FAILURE() << "no volume " << (*best_mount)["name"];
    return {nullptr, nullptr};
  }

  std::map<std::string, json> objects_;
};

// What `deviceshare-node-agent --help` prints.
std::string NodeAgentHelp() {
  std::string text;
  FILE* pipe = popen(
      (std::string("'") + DEVICESHARE_NODE_AGENT_BIN + "' --help 2>&1").c_str(),
      "r");
  if (pipe == nullptr) return text;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    text.append(buffer, n);
  }
  pclose(pipe);
  return text;
}

TEST_F(DeployManifestsTest, KustomizationListsEveryManifest) {
  std::vector<std::string> manifests;
  for (const std::string& file : YamlFiles()) {
    if (file != "kustomization.yaml") manifests.push_back(file);
  }
  EXPECT_THAT(Object("Kustomization/kustomization.yaml")["resources"]
                  .get<std::vector<std::string>>(),
              UnorderedElementsAreArray(manifests));
  EXPECT_EQ(manifests.size(), 7u);
}

TEST_F(DeployManifestsTest, KubeSchedulerCallsTheExtenderForBothDialects) {
  const json config = SchedulerConfiguration();
  EXPECT_EQ(config["apiVersion"], "kubescheduler.config.k8s.io/v1");
  EXPECT_EQ(config["kind"], "KubeSchedulerConfiguration");
  ASSERT_EQ(config["profiles"].size(), 1u);
  EXPECT_EQ(config["profiles"][0]["schedulerName"], "deviceshare-scheduler");
  EXPECT_EQ(config["leaderElection"]["leaderElect"], true);

  ASSERT_EQ(config["extenders"].size(), 1u);
  const json& extender = config["extenders"][0];
  EXPECT_EQ(extender["urlPrefix"], "http://127.0.0.1:8888");
  EXPECT_EQ(extender["filterVerb"], "filter");
  EXPECT_EQ(extender["prioritizeVerb"], "prioritize");
  EXPECT_EQ(extender["bindVerb"], "bind");
  EXPECT_EQ(extender["weight"], 1);
  EXPECT_EQ(extender["nodeCacheCapable"], true);
  EXPECT_EQ(extender["enableHTTPS"], false);
  EXPECT_EQ(extender["httpTimeout"], "30s");

  // Called for every pod of the profile (claims-only pods included): no
  // managedResources, whose absence kube-scheduler reads as "all pods".
  EXPECT_FALSE(extender.contains("managedResources"));
  const json& profile = config["profiles"][0];
  // The extender allocates the pods' claims: kube-scheduler's own DRA
  // plugin must be off, and the GPU resources of both dialects (MIG
  // profile resources included) left to the extender.
  EXPECT_THAT(profile["plugins"]["multiPoint"]["disabled"],
              ::testing::Contains(json{{"name", "DynamicResources"}}));
  bool ignores = false;
  for (const json& plugin : profile["pluginConfig"]) {
    if (plugin["name"] != "NodeResourcesFit") continue;
    ignores = true;
    EXPECT_THAT(
        plugin["args"]["ignoredResourceGroups"],
        UnorderedElementsAreArray<std::string>({"nvidia.com", "volcano.sh"}));
  }
  EXPECT_TRUE(ignores) << "no NodeResourcesFit pluginConfig";
  // Every resource name the extender reads lies in an ignored group.
  for (const char* name :
       {keys::kHamiGpu, keys::kHamiGpuMemory, keys::kHamiGpuMemoryPercentage,
        keys::kHamiGpuCores, keys::kHamiPriority, keys::kVolcanoGpuNumber,
        keys::kVolcanoGpuMemory, keys::kVolcanoGpuMemoryPercentage,
        keys::kVolcanoGpuCores, keys::kMigResourcePrefix}) {
    const std::string group(
        absl::string_view(name).substr(0, absl::string_view(name).find('/')));
    EXPECT_TRUE(group == "nvidia.com" || group == "volcano.sh") << name;
  }
}

TEST_F(DeployManifestsTest, DeviceshareConfigLoadsAndMatchesTheExample) {
  const json& config_map = Object("ConfigMap/deviceshare-config");
  auto in_map =
      ParseConfigYaml(config_map["data"]["deviceshare.yaml"].get<std::string>(),
                      BuiltinConfigExtensions());
  ASSERT_OK(in_map);
  auto example =
      ParseConfigYaml(ReadFile(std::filesystem::path(DEVICESHARE_EXAMPLES_DIR) /
                               "deviceshare.yaml"),
                      BuiltinConfigExtensions());
  ASSERT_OK(example);
  EXPECT_TRUE(*in_map == *example)
      << "configmap.yaml's deviceshare.yaml differs from "
         "examples/deviceshare.yaml";
  EXPECT_TRUE(in_map->notices.empty());

  // The whole ConfigMap object is a valid --config too.
  auto whole = ParseConfigYaml(config_map.dump(), BuiltinConfigExtensions());
  ASSERT_OK(whole);
  EXPECT_EQ(whole->device, in_map->device);
}

TEST_F(DeployManifestsTest, ContainersAgreeWithTheirConfigs) {
  const json& scheduler = Container("kube-scheduler");
  EXPECT_EQ(scheduler["image"], "registry.k8s.io/kube-scheduler:v1.31.0");
  EXPECT_THAT(
      scheduler["command"].get<std::vector<std::string>>(),
      Contains("--config=" +
               MountPathOf(scheduler, "deviceshare-kube-scheduler-config") +
               "/config.yaml"));

  const json& extender = Container("deviceshare-scheduler");
  EXPECT_THAT(extender["args"].get<std::vector<std::string>>(),
              ElementsAre("serve", "--address", "0.0.0.0:8888", "--config",
                          MountPathOf(extender, "deviceshare-config") +
                              "/deviceshare.yaml"));
  EXPECT_EQ(extender["livenessProbe"]["httpGet"]["path"], "/healthz");
  EXPECT_EQ(extender["livenessProbe"]["httpGet"]["port"], 8888);
  EXPECT_EQ(extender["readinessProbe"]["httpGet"]["path"], "/readyz");
  EXPECT_EQ(extender["readinessProbe"]["httpGet"]["port"], 8888);
  ASSERT_EQ(extender["ports"].size(), 1u);
  EXPECT_EQ(extender["ports"][0]["containerPort"], 8888);
  for (const json* container : {&scheduler, &extender}) {
    EXPECT_TRUE((*container)["resources"]["requests"].contains("cpu"));
    EXPECT_TRUE((*container)["resources"]["limits"].contains("memory"));
  }

  const json& service = Object("Service/deviceshare-scheduler");
  EXPECT_EQ(service["spec"]["ports"][0]["port"], 8888);
  EXPECT_EQ(service["spec"]["ports"][0]["targetPort"],
            extender["ports"][0]["name"]);
  const json& pod_labels =
      Object("Deployment/deviceshare-scheduler")["spec"]["template"]["metadata"]
                                                ["labels"];
  for (const auto& [label, value] : service["spec"]["selector"].items()) {
    EXPECT_EQ(pod_labels[label], value) << label;
  }
}

TEST_F(DeployManifestsTest, RbacGrantsWhatTheSchedulersUse) {
  const std::string account =
      Object("Deployment/deviceshare-scheduler")["spec"]["template"]["spec"]
                                                ["serviceAccountName"];
  const json& service_account = Object("ServiceAccount/" + account);
  EXPECT_EQ(service_account["metadata"]["namespace"], "kube-system");

  EXPECT_EQ(
      RolesBoundTo(account),
      std::set<std::string>({"system:kube-scheduler", "system:volume-scheduler",
                             "extension-apiserver-authentication-reader",
                             "deviceshare-scheduler"}));
  // Every binding names one service account that exists.
  for (const auto& [key, object] : objects_) {
    if (object["kind"] != "ClusterRoleBinding" &&
        object["kind"] != "RoleBinding") {
      continue;
    }
    ASSERT_EQ(object["subjects"].size(), 1u) << key;
    const json& subject = object["subjects"][0];
    EXPECT_EQ(subject["kind"], "ServiceAccount") << key;
    EXPECT_EQ(subject["namespace"], "kube-system") << key;
    EXPECT_TRUE(objects_.contains("ServiceAccount/" +
                                  subject["name"].get<std::string>()))
        << key;
  }

  std::map<std::string, std::set<std::string>> granted =
      Granted("deviceshare-scheduler");
  std::set<std::string> lease_names;
  for (const json& rule :
       Object("ClusterRole/deviceshare-scheduler")["rules"]) {
    for (const json& resource : rule["resources"]) {
      if (resource == "leases" && rule.contains("resourceNames")) {
        for (const json& lease : rule["resourceNames"]) {
          lease_names.insert(lease.get<std::string>());
        }
      }
    }
  }
  const auto has = [&](const std::string& resource,
                       std::vector<std::string> verbs) {
    for (const std::string& verb : verbs) {
      EXPECT_TRUE(granted[resource].contains(verb)) << resource << " " << verb;
    }
  };
  has("nodes", {"get", "list", "watch"});
  has("pods", {"get", "list", "watch", "patch"});
  has("pods/binding", {"create"});
  has("resourcequotas", {"get", "list", "watch"});
  has("events", {"create", "patch"});
  has("leases", {"create", "get", "update"});
  EXPECT_THAT(
      lease_names,
      Contains(SchedulerConfiguration()["leaderElection"]["resourceName"]
                   .get<std::string>()));
}

TEST_F(DeployManifestsTest, NodeAgentRunsOnGpuNodesWithWhatItNeeds) {
  const json& daemon_set = Object("DaemonSet/deviceshare-node-agent");
  EXPECT_EQ(daemon_set["metadata"]["namespace"], "kube-system");
  for (const auto& [label, value] :
       daemon_set["spec"]["selector"]["matchLabels"].items()) {
    EXPECT_EQ(daemon_set["spec"]["template"]["metadata"]["labels"][label],
              value)
        << label;
  }
  const json& pod = AgentPod();
  EXPECT_EQ(pod["hostPID"], false);
  EXPECT_EQ(pod["priorityClassName"], "system-node-critical");
  // GPU nodes only, and their nvidia.com/gpu taints tolerated.
  EXPECT_FALSE(
      pod["affinity"]["nodeAffinity"]
         ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
             .empty());
  bool tolerates_gpu_taint = false;
  for (const json& toleration : pod["tolerations"]) {
    if (toleration["key"] == "nvidia.com/gpu" &&
        toleration["operator"] == "Exists" &&
        toleration["effect"] == "NoSchedule") {
      tolerates_gpu_taint = true;
    }
  }
  EXPECT_TRUE(tolerates_gpu_taint);

  const json& container = AgentContainer();
  EXPECT_EQ(container["image"], "deviceshare-node-agent:0.1.0");
  // NVML's MIG instance creation wants a privileged process.
  EXPECT_EQ(container["securityContext"]["privileged"], true);
  EXPECT_TRUE(container["resources"]["requests"].contains("cpu"));
  EXPECT_TRUE(container["resources"]["limits"].contains("memory"));
  // kustomization.yaml's image entry names this image.
  bool image_listed = false;
  for (const json& image :
       Object("Kustomization/kustomization.yaml")["images"]) {
    image_listed |= image["name"] == "deviceshare-node-agent";
  }
  EXPECT_TRUE(image_listed);
}

TEST_F(DeployManifestsTest, NodeAgentCommandUsesTheBinarysFlags) {
  const std::vector<std::string> line = AgentCommandLine();
  ASSERT_GE(line.size(), 2u);
  EXPECT_EQ(line[0], "deviceshare-node-agent");
  EXPECT_EQ(line[1], "serve");
  std::map<std::string, std::string> flags = AgentFlags();
  EXPECT_EQ(flags["--node-name"], "$(NODE_NAME)");
  EXPECT_THAT(flags["--dialect"], ::testing::AnyOf("hami", "volcano"));

  // Every flag is one the binary knows.
  const std::string help = NodeAgentHelp();
  for (const auto& [flag, value] : flags) {
    EXPECT_TRUE(std::regex_search(
        help, std::regex("(^|[^-a-z])" + flag + "([^-a-z]|$)")))
        << flag << " is not in `deviceshare-node-agent --help`:\n"
        << help;
  }

  // Every $(VAR) the command uses is set in the container's env, and
  // NODE_NAME is the node the pod runs on.
  std::map<std::string, json> env;
  for (const json& var : AgentContainer()["env"]) {
    env[var["name"].get<std::string>()] = var;
  }
  const std::regex reference("\\$\\(([A-Za-z_][A-Za-z0-9_]*)\\)");
  for (const std::string& word : line) {
    for (std::sregex_iterator it(word.begin(), word.end(), reference), end;
         it != end; ++it) {
      EXPECT_TRUE(env.contains((*it)[1].str())) << word;
    }
  }
  EXPECT_EQ(env["NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"],
            "spec.nodeName");
}

TEST_F(DeployManifestsTest, NodeAgentMountsCoverThePathsInItsCommand) {
  const std::map<std::string, std::string> flags = AgentFlags();
  // The agent hands host paths to kubelet for the pods' mounts, so each
  // directory it is given must be that same host directory in here.
  for (const char* flag :
       {"--device-plugin-dir", "--state-dir", "--hook-path", "--mps-root"}) {
    ASSERT_TRUE(flags.contains(flag)) << flag;
    const std::string& path = flags.at(flag);
    const auto [volume, mount] = AgentVolumeHolding(path);
    ASSERT_NE(volume, nullptr) << flag << " " << path << " is not mounted";
    ASSERT_TRUE(volume->contains("hostPath")) << flag;
    EXPECT_EQ((*volume)["hostPath"]["path"], (*mount)["mountPath"]) << flag;
    EXPECT_NE(mount->value("readOnly", false), true) << flag;
  }
  // HAMi-core's lock files.
  const auto [lock_volume, lock_mount] = AgentVolumeHolding("/tmp/vgpulock");
  ASSERT_NE(lock_volume, nullptr);
  EXPECT_EQ((*lock_volume)["hostPath"]["path"], "/tmp/vgpulock");

  // The MPS servers' /dev/shm is the shm/ their clients get as theirs.
  const auto [shm_volume, shm_mount] = AgentVolumeHolding("/dev/shm");
  ASSERT_NE(shm_volume, nullptr) << "/dev/shm is not mounted";
  EXPECT_EQ((*shm_mount)["mountPath"], "/dev/shm");
  EXPECT_EQ((*shm_volume)["hostPath"]["path"], flags.at("--mps-root") + "/shm");

  // Every other hostPath is mounted at its own path.
  for (const json& mount : AgentContainer()["volumeMounts"]) {
    const auto [volume, found] =
        AgentVolumeHolding(mount["mountPath"].get<std::string>());
    ASSERT_NE(volume, nullptr);
    if (!volume->contains("hostPath") || mount["mountPath"] == "/dev/shm") {
      continue;
    }
    EXPECT_EQ((*volume)["hostPath"]["path"], mount["mountPath"]);
  }

  // --config is the shared deviceshare-config ConfigMap's file.
  const std::filesystem::path config = flags.at("--config");
  const auto [config_volume, config_mount] =
      AgentVolumeHolding(config.string());
  ASSERT_NE(config_volume, nullptr) << config << " is not mounted";
  EXPECT_EQ((*config_mount)["mountPath"], config.parent_path().string());
  const std::string config_map =
      (*config_volume)["configMap"]["name"].get<std::string>();
  EXPECT_EQ(config_map, "deviceshare-config");
  EXPECT_TRUE(Object("ConfigMap/" + config_map)["data"].contains(
      config.filename().string()));
  EXPECT_EQ(
      Object("ConfigMap/" + config_map)["metadata"]["namespace"],
      Object("DaemonSet/deviceshare-node-agent")["metadata"]["namespace"]);
}

TEST_F(DeployManifestsTest, NodeAgentRbacGrantsWhatTheAgentDoes) {
  const std::string account = AgentPod()["serviceAccountName"];
  EXPECT_EQ(account, "deviceshare-node-agent");
  EXPECT_EQ(Object("ServiceAccount/" + account)["metadata"]["namespace"],
            "kube-system");
  const std::set<std::string> roles = RolesBoundTo(account);
  ASSERT_EQ(roles, std::set<std::string>({"deviceshare-node-agent"}));
  std::map<std::string, std::set<std::string>> granted =
      Granted(*roles.begin());
  const auto has = [&](const std::string& resource,
                       std::vector<std::string> verbs) {
    for (const std::string& verb : verbs) {
      EXPECT_TRUE(granted[resource].contains(verb)) << resource << " " << verb;
    }
  };
  has("nodes", {"get", "patch"});  // the registration annotation
  has("pods", {"get", "list", "watch", "patch"});
  has("events", {"create", "patch"});
  // Nothing a node should not do: no binding, no writes to other kinds.
  EXPECT_FALSE(granted.contains("pods/binding"));
  EXPECT_FALSE(granted["nodes"].contains("delete"));
}

}  // namespace
}  // namespace deviceshare
