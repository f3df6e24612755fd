// AgentRig: a GPU node without a GPU, for running the real
// `deviceshare-node-agent serve`: a directory holding the fake NVML
// inventory (H100s) and state, the device plugin directory with a
// TestKubelet serving kubelet.sock, and an in-memory API server with the
// Node. The agent runs as a child process on the fake libnvidia-ml.so.1,
// loaded through its real dlopen path. Used by the end-to-end tests and
// bench/node_agent_load.
#ifndef DEVICESHARE_TESTS_TESTING_AGENT_RIG_H_
#define DEVICESHARE_TESTS_TESTING_AGENT_RIG_H_

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "testing/fake_api_server.h"
#include "testing/server_process.h"
#include "testing/test_kubelet.h"

namespace deviceshare::testing {

struct AgentRigOptions {
  std::string node = "gpu-node";
  int gpus = 4;
  int split = 10;  // nvidia.deviceSplitCount in the agent's --config
  // More `serve` flags, e.g. {"--health-interval", "100ms"}.
  std::vector<std::string> extra_args;
  // Serve the DRA driver alone (--dra), its kubelet dirs and CDI specs in
  // the rig's directory (DraDir()); StartAgent returns once it serves.
  bool dra = false;
  // Appended to the agent's --config file, e.g. "scheduler:\n  modes: [mig]\n".
  std::string config_extra;
};

class AgentRig {
 public:
  static constexpr char kResource[] = "nvidia.com/gpu";

  // The directory, the inventory, the Node, and the kubelet (started).
  static absl::StatusOr<std::unique_ptr<AgentRig>> Create(
      AgentRigOptions options);
  ~AgentRig();  // kills the agent, stops the kubelet, removes the directory

  // GPU `index`'s uuid.
  static std::string Uuid(int index);

  // Starts the agent, killing a running one first with SIGKILL; returns
  // once it serves the device plugin.
  absl::Status StartAgent();
  // SIGKILL, as a node losing the process would.
  void KillAgent();
  // True once kubelet sees every replica healthy.
  bool AllHealthy(absl::Duration timeout = absl::Seconds(10));

  // The fake NVML inventory ({"gpus": [...]}); writing it is how a test
  // changes the hardware (health, MIG mode) under the agent.
  nlohmann::json ReadInventory() const;
  void WriteInventory(const nlohmann::json& inventory) const;
  // Start slices of the GPU instances fake NVML holds on `gpu_uuid`.
  std::vector<int> InstanceStarts(const std::string& gpu_uuid) const;

  // <dir>/<name>: "dra-plugins", "dra-registry", "cdi", "state".
  std::string DraDir(const std::string& name) const {
    return (dir_ / name).string();
  }

  FakeApiServer& api() { return api_; }
  TestKubelet& kubelet() { return *kubelet_; }
  const AgentRigOptions& options() const { return options_; }
  std::string Log() const;

 private:
  explicit AgentRig(AgentRigOptions options);

  const AgentRigOptions options_;
  std::filesystem::path dir_;
  FakeApiServer api_;
  std::string kubeconfig_;
  std::unique_ptr<TestKubelet> kubelet_;
  std::unique_ptr<ServerProcess> agent_;
};

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_AGENT_RIG_H_
