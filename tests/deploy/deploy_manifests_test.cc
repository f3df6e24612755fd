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

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/codec/yaml_json.h"
#include "deviceshare/config/config_parser.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/status_matchers.h"
#include "testing/whole_file.h"

namespace deviceshare {
namespace {

using ::deviceshare::testing::ReadWholeFile;

using ::nlohmann::json;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAreArray;

const std::filesystem::path kDeployDir =
    std::filesystem::path(DEVICESHARE_DEPLOY_DIR);

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
      auto documents = ParseYamlDocuments(ReadWholeFile(kDeployDir / file));
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

  // The mount path of the volume that holds ConfigMap `config_map` (or,
  // with `source` "secret", Secret `config_map`).
  std::string MountPathOf(const json& container, const std::string& config_map,
                          const std::string& source = "configMap") {
    const std::string key = source == "secret" ? "secretName" : "name";
    const json& pod =
        Object("Deployment/deviceshare-scheduler")["spec"]["template"]["spec"];
    for (const json& volume : pod["volumes"]) {
      if (!volume.contains(source) || volume[source][key] != config_map) {
        continue;
      }
      for (const json& mount : container["volumeMounts"]) {
        if (mount["name"] == volume["name"]) return mount["mountPath"];
      }
    }
    ADD_FAILURE() << source << " " << config_map << " is not mounted";
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

// The value of `flag` in a command line, written `--flag value` or
// `--flag=value`; "" when absent.
std::string ArgValueOr(const std::vector<std::string>& args,
                       const std::string& flag);
std::string ArgValue(const std::vector<std::string>& args,
                     const std::string& flag) {
  const std::string value = ArgValueOr(args, flag);
  EXPECT_NE(value, "") << flag << " is not in the command line";
  return value;
}

// As ArgValue, without a failure when absent.
std::string ArgValueOr(const std::vector<std::string>& args,
                       const std::string& flag) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == flag && i + 1 < args.size()) return args[i + 1];
    if (absl::StartsWith(args[i], flag + "=")) {
      return args[i].substr(flag.size() + 1);
    }
  }
  return "";
}

// The entry of a list of named objects (ports, containers) named `name`.
json NamedEntry(const json& list, const std::string& name) {
  for (const json& entry : list) {
    if (entry.value("name", "") == name) return entry;
  }
  ADD_FAILURE() << "no entry named " << name << " in " << list.dump();
  return json();
}

