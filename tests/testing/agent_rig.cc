#include "testing/agent_rig.h"

#include <signal.h>
#include <unistd.h>

#include <fstream>

#include "absl/strings/str_cat.h"

namespace deviceshare::testing {

AgentRig::AgentRig(AgentRigOptions options) : options_(std::move(options)) {}

std::string AgentRig::Uuid(int index) {
  return absl::StrCat("GPU-", 10000000 + index, "-aaaa-bbbb-cccc-dddddddddddd");
}

absl::StatusOr<std::unique_ptr<AgentRig>> AgentRig::Create(
    AgentRigOptions options) {
  std::unique_ptr<AgentRig> rig(new AgentRig(std::move(options)));
  // A unix socket path must stay under 108 bytes: keep the name short.
  static int counter = 0;
  rig->dir_ = std::filesystem::temp_directory_path() /
              absl::StrCat("ds-agent-", getpid(), "-", counter++);
  std::filesystem::remove_all(rig->dir_);
  std::filesystem::create_directories(rig->dir_ / "plugins");
  nlohmann::json gpus = nlohmann::json::array();
  for (int i = 0; i < rig->options_.gpus; ++i) {
    gpus.push_back({{"uuid", Uuid(i)},
                    {"index", i},
                    {"model", "NVIDIA H100 80GB HBM3"},
                    {"memory_mib", 81559},
                    {"sm_count", 132},
                    {"pci_device_id", "0x2330"},
                    {"mig_capable", true},
                    {"health", "healthy"}});
  }
  rig->WriteInventory({{"gpus", gpus}});
  std::ofstream(rig->dir_ / "config.yaml")
      << "nvidia:\n  deviceSplitCount: " << rig->options_.split << "\n"
      << rig->options_.config_extra;
  rig->api_.UpsertNode({{"apiVersion", "v1"},
                        {"kind", "Node"},
                        {"metadata", {{"name", rig->options_.node}}}});
  rig->kubeconfig_ = rig->api_.WriteKubeconfig(rig->dir_.string());
  rig->kubelet_ =
      std::make_unique<TestKubelet>((rig->dir_ / "plugins").string());
  absl::Status started = rig->kubelet_->Start();
  if (!started.ok()) return started;
  return rig;
}

AgentRig::~AgentRig() {
  agent_.reset();
  kubelet_.reset();
  std::filesystem::remove_all(dir_);
}

absl::Status AgentRig::StartAgent() {
  KillAgent();
  std::vector<std::string> args = {"serve",
                                   "--node-name",
                                   options_.node,
                                   "--kubeconfig",
                                   kubeconfig_,
                                   "--device-plugin-dir",
                                   (dir_ / "plugins").string(),
                                   "--state-dir",
                                   (dir_ / "state").string(),
                                   "--nvml-library",
                                   DEVICESHARE_FAKE_NVML_LIB,
                                   "--hook-path",
                                   (dir_ / "vgpu").string(),
                                   "--config",
                                   (dir_ / "config.yaml").string()};
  std::string ready = absl::StrCat("serving ", kResource, " on ");
  if (options_.dra) {
    for (const char* flag :
         {"--dra", "--dra-plugin-dir", "dra-plugins", "--dra-registry-dir",
          "dra-registry", "--cdi-dir", "cdi"}) {
      args.push_back(flag[0] == '-' ? flag : DraDir(flag));
    }
    ready = "DRA driver ";
  }
  args.insert(args.end(), options_.extra_args.begin(),
              options_.extra_args.end());
  agent_ = std::make_unique<ServerProcess>(
      DEVICESHARE_NODE_AGENT_BIN, std::move(args), ready,
      std::vector<std::string>{
          absl::StrCat("FAKE_NVML_INVENTORY=", (dir_ / "gpus.json").string()),
          absl::StrCat("FAKE_NVML_STATE=",
                       (dir_ / "nvml-state.json").string())});
  return agent_->Start(absl::Seconds(20));
}

void AgentRig::KillAgent() {
  if (agent_ != nullptr) agent_->Kill(SIGKILL);
}

bool AgentRig::AllHealthy(absl::Duration timeout) {
  const size_t want = static_cast<size_t>(options_.gpus * options_.split);
  return kubelet_->WaitForDevices(
      kResource,
      [want](const std::vector<agent::AdvertisedDevice>& devices) {
        if (devices.size() != want) return false;
        for (const auto& device : devices) {
          if (!device.healthy) return false;
        }
        return true;
      },
      timeout);
}

nlohmann::json AgentRig::ReadInventory() const {
  std::ifstream in(dir_ / "gpus.json");
  return nlohmann::json::parse(in, nullptr, false);
}

void AgentRig::WriteInventory(const nlohmann::json& inventory) const {
  // Whole or not at all: fake NVML re-reads the file when it changes.
  const std::filesystem::path temp = dir_ / "gpus.json.tmp";
  std::ofstream(temp) << inventory.dump();
  std::filesystem::rename(temp, dir_ / "gpus.json");
}

std::vector<int> AgentRig::InstanceStarts(const std::string& gpu_uuid) const {
  std::ifstream file(dir_ / "nvml-state.json");
  const nlohmann::json state = nlohmann::json::parse(file, nullptr, false);
  std::vector<int> starts;
  if (!state.is_object() || !state.contains("gpus") ||
      !state["gpus"].contains(gpu_uuid)) {
    return starts;
  }
  for (const nlohmann::json& instance : state["gpus"][gpu_uuid]) {
    starts.push_back(instance.value("start", -1));
  }
  return starts;
}

std::string AgentRig::Log() const { return agent_ ? agent_->Log() : ""; }

}  // namespace deviceshare::testing
