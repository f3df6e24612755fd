// examples/deploy: every manifest parses, and the pieces that must agree
// (the extender's verbs and managed resources, the config file, mounts,
// ports, names) do.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/config/config_parser.h"
#include "deviceshare/k8s/yaml_json.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "status_matchers.h"

namespace deviceshare {
namespace {

using ::nlohmann::json;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAreArray;

const std::filesystem::path kDeployDir =
    std::filesystem::path(DEVICESHARE_EXAMPLES_DIR) / "deploy";

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

// Every document of every file in examples/deploy, keyed "Kind/name".
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

  std::map<std::string, json> objects_;
};

TEST_F(DeployManifestsTest, KustomizationListsEveryManifest) {
  std::vector<std::string> manifests;
  for (const std::string& file : YamlFiles()) {
    if (file != "kustomization.yaml") manifests.push_back(file);
  }
  EXPECT_THAT(Object("Kustomization/kustomization.yaml")["resources"]
                  .get<std::vector<std::string>>(),
              UnorderedElementsAreArray(manifests));
  EXPECT_EQ(manifests.size(), 5u);
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

  std::vector<std::string> managed;
  std::vector<std::string> mig_profiles;
  for (const json& resource : extender["managedResources"]) {
    const std::string name = resource["name"].get<std::string>();
    EXPECT_EQ(resource["ignoredByScheduler"], true) << name;
    if (absl::StartsWith(name, keys::kMigResourcePrefix)) {
      EXPECT_THAT(name, ::testing::MatchesRegex("nvidia\\.com/mig-[1-7]g\\."
                                                "[0-9]+gb"));
      mig_profiles.push_back(name);
    } else {
      managed.push_back(name);
    }
  }
  EXPECT_THAT(
      managed,
      UnorderedElementsAreArray<std::string>(
          {keys::kHamiGpu, keys::kHamiGpuMemory, keys::kHamiGpuMemoryPercentage,
           keys::kHamiGpuCores, keys::kHamiPriority, keys::kVolcanoGpuNumber,
           keys::kVolcanoGpuMemory, keys::kVolcanoGpuMemoryPercentage,
           keys::kVolcanoGpuCores}));
  // The MIG profiles of the catalog's GPUs (A100, H100, H200, A30, ...).
  EXPECT_THAT(mig_profiles,
              ::testing::IsSupersetOf(
                  {"nvidia.com/mig-1g.10gb", "nvidia.com/mig-3g.40gb",
                   "nvidia.com/mig-1g.5gb", "nvidia.com/mig-7g.141gb"}));
}

TEST_F(DeployManifestsTest, DeviceshareConfigLoadsAndMatchesTheExample) {
  const json& config_map = Object("ConfigMap/deviceshare-config");
  auto in_map = ParseConfigYaml(
      config_map["data"]["deviceshare.yaml"].get<std::string>());
  ASSERT_OK(in_map);
  auto example = ParseConfigYaml(ReadFile(
      std::filesystem::path(DEVICESHARE_EXAMPLES_DIR) / "deviceshare.yaml"));
  ASSERT_OK(example);
  EXPECT_TRUE(*in_map == *example)
      << "configmap.yaml's deviceshare.yaml differs from "
         "examples/deviceshare.yaml";
  EXPECT_TRUE(in_map->notices.empty());

  // The whole ConfigMap object is a valid --config too.
  auto whole = ParseConfigYaml(config_map.dump());
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

  std::set<std::string> bound_roles;
  for (const auto& [key, object] : objects_) {
    if (object["kind"] != "ClusterRoleBinding" &&
        object["kind"] != "RoleBinding") {
      continue;
    }
    ASSERT_EQ(object["subjects"].size(), 1u) << key;
    EXPECT_EQ(object["subjects"][0]["name"], account) << key;
    bound_roles.insert(object["roleRef"]["name"].get<std::string>());
  }
  EXPECT_EQ(
      bound_roles,
      std::set<std::string>({"system:kube-scheduler", "system:volume-scheduler",
                             "extension-apiserver-authentication-reader",
                             "deviceshare-scheduler"}));

  // resource -> verbs, over the rules of our ClusterRole.
  std::map<std::string, std::set<std::string>> granted;
  std::set<std::string> lease_names;
  for (const json& rule :
       Object("ClusterRole/deviceshare-scheduler")["rules"]) {
    for (const json& resource : rule["resources"]) {
      const std::string name = resource.get<std::string>();
      for (const json& verb : rule["verbs"]) {
        granted[name].insert(verb.get<std::string>());
      }
      if (name == "leases" && rule.contains("resourceNames")) {
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
  has("events", {"create", "patch"});
  has("leases", {"create", "get", "update"});
  EXPECT_THAT(
      lease_names,
      Contains(SchedulerConfiguration()["leaderElection"]["resourceName"]
                   .get<std::string>()));
}

}  // namespace
}  // namespace deviceshare