TEST_F(DeployManifestsTest, KustomizationListsEveryManifest) {
  std::vector<std::string> manifests;
  for (const std::string& file : YamlFiles()) {
    if (file != "kustomization.yaml") manifests.push_back(file);
  }
  EXPECT_THAT(Object("Kustomization/kustomization.yaml")["resources"]
                  .get<std::vector<std::string>>(),
              UnorderedElementsAreArray(manifests));
  EXPECT_FALSE(manifests.empty());
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
  // Through the Service: the leading extender may be in another replica.
  EXPECT_EQ(extender["urlPrefix"],
            "https://deviceshare-scheduler.kube-system.svc:8888");
  EXPECT_EQ(extender["filterVerb"], "filter");
  EXPECT_EQ(extender["prioritizeVerb"], "prioritize");
  EXPECT_EQ(extender["preemptVerb"], "preempt");
  EXPECT_EQ(extender["bindVerb"], "bind");
  EXPECT_EQ(extender["weight"], 1);
  EXPECT_EQ(extender["nodeCacheCapable"], true);
  // HTTPS both ways: the client certificate lies in the mount of the
  // Secret certs.sh makes, and its CA is the one serve trusts.
  EXPECT_EQ(extender["enableHTTPS"], true);
  const std::string client =
      MountPathOf(Container("kube-scheduler"),
                  "deviceshare-kube-scheduler-client-tls", "secret");
  EXPECT_EQ(extender["tlsConfig"]["certFile"], client + "/tls.crt");
  EXPECT_EQ(extender["tlsConfig"]["keyFile"], client + "/tls.key");
  EXPECT_EQ(extender["tlsConfig"]["caFile"], client + "/ca.crt");
  EXPECT_FALSE(extender["tlsConfig"].value("insecure", false));
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
  auto example = ParseConfigYaml(
      ReadWholeFile(std::filesystem::path(DEVICESHARE_EXAMPLES_DIR) /
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
  const std::vector<std::string> args = extender["args"];
  ASSERT_FALSE(args.empty());
  EXPECT_EQ(args[0], "serve");
  EXPECT_EQ(ArgValue(args, "--address"), "0.0.0.0:8888");
  EXPECT_EQ(ArgValue(args, "--config"),
            MountPathOf(extender, "deviceshare-config") + "/deviceshare.yaml");
  EXPECT_EQ(extender["livenessProbe"]["httpGet"]["path"], "/healthz");
  EXPECT_EQ(extender["livenessProbe"]["httpGet"]["port"], 8888);
  EXPECT_EQ(extender["livenessProbe"]["httpGet"]["scheme"], "HTTPS");
  EXPECT_EQ(extender["readinessProbe"]["httpGet"]["path"], "/readyz");
  EXPECT_EQ(extender["readinessProbe"]["httpGet"]["port"], 8888);
  EXPECT_EQ(extender["readinessProbe"]["httpGet"]["scheme"], "HTTPS");
  // The extender serves TLS and answers the verbs to kube-scheduler's
  // certificate only: its CA is the serving Secret's.
  const std::string tls =
      MountPathOf(extender, "deviceshare-scheduler-tls", "secret");
  EXPECT_EQ(ArgValue(args, "--tls-cert"), tls + "/tls.crt");
  EXPECT_EQ(ArgValue(args, "--tls-key"), tls + "/tls.key");
  EXPECT_EQ(ArgValue(args, "--tls-client-ca"), tls + "/ca.crt");
  // Replicas: the extender leads by its own Lease, not kube-scheduler's.
  EXPECT_EQ(Object("Deployment/deviceshare-scheduler")["spec"]["replicas"], 2);
  EXPECT_THAT(args, Contains("--leader-elect"));
  EXPECT_EQ(ArgValue(args, "--leader-elect-resource-name"),
            "deviceshare-extender");
  const json https = NamedEntry(extender["ports"], "https");
  EXPECT_EQ(https["containerPort"], 8888);
  for (const json* container : {&scheduler, &extender}) {
    EXPECT_TRUE((*container)["resources"]["requests"].contains("cpu"));
    EXPECT_TRUE((*container)["resources"]["limits"].contains("memory"));
  }

  // Prometheus scrapes the extender's port through the Service (which
  // selects this pod: KitReferencesTest).
  const json& service = Object("Service/deviceshare-scheduler");
  const json service_https = NamedEntry(service["spec"]["ports"], "https");
  EXPECT_EQ(service_https["port"], 8888);
  EXPECT_EQ(service_https["targetPort"], "https");
  EXPECT_EQ(service["metadata"]["annotations"]["prometheus.io/port"], "8888");
  EXPECT_EQ(service["metadata"]["annotations"]["prometheus.io/scheme"],
            "https");
}

// Only the scheduler pods reach the extender's port; the webhook's port
// stays open to the API server (whose address a policy cannot name by
// pod); nothing else is admitted.
TEST_F(DeployManifestsTest, NetworkPolicyAdmitsOnlyTheSchedulersToTheExtender) {
  const json& policy = Object("NetworkPolicy/deviceshare-scheduler");
  const json& labels =
      Object("Deployment/deviceshare-scheduler")["spec"]["template"]["metadata"]
                                                ["labels"];
  EXPECT_EQ(policy["spec"]["podSelector"]["matchLabels"], labels);
  EXPECT_EQ(policy["spec"]["policyTypes"], json({"Ingress"}));
  std::map<int, std::vector<json>> from_by_port;
  for (const json& rule : policy["spec"]["ingress"]) {
    for (const json& port : rule["ports"]) {
      from_by_port[port["port"].get<int>()].push_back(
          rule.value("from", json::array()));
    }
  }
  ASSERT_EQ(from_by_port[8888].size(), 1u);
  const json& extender_peers = from_by_port[8888][0];
  ASSERT_FALSE(extender_peers.empty()) << "8888 open to everyone";
  EXPECT_THAT(extender_peers,
              Contains(json{{"podSelector", {{"matchLabels", labels}}}}));
  for (const json& peer : extender_peers) {
    EXPECT_FALSE(peer.contains("ipBlock")) << peer.dump();
  }
  EXPECT_EQ(from_by_port[9443].size(), 1u);
  for (const auto& [port, rules] : from_by_port) {
    EXPECT_THAT(port, ::testing::AnyOf(8888, 9443, 10259));
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
  // Every binding names one service account of kube-system (that it
  // exists: KitReferencesTest).
  for (const auto& [key, object] : objects_) {
    if (object["kind"] != "ClusterRoleBinding" &&
        object["kind"] != "RoleBinding") {
      continue;
    }
    ASSERT_EQ(object["subjects"].size(), 1u) << key;
    const json& subject = object["subjects"][0];
    EXPECT_EQ(subject["kind"], "ServiceAccount") << key;
    EXPECT_EQ(subject["namespace"], "kube-system") << key;
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
  EXPECT_THAT(lease_names, Contains("deviceshare-extender"));
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

  // That the binary knows every flag: KitReferencesTest.

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

// ---- References between the objects of each kit
// ------------------------------ deploy and deploy/dra are each applied on
// their own (kubectl apply -k), so each must hold what its objects name: the
// objects are exactly those of the kustomization's resources, and a reference
// is good when it resolves inside the kit, to a built-in object of every
// cluster, or to an object the kit documents as made elsewhere
// (kMadeElsewhere).

// One object of a kit and the file it came from.
struct KitObject {
  std::string file;
  json object;

  std::string Kind() const { return object.value("kind", ""); }
  std::string Name() const { return object["metadata"].value("name", ""); }
  std::string Namespace() const {
    return object["metadata"].value("namespace", "");
  }
};

struct Kit {
  std::string name;  // "deploy", "deploy/dra"
  json kustomization;
  std::vector<KitObject> objects;

  // The object of `kind` named `name` in `ns` ("" for cluster-scoped).
  const KitObject* Find(const std::string& kind, const std::string& ns,
                        const std::string& name) const {
    for (const KitObject& object : objects) {
      if (object.Kind() == kind && object.Namespace() == ns &&
          object.Name() == name) {
        return &object;
      }
    }
    return nullptr;
  }
};

// The kit in `dir`: every document of every file its kustomization.yaml
// lists under resources.
Kit LoadKit(const std::string& name, const std::filesystem::path& dir) {
  Kit kit;
  kit.name = name;
  auto kustomization =
      ParseJsonOrYaml(ReadWholeFile(dir / "kustomization.yaml"));
  EXPECT_OK(kustomization) << name;
  if (!kustomization.ok()) return kit;
  kit.kustomization = *kustomization;
  for (const json& resource : kit.kustomization["resources"]) {
    const std::string file = resource.get<std::string>();
    EXPECT_TRUE(std::filesystem::is_regular_file(dir / file))
        << name << "/kustomization.yaml lists " << file << ", not a file";
    auto documents = ParseYamlDocuments(ReadWholeFile(dir / file));
    EXPECT_OK(documents) << name << "/" << file;
    if (!documents.ok()) continue;
    for (json& document : *documents) {
      kit.objects.push_back({name + "/" + file, std::move(document)});
    }
  }
  EXPECT_FALSE(kit.objects.empty()) << name;
  return kit;
}

std::vector<Kit> Kits() {
  return {LoadKit("deploy", kDeployDir),
          LoadKit("deploy/dra", kDeployDir / "dra")};
}

std::string Describe(const KitObject& object) {
  return absl::StrCat(
      object.file, ": ", object.Kind(), " ",
      object.Namespace().empty() ? "" : object.Namespace() + "/",
      object.Name());
}

// The kinds this kit uses that have no namespace.
bool ClusterScoped(const std::string& kind) {
  static const std::set<std::string> kKinds = {
      "ClusterRole",
      "ClusterRoleBinding",
      "DeviceClass",
      "MutatingWebhookConfiguration",
      "Namespace",
      "PriorityClass",
      "ValidatingWebhookConfiguration",
      "ValidatingAdmissionPolicy",
      "ValidatingAdmissionPolicyBinding"};
  return kKinds.contains(kind);
}

// Objects a kit may name without holding them.
struct Elsewhere {
  const char* kind;
  const char* ns;
  const char* name;
  const char* why;
};
constexpr Elsewhere kMadeElsewhere[] = {
    // Every cluster's: kube-apiserver's bootstrap RBAC.
    {"Role", "kube-system", "extension-apiserver-authentication-reader",
     "built in (kube-apiserver's bootstrap roles)"},
    // The serving certificate is made per cluster, never committed:
    // CertsScriptTest checks the Secrets the script writes.
    {"Secret", "kube-system", "deviceshare-scheduler-tls",
     "made by deploy/certs.sh"},
    {"Secret", "kube-system", "deviceshare-kube-scheduler-client-tls",
     "made by deploy/certs.sh"},
};

bool MadeElsewhere(const std::string& kind, const std::string& ns,
                   const std::string& name) {
  // Every cluster role and binding named system:... is built in.
  if ((kind == "ClusterRole" || kind == "Role") &&
      absl::StartsWith(name, "system:")) {
    return true;
  }
  for (const Elsewhere& entry : kMadeElsewhere) {
    if (kind == entry.kind && ns == entry.ns && name == entry.name) {
      return true;
    }
  }
  return false;
}

// "" when the kit holds (or may name) kind ns/name, else the problem.
std::string Missing(const Kit& kit, const KitObject& from,
                    const std::string& what, const std::string& kind,
                    const std::string& ns, const std::string& name) {
  if (kit.Find(kind, ns, name) != nullptr || MadeElsewhere(kind, ns, name)) {
    return "";
  }
  return absl::StrCat(Describe(from), ": ", what, " names ", kind, " ",
                      ns.empty() ? "" : ns + "/", name, ", not in ", kit.name);
}

void AddIfMissing(std::vector<std::string>& problems, std::string problem) {
  if (!problem.empty()) problems.push_back(std::move(problem));
}

// A pod template of a workload (or a bare Pod) and what selects it.
struct PodTemplate {
  const KitObject* owner;
  json labels;
  json spec;
};

std::vector<PodTemplate> PodTemplates(const Kit& kit) {
  std::vector<PodTemplate> pods;
  for (const KitObject& object : kit.objects) {
    const json& spec = object.object.value("spec", json::object());
    const std::string kind = object.Kind();
    if (kind == "Pod") {
      pods.push_back({&object,
                      object.object["metadata"].value("labels", json::object()),
                      spec});
    } else if (kind == "CronJob") {
      const json& t = spec["jobTemplate"]["spec"]["template"];
      pods.push_back(
          {&object, t["metadata"].value("labels", json::object()), t["spec"]});
    } else if (spec.contains("template") && spec["template"].contains("spec")) {
      const json& t = spec["template"];
      pods.push_back(
          {&object,
           t.value("metadata", json::object()).value("labels", json::object()),
           t["spec"]});
    }
  }
  return pods;
}

// Every container of a pod spec, init containers included.
std::vector<const json*> Containers(const json& pod_spec) {
  std::vector<const json*> containers;
  for (const char* list : {"initContainers", "containers"}) {
    if (!pod_spec.contains(list)) continue;
    for (const json& container : pod_spec[list]) {
      containers.push_back(&container);
    }
  }
  return containers;
}

// Namespaced objects say their namespace (the kits set none for them).
std::vector<std::string> NamespaceProblems(const Kit& kit) {
  std::vector<std::string> problems;
  for (const KitObject& object : kit.objects) {
    if (ClusterScoped(object.Kind()) != object.Namespace().empty()) {
      problems.push_back(Describe(object) +
                         (object.Namespace().empty()
                              ? ": a namespaced kind without a namespace"
                              : ": a cluster-scoped kind with a namespace"));
    }
  }
  return problems;
}

// serviceAccountName, priorityClassName, and the ConfigMaps and Secrets of
// volumes (projected ones too) and of env/envFrom.
std::vector<std::string> PodReferenceProblems(const Kit& kit) {
  std::vector<std::string> problems;
  for (const PodTemplate& pod : PodTemplates(kit)) {
    const std::string ns = pod.owner->Namespace();
    const KitObject& from = *pod.owner;
    AddIfMissing(problems,
                 Missing(kit, from, "serviceAccountName", "ServiceAccount", ns,
                         pod.spec.value("serviceAccountName", "default")));
    const std::string priority = pod.spec.value("priorityClassName", "");
    if (!priority.empty() && !absl::StartsWith(priority, "system-")) {
      AddIfMissing(problems, Missing(kit, from, "priorityClassName",
                                     "PriorityClass", "", priority));
    }
    std::vector<json> sources;
    for (const json& volume : pod.spec.value("volumes", json::array())) {
      sources.push_back(volume);
      if (volume.contains("projected")) {
        for (const json& source : volume["projected"]["sources"]) {
          sources.push_back(source);
        }
      }
    }
    for (const json* container : Containers(pod.spec)) {
      for (const json& env : container->value("env", json::array())) {
        const json& from_ref = env.value("valueFrom", json::object());
        if (from_ref.contains("configMapKeyRef")) {
          sources.push_back({{"configMap", from_ref["configMapKeyRef"]}});
        }
        if (from_ref.contains("secretKeyRef")) {
          sources.push_back({{"secret", from_ref["secretKeyRef"]}});
        }
      }
      for (const json& env : container->value("envFrom", json::array())) {
        if (env.contains("configMapRef")) {
          sources.push_back({{"configMap", env["configMapRef"]}});
        }
        if (env.contains("secretRef")) {
          sources.push_back({{"secret", env["secretRef"]}});
        }
      }
    }
    for (const json& source : sources) {
      if (source.contains("configMap") &&
          !source["configMap"].value("optional", false)) {
        AddIfMissing(problems,
                     Missing(kit, from, "a volume or env", "ConfigMap", ns,
                             source["configMap"].value("name", "")));
      }
      if (source.contains("secret") &&
          !source["secret"].value("optional", false)) {
        const json& secret = source["secret"];
        AddIfMissing(
            problems,
            Missing(kit, from, "a volume or env", "Secret", ns,
                    secret.value("secretName", secret.value("name", ""))));
      }
    }
  }
  return problems;
}

// RoleBindings and ClusterRoleBindings: their role and their subjects.
std::vector<std::string> BindingProblems(const Kit& kit) {
  std::vector<std::string> problems;
  for (const KitObject& object : kit.objects) {
    const std::string kind = object.Kind();
    if (kind != "RoleBinding" && kind != "ClusterRoleBinding") continue;
    const json& role = object.object["roleRef"];
    const std::string role_kind = role.value("kind", "");
    AddIfMissing(problems,
                 Missing(kit, object, "roleRef", role_kind,
                         role_kind == "Role" ? object.Namespace() : "",
                         role.value("name", "")));
    if (role_kind == "Role" && kind == "ClusterRoleBinding") {
      problems.push_back(Describe(object) + ": binds a Role cluster-wide");
    }
    for (const json& subject : object.object.value("subjects", json::array())) {
      if (subject.value("kind", "") != "ServiceAccount") continue;
      AddIfMissing(problems,
                   Missing(kit, object, "a subject", "ServiceAccount",
                           subject.value("namespace", object.Namespace()),
                           subject.value("name", "")));
    }
  }
  return problems;
}

// The pods a Service selects.
std::vector<const PodTemplate*> Selected(const std::vector<PodTemplate>& pods,
                                         const KitObject& service) {
  std::vector<const PodTemplate*> selected;
  const json& selector =
      service.object["spec"].value("selector", json::object());
  if (selector.empty()) return selected;
  for (const PodTemplate& pod : pods) {
    if (pod.owner->Namespace() != service.Namespace()) continue;
    bool matches = true;
    for (const auto& [label, value] : selector.items()) {
      matches &= pod.labels.value(label, json()) == value;
    }
    if (matches) selected.push_back(&pod);
  }
  return selected;
}

// A container port that `target` (a Service port's targetPort: a name or a
// number) reaches in one of `pods`, and the container that has it.
struct Reached {
  const json* container = nullptr;
  const json* port = nullptr;
};
Reached Reach(const std::vector<const PodTemplate*>& pods, const json& target) {
  for (const PodTemplate* pod : pods) {
    for (const json* container : Containers(pod->spec)) {
      if (!container->contains("ports")) continue;
      // By reference into the pod: the result points at the port.
      for (const json& port : (*container)["ports"]) {
        if ((target.is_string() && port.value("name", "") == target) ||
            (target.is_number() && port.value("containerPort", 0) == target)) {
          return {container, &port};
        }
      }
    }
  }
  return {};
}

// Each Service selects pods of the kit, and each of its ports reaches one
// of their container ports.
std::vector<std::string> ServiceProblems(const Kit& kit) {
  std::vector<std::string> problems;
  const std::vector<PodTemplate> pods = PodTemplates(kit);
  for (const KitObject& service : kit.objects) {
    if (service.Kind() != "Service") continue;
    const std::vector<const PodTemplate*> selected = Selected(pods, service);
    if (selected.empty()) {
      problems.push_back(Describe(service) + ": selects no pod of the kit");
      continue;
    }
    for (const json& port : service.object["spec"]["ports"]) {
      const json target = port.value("targetPort", port.value("port", json()));
      if (Reach(selected, target).port == nullptr) {
        problems.push_back(absl::StrCat(Describe(service), ": port ",
                                        port.dump(),
                                        " reaches no container "
                                        "port of the pods it selects"));
      }
    }
  }
  return problems;
}

// What `binary [subcommand] --help` prints.
std::string HelpOf(const std::string& binary, const std::string& subcommand) {
  std::string text;
  FILE* pipe = popen(
      absl::StrCat("'", binary, "' ", subcommand, " --help 2>&1").c_str(), "r");
  if (pipe == nullptr) return text;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) {
    text.append(buffer, n);
  }
  pclose(pipe);
  return text;
}

// Our binaries, by the name a container's command runs, and their --help
// per subcommand (filled on first use).
struct Binaries {
  std::map<std::string, std::string> path = {
      {"deviceshare-scheduler", DEVICESHARE_SCHEDULER_BIN},
      {"deviceshare-node-agent", DEVICESHARE_NODE_AGENT_BIN}};
  std::map<std::string, std::string> help;

  const std::string& Help(const std::string& binary,
                          const std::string& subcommand) {
    const std::string key = binary + " " + subcommand;
    if (!help.contains(key)) help[key] = HelpOf(path.at(binary), subcommand);
    return help[key];
  }
};

// A container's command line, command then args.
std::vector<std::string> CommandLine(const json& container) {
  std::vector<std::string> line;
  for (const char* part : {"command", "args"}) {
    for (const json& word : container.value(part, json::array())) {
      line.push_back(word.get<std::string>());
    }
  }
  return line;
}

bool HelpNames(const std::string& help, const std::string& word) {
  return std::regex_search(help,
                           std::regex("(^|[^-a-z])" + word + "([^-a-z]|$)"));
}

// Every container that runs one of our binaries passes a subcommand and
// flags that binary's --help names.
std::vector<std::string> FlagProblems(const Kit& kit, Binaries& binaries) {
  std::vector<std::string> problems;
  for (const PodTemplate& pod : PodTemplates(kit)) {
    for (const json* container : Containers(pod.spec)) {
      const std::vector<std::string> line = CommandLine(*container);
      if (line.empty() || !binaries.path.contains(line[0])) continue;
      const std::string where = absl::StrCat(
          Describe(*pod.owner), ": container ", container->value("name", ""));
      if (line.size() < 2 || absl::StartsWith(line[1], "-")) {
        problems.push_back(where + ": no subcommand");
        continue;
      }
      const std::string& help = binaries.Help(line[0], line[1]);
      if (!HelpNames(help, line[1])) {
        problems.push_back(absl::StrCat(where, ": `", line[0], " ", line[1],
                                        "` is not a command its --help names"));
      }
      for (size_t i = 2; i < line.size(); ++i) {
        if (!absl::StartsWith(line[i], "--")) continue;  // a flag's value
        const std::string flag = line[i].substr(0, line[i].find('='));
        if (!HelpNames(help, flag)) {
          problems.push_back(absl::StrCat(where, ": ", flag, " is not in `",
                                          line[0], " ", line[1], " --help`"));
        }
      }
    }
  }
  return problems;
}

// The webhook listener of deviceshare-scheduler serve: POST /webhook on
// --webhook-port, a container port named webhook.
constexpr char kWebhookPath[] = "/webhook";
constexpr char kWebhookPortName[] = "webhook";

// Every webhook configuration calls a Service of the kit on a port that
// reaches the scheduler's webhook listener, at its path.
std::vector<std::string> WebhookProblems(const Kit& kit, Binaries& binaries) {
  std::vector<std::string> problems;
  const std::vector<PodTemplate> pods = PodTemplates(kit);
  for (const KitObject& object : kit.objects) {
    if (object.Kind() != "MutatingWebhookConfiguration" &&
        object.Kind() != "ValidatingWebhookConfiguration") {
      continue;
    }
    for (const json& hook : object.object["webhooks"]) {
      const std::string where =
          absl::StrCat(Describe(object), ": webhook ", hook.value("name", ""));
      const json& client = hook["clientConfig"];
      if (!client.contains("service")) {
        problems.push_back(where + ": calls no Service of the kit");
        continue;
      }
      const json& ref = client["service"];
      const KitObject* service = kit.Find("Service", ref.value("namespace", ""),
                                          ref.value("name", ""));
      if (service == nullptr) {
        problems.push_back(absl::StrCat(where, ": Service ", ref.dump(),
                                        " is not in ", kit.name));
        continue;
      }
      if (ref.value("path", "") != kWebhookPath) {
        problems.push_back(absl::StrCat(where, ": path ", ref.value("path", ""),
                                        ", the listener's is ", kWebhookPath));
      }
      const json* port = nullptr;
      for (const json& p : service->object["spec"]["ports"]) {
        if (p.value("port", 0) == ref.value("port", 443)) port = &p;
      }
      if (port == nullptr) {
        problems.push_back(absl::StrCat(where, ": ", Describe(*service),
                                        " has no port ",
                                        ref.value("port", 443)));
        continue;
      }
      const Reached reached =
          Reach(Selected(pods, *service),
                port->value("targetPort", port->value("port", json())));
      if (reached.port == nullptr) continue;  // ServiceProblems says so
      if (reached.port->value("name", "") != kWebhookPortName) {
        problems.push_back(absl::StrCat(where, ": reaches container port ",
                                        reached.port->dump(),
                                        ", not the one "
                                        "named ",
                                        kWebhookPortName));
      }
      const std::vector<std::string> line = CommandLine(*reached.container);
      const std::string listening =
          line.size() >= 2 && line[0] == "deviceshare-scheduler"
              ? ArgValueOr(line, "--webhook-port")
              : "";
      if (listening !=
          std::to_string(reached.port->value("containerPort", 0))) {
        problems.push_back(absl::StrCat(
            where, ": reaches container port ", reached.port->dump(),
            ", where deviceshare-scheduler serve --webhook-port is \"",
            listening, "\""));
      }
      // The help may wrap between the method and the path.
      if (!std::regex_search(binaries.Help("deviceshare-scheduler", "serve"),
                             std::regex(absl::StrCat("POST\\s+", kWebhookPath,
                                                     "([^-a-z/]|$)")))) {
        problems.push_back(
            absl::StrCat("`deviceshare-scheduler serve --help` "
                         "does not name POST ",
                         kWebhookPath));
      }
    }
  }
  return problems;
}

// The image name of a reference (no tag or digest) and its tag.
std::pair<std::string, std::string> SplitImage(std::string image) {
  image = image.substr(0, image.find('@'));
  const size_t colon = image.rfind(':');
  if (colon == std::string::npos ||
      image.find('/', colon) != std::string::npos) {
    return {image, ""};
  }
  return {image.substr(0, colon), image.substr(colon + 1)};
}

// The one image the kits run that is not ours: kube-scheduler, pinned to a
// release.
bool PinnedKubeScheduler(const std::string& name, const std::string& tag) {
  return name == "registry.k8s.io/kube-scheduler" &&
         std::regex_match(tag, std::regex("v[0-9]+\\.[0-9]+\\.[0-9]+"));
}

// Every container's image is an `images:` entry of the kustomization (with
// that entry's tag), but the pinned kube-scheduler; every entry is used.
std::vector<std::string> ImageProblems(const Kit& kit) {
  std::vector<std::string> problems;
  std::map<std::string, std::string> tags;  // name -> newTag
  for (const json& entry : kit.kustomization.value("images", json::array())) {
    tags[entry.value("name", "")] = entry.value("newTag", "");
  }
  std::set<std::string> used;
  for (const PodTemplate& pod : PodTemplates(kit)) {
    for (const json* container : Containers(pod.spec)) {
      const std::string image = container->value("image", "");
      const auto [name, tag] = SplitImage(image);
      const std::string where =
          absl::StrCat(Describe(*pod.owner), ": container ",
                       container->value("name", ""), ": image ", image);
      if (PinnedKubeScheduler(name, tag)) continue;
      if (!tags.contains(name)) {
        problems.push_back(absl::StrCat(where, " is not in ", kit.name,
                                        "/kustomization.yaml's images"));
        continue;
      }
      used.insert(name);
      if (!tag.empty() && tag != tags[name]) {
        problems.push_back(absl::StrCat(where,
                                        ": the kustomization's newTag "
                                        "is ",
                                        tags[name]));
      }
    }
  }
  for (const auto& [name, tag] : tags) {
    if (!used.contains(name)) {
      problems.push_back(absl::StrCat(kit.name, "/kustomization.yaml: image ",
                                      name, " is run by no container"));
    }
  }
  return problems;
}

// All the checks, each a name and its problems over one kit.
std::map<std::string, std::vector<std::string>> AllProblems(
    const Kit& kit, Binaries& binaries) {
  return {{"namespaces", NamespaceProblems(kit)},
          {"pods", PodReferenceProblems(kit)},
          {"bindings", BindingProblems(kit)},
          {"services", ServiceProblems(kit)},
          {"webhooks", WebhookProblems(kit, binaries)},
          {"images", ImageProblems(kit)},
          {"flags", FlagProblems(kit, binaries)}};
}

TEST(KitReferencesTest, EveryReferenceResolves) {
  Binaries binaries;
  for (const Kit& kit : Kits()) {
    for (const auto& [check, problems] : AllProblems(kit, binaries)) {
      EXPECT_THAT(problems, IsEmpty()) << kit.name << ", " << check;
    }
  }
}

TEST(KitReferencesTest, KitsHoldWhatTheyAreFor) {
  // The references above are only worth as much as what the kits hold.
  std::map<std::string, std::set<std::string>> kinds;
  for (const Kit& kit : Kits()) {
    for (const KitObject& object : kit.objects) {
      kinds[kit.name].insert(object.Kind());
    }
  }
  for (const char* kind :
       {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "RoleBinding",
        "ConfigMap", "Deployment", "Service", "DaemonSet"}) {
    EXPECT_TRUE(kinds["deploy"].contains(kind)) << kind;
  }
  for (const char* kind :
       {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "ConfigMap",
        "DaemonSet", "DeviceClass"}) {
    EXPECT_TRUE(kinds["deploy/dra"].contains(kind)) << kind;
  }
}

// Each check finds a reference broken on purpose: the kit, changed in one
// place, must give a problem naming it.
class BrokenKitTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (Kit& kit : Kits()) kits_[kit.name] = std::move(kit);
  }

  // The first object of `kind` (named `name` when given) in kit `kit`.
  json& Mutable(const std::string& kit, const std::string& kind,
                const std::string& name = "") {
    for (KitObject& object : kits_[kit].objects) {
      if (object.Kind() == kind && (name.empty() || object.Name() == name)) {
        return object.object;
      }
    }
    ADD_FAILURE() << "no " << kind << " " << name << " in " << kit;
    static json null;
    return null;
  }

  json& PodSpec(const std::string& kit, const std::string& kind) {
    return Mutable(kit, kind)["spec"]["template"]["spec"];
  }

  // The problems of `check` over kit `kit`, which must name `needle`.
  void ExpectProblem(const std::string& kit, const std::string& check,
                     const std::string& needle) {
    const std::vector<std::string> problems =
        AllProblems(kits_[kit], binaries_)[check];
    EXPECT_THAT(problems, Contains(HasSubstr(needle))) << kit << ", " << check;
  }

  std::map<std::string, Kit> kits_;
  Binaries binaries_;
};

TEST_F(BrokenKitTest, ServiceAccountMissing) {
  PodSpec("deploy", "Deployment")["serviceAccountName"] = "nobody";
  ExpectProblem("deploy", "pods", "ServiceAccount kube-system/nobody");
  PodSpec("deploy/dra", "DaemonSet")["serviceAccountName"] = "nobody";
  ExpectProblem("deploy/dra", "pods", "ServiceAccount kube-system/nobody");
}

TEST_F(BrokenKitTest, ConfigMapAndSecretMissing) {
  json& volumes = PodSpec("deploy", "DaemonSet")["volumes"];
  volumes.push_back({{"name", "x"}, {"configMap", {{"name", "no-such-map"}}}});
  volumes.push_back(
      {{"name", "y"}, {"secret", {{"secretName", "no-such-secret"}}}});
  ExpectProblem("deploy", "pods", "ConfigMap kube-system/no-such-map");
  ExpectProblem("deploy", "pods", "Secret kube-system/no-such-secret");
}

TEST_F(BrokenKitTest, BindingToMissingRoleOrAccount) {
  json& binding =
      Mutable("deploy", "ClusterRoleBinding", "deviceshare-scheduler");
  binding["roleRef"]["name"] = "no-such-role";
  binding["subjects"][0]["name"] = "no-such-account";
  ExpectProblem("deploy", "bindings", "ClusterRole no-such-role");
  ExpectProblem("deploy", "bindings",
                "ServiceAccount kube-system/no-such-account");
  Mutable("deploy/dra", "ClusterRoleBinding")["subjects"][0]["namespace"] =
      "default";
  ExpectProblem("deploy/dra", "bindings", "ServiceAccount default/");
}

TEST_F(BrokenKitTest, ServiceSelectsNothingOrMissesItsPort) {
  json& service = Mutable("deploy", "Service");
  service["spec"]["ports"][0]["targetPort"] = "no-such-port";
  ExpectProblem("deploy", "services", "no-such-port");
  service["spec"]["selector"] = {{"app.kubernetes.io/name", "nothing"}};
  ExpectProblem("deploy", "services", "selects no pod");
}

TEST_F(BrokenKitTest, WebhookMissesServicePortPathOrListener) {
  json& hook = Mutable("deploy", "MutatingWebhookConfiguration")["webhooks"][0];
  const json good = hook;
  hook["clientConfig"]["service"]["path"] = "/mutate";
  ExpectProblem("deploy", "webhooks", "path /mutate");
  hook = good;
  hook["clientConfig"]["service"]["port"] = 8443;
  ExpectProblem("deploy", "webhooks", "has no port 8443");
  hook = good;
  hook["clientConfig"]["service"]["name"] = "elsewhere";
  ExpectProblem("deploy", "webhooks", "elsewhere");
  hook = good;
  // The Service port reaches the extender's port, not the listener.
  for (json& port : Mutable("deploy", "Service")["spec"]["ports"]) {
    if (port["port"] == 443) port["targetPort"] = "https";
  }
  ExpectProblem("deploy", "webhooks", "not the one named webhook");
}

TEST_F(BrokenKitTest, WebhookPortIsNotWhereServeListens) {
  for (json& container : PodSpec("deploy", "Deployment")["containers"]) {
    if (container["name"] != "deviceshare-scheduler") continue;
    for (json& port : container["ports"]) {
      if (port["name"] == "webhook") port["containerPort"] = 9444;
    }
  }
  ExpectProblem("deploy", "webhooks", "--webhook-port is \"9443\"");
}

TEST_F(BrokenKitTest, ImageNotInTheKustomization) {
  PodSpec("deploy", "DaemonSet")["containers"][0]["image"] =
      "elsewhere/agent:1";
  ExpectProblem("deploy", "images", "elsewhere/agent:1 is not in deploy/");
  PodSpec("deploy/dra", "DaemonSet")["containers"][0]["image"] =
      "deviceshare-node-agent:9.9.9";
  ExpectProblem("deploy/dra", "images", "newTag is");
  for (json& container : PodSpec("deploy", "Deployment")["containers"]) {
    if (container["name"] == "kube-scheduler") {
      container["image"] = "registry.k8s.io/kube-scheduler:latest";
    }
  }
  ExpectProblem("deploy", "images", "kube-scheduler:latest");
}

TEST_F(BrokenKitTest, FlagTheBinaryDoesNotKnow) {
  PodSpec("deploy", "DaemonSet")["containers"][0]["args"].push_back(
      "--no-such-flag=1");
  ExpectProblem("deploy", "flags", "--no-such-flag is not in");
  for (json& container : PodSpec("deploy", "Deployment")["containers"]) {
    if (container["name"] == "deviceshare-scheduler") {
      container["args"].push_back("--webhook-portt");
    }
  }
  ExpectProblem("deploy", "flags", "--webhook-portt is not in");
  PodSpec("deploy/dra", "DaemonSet")["containers"][0]["args"][0] = "servee";
  ExpectProblem("deploy/dra", "flags", "servee` is not a command");
}

TEST_F(BrokenKitTest, NamespaceMissing) {
  Mutable("deploy", "ConfigMap")["metadata"].erase("namespace");
  ExpectProblem("deploy", "namespaces", "without a namespace");
}

// ---- The node agent's --help and the DaemonSets
// ------------------------------

// `deviceshare-node-agent --help`'s flag entries of one command's section
// ("discover flags:", "serve flags:"): flag -> its text, lines joined.
std::map<std::string, std::string> AgentHelpEntries(
    const std::string& help, const std::string& section) {
  std::map<std::string, std::string> entries;
  std::istringstream lines(help);
  std::string line, flag;
  bool in_section = false;
  while (std::getline(lines, line)) {
    if (line == section) {
      in_section = true;
      continue;
    }
    if (!in_section) continue;
    if (line.empty() || line[0] != ' ') break;
    if (absl::StartsWith(line, "  --")) {
      flag = line.substr(2, line.find(' ', 2) - 2);
      entries[flag] = line;
    } else if (!flag.empty()) {
      entries[flag] +=
          " " + std::string(absl::StripLeadingAsciiWhitespace(line));
    }
  }
  return entries;
}

// The default an entry gives: the text of its last "(default ...)".
std::string DefaultOf(const std::string& entry) {
  const size_t at = entry.rfind("(default ");
  if (at == std::string::npos) return "";
  const size_t start = at + std::string("(default ").size();
  return entry.substr(start, entry.rfind(')') - start);
}

TEST(NodeAgentHelpTest, EveryFlagGivesItsDefault) {
  const std::string help = HelpOf(DEVICESHARE_NODE_AGENT_BIN, "");
  for (const char* section : {"discover flags:", "serve flags:"}) {
    const std::map<std::string, std::string> entries =
        AgentHelpEntries(help, section);
    EXPECT_GE(entries.size(), 8u) << section << "\n" << help;
    for (const auto& [flag, entry] : entries) {
      EXPECT_NE(DefaultOf(entry), "") << section << " " << entry;
    }
  }
  const std::map<std::string, std::string> serve =
      AgentHelpEntries(help, "serve flags:");
  EXPECT_EQ(DefaultOf(serve.at("--dialect")), "hami");
  EXPECT_EQ(DefaultOf(serve.at("--health-interval")), "5s");
  EXPECT_EQ(DefaultOf(serve.at("--dra")), "false");
  EXPECT_EQ(DefaultOf(serve.at("--nvml-library")), "libnvidia-ml.so.1");
}

// The DaemonSets spell out the agent's directories "as the defaults" (their
// hostPath mounts must match them): the values are the defaults --help
// gives, so dropping a flag changes nothing.
TEST(NodeAgentHelpTest, DaemonSetDirectoriesAreTheDefaults) {
  const std::map<std::string, std::string> serve =
      AgentHelpEntries(HelpOf(DEVICESHARE_NODE_AGENT_BIN, ""), "serve flags:");
  for (const Kit& kit : Kits()) {
    for (const PodTemplate& pod : PodTemplates(kit)) {
      for (const json* container : Containers(pod.spec)) {
        const std::vector<std::string> line = CommandLine(*container);
        if (line.empty() || line[0] != "deviceshare-node-agent") continue;
        for (const std::string& word : line) {
          const size_t equals = word.find('=');
          const std::string flag = word.substr(0, equals);
          if (equals == std::string::npos ||
              !(absl::EndsWith(flag, "-dir") || flag == "--hook-path" ||
                flag == "--mps-root")) {
            continue;
          }
          ASSERT_TRUE(serve.contains(flag)) << flag;
          EXPECT_EQ(word.substr(equals + 1), DefaultOf(serve.at(flag)))
              << kit.name << ": " << flag;
        }
      }
    }
  }
}

}  // namespace
}  // namespace deviceshare
