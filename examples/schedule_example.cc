// schedule_example: schedules the pods of a YAML file onto the nodes of
// another, through the deviceshare library, and prints where each pod went,
// why the others could not go anywhere, and what would be written to the
// pod and injected into its containers.
//
//   ./build/examples/schedule_example --nodes examples/nodes.yaml \
//       --pods examples/pods.yaml [--config examples/deviceshare.yaml]
//
// With neither --nodes nor --pods it schedules the bundled example
// (examples/nodes.yaml and examples/pods.yaml of the source tree it was
// built from).
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/clock.h"
#include "deviceshare/codec/yaml_json.h"
#include "deviceshare/config/config_parser.h"
#include "deviceshare/k8s/node_parser.h"
#include "deviceshare/k8s/pod_annotations.h"
#include "deviceshare/k8s/pod_parser.h"
#include "deviceshare/scheduler/scheduler.h"
#include "deviceshare/status_macros.h"

ABSL_FLAG(std::string, nodes, "",
          "YAML file of Kubernetes Node objects that "
          "carry a GPU registration annotation (Volcano or HAMi dialect)");
ABSL_FLAG(std::string, pods, "",
          "multi-document YAML of Pod manifests, "
          "scheduled in file order");
ABSL_FLAG(std::string, config, "", "optional deviceshare config YAML");

namespace deviceshare {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrFormat("cannot open %s", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

absl::Status WithFile(const std::string& path, absl::Status status) {
  if (status.ok()) return status;
  return absl::Status(status.code(),
                      absl::StrFormat("%s: %s", path, status.message()));
}

std::string DescribeDevices(const ContainerAllocation& container) {
  std::vector<std::string> parts;
  for (const DeviceGrant& grant : container.devices) {
    parts.push_back(absl::StrFormat("%s(%dMiB,%d%%)", grant.uuid,
                                    grant.memory_mib, grant.cores));
  }
  return parts.empty() ? "-" : absl::StrJoin(parts, " ");
}

// The config named by --config, defaults without one; its notices go to
// stderr.
absl::StatusOr<Config> LoadConfig() {
  Config config;
  if (!absl::GetFlag(FLAGS_config).empty()) {
    const std::string path = absl::GetFlag(FLAGS_config);
    DS_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
    auto parsed = ParseConfigYaml(text, BuiltinConfigExtensions());
    if (!parsed.ok()) return WithFile(path, parsed.status());
    config = *std::move(parsed);
    for (const std::string& notice : config.notices) {
      std::cerr << path << ": note: " << notice << "\n";
    }
  }
  return config;
}

// Registers every Node object of the file at `path`.
absl::Status AddNodes(Scheduler& scheduler, const std::string& path) {
  DS_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  auto docs = ParseYamlDocuments(text);
  if (!docs.ok()) return WithFile(path, docs.status());
  for (const nlohmann::json& doc : *docs) {
    auto inventory =
        ParseNodeInventory(doc, scheduler.config().device.memory_factor);
    if (!inventory.ok()) return WithFile(path, inventory.status());
    auto displaced = scheduler.UpsertNode(*std::move(inventory));
    if (!displaced.ok()) return WithFile(path, displaced.status());
  }
  return absl::OkStatus();
}

using PlacedPod = std::pair<PodRequest, PodAllocation>;

// Schedules the pods of the file at `path` in order and prints a line per
// container placed, then the pods placed nowhere with every node's reason.
// Returns the first pod placed, if any.
absl::StatusOr<std::optional<PlacedPod>> SchedulePods(Scheduler& scheduler,
                                                      const Config& config,
                                                      const std::string& path) {
  DS_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  auto docs = ParseYamlDocuments(text);
  if (!docs.ok()) return WithFile(path, docs.status());

  std::cout << absl::StrFormat("%-26s %-8s %-6s %-10s %s\n", "POD", "NODE",
                               "SCORE", "CONTAINER", "GPU SHARES");
  std::vector<std::string> unschedulable;
  std::optional<PlacedPod> first_placed;
  for (size_t i = 0; i < docs->size(); ++i) {
    auto request = ParsePodRequest((*docs)[i], config.device);
    if (!request.ok()) {
      return WithFile(
          path, absl::Status(request.status().code(),
                             absl::StrFormat("document %d: %s", i + 1,
                                             request.status().message())));
    }
    DS_ASSIGN_OR_RETURN(Decision outcome, scheduler.Schedule(*request));
    if (!outcome.allocation) {
      std::vector<std::string> reasons;
      for (const auto& [node, reason] : outcome.reasons) {
        reasons.push_back(absl::StrFormat("    %s: %s", node, reason));
      }
      unschedulable.push_back(absl::StrFormat("%s\n%s", request->Key(),
                                              absl::StrJoin(reasons, "\n")));
      continue;
    }
    const PodAllocation& allocation = *outcome.allocation;
    for (const ContainerAllocation& container : allocation.containers) {
      std::cout << absl::StrFormat("%-26s %-8s %-6d %-10s %s\n", request->Key(),
                                   allocation.node_name, outcome.score,
                                   container.name, DescribeDevices(container));
    }
    if (!first_placed) first_placed.emplace(*request, allocation);
  }
  if (!unschedulable.empty()) {
    std::cout << "\nUnschedulable:\n";
    for (const std::string& line : unschedulable)
      std::cout << "  " << line << "\n";
  }
  return first_placed;
}

void PrintMemoryAllocated(const Scheduler& scheduler) {
  scheduler.Inspect([](const ClusterState& state) {
    int64_t used = 0, total = 0;
    for (const auto& [name, node] : state.nodes()) {
      used += node->total_used_memory_mib();
      total += node->total_memory_mib();
    }
    std::cout << absl::StrFormat(
        "\n%d pods placed, GPU memory allocated %d of %d MiB (%.1f%%)\n",
        state.pod_count(), used, total, total ? 100.0 * used / total : 0.0);
  });
}

// What the extender writes to the pod, and what the node agent injects
// into each of its containers with GPUs.
absl::Status PrintRecord(const Scheduler& scheduler, const PlacedPod& placed) {
  const auto& [request, allocation] = placed;
  std::cout << "\nAnnotations written for " << request.Key() << " ("
            << DialectName(request.dialect) << " dialect):\n";
  for (const auto& [key, value] :
       AllocationAnnotations(allocation, request.dialect, RealClock().Now(),
                             scheduler.config().device.memory_factor)) {
    std::cout << "  " << key << ": " << value << "\n";
  }
  for (size_t c = 0; c < allocation.containers.size(); ++c) {
    if (allocation.containers[c].devices.empty()) continue;
    EditOptions options;
    options.pod_uid = request.uid;
    options.container_name = allocation.containers[c].name;
    DS_ASSIGN_OR_RETURN(ContainerEdits edits,
                        scheduler.Edits(allocation, c, options));
    std::cout << "Environment of container " << options.container_name << ":\n";
    for (const auto& [name, value] : edits.env) {
      std::cout << "  " << name << "=" << value << "\n";
    }
  }
  return absl::OkStatus();
}

absl::Status Run() {
  DS_ASSIGN_OR_RETURN(Config config, LoadConfig());
  BackendRegistry registry;
  DS_RETURN_IF_ERROR(RegisterBuiltinBackends(registry));
  DS_ASSIGN_OR_RETURN(std::unique_ptr<Scheduler> scheduler,
                      Scheduler::Create(config, registry));
  DS_RETURN_IF_ERROR(AddNodes(*scheduler, absl::GetFlag(FLAGS_nodes)));
  DS_ASSIGN_OR_RETURN(
      std::optional<PlacedPod> first_placed,
      SchedulePods(*scheduler, config, absl::GetFlag(FLAGS_pods)));
  PrintMemoryAllocated(*scheduler);
  if (!first_placed) return absl::OkStatus();
  return PrintRecord(*scheduler, *first_placed);
}

}  // namespace
}  // namespace deviceshare

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Schedules pods onto GPU nodes with deviceshare and prints the result.\n"
      "  schedule_example --nodes NODES.yaml --pods PODS.yaml "
      "[--config CONFIG.yaml]\n"
      "With neither --nodes nor --pods: examples/nodes.yaml and "
      "examples/pods.yaml.");
  absl::ParseCommandLine(argc, argv);
#ifdef DEVICESHARE_EXAMPLES_DIR
  if (absl::GetFlag(FLAGS_nodes).empty() && absl::GetFlag(FLAGS_pods).empty()) {
    absl::SetFlag(&FLAGS_nodes, DEVICESHARE_EXAMPLES_DIR "/nodes.yaml");
    absl::SetFlag(&FLAGS_pods, DEVICESHARE_EXAMPLES_DIR "/pods.yaml");
    std::cerr << "schedule_example: no --nodes/--pods; scheduling "
              << absl::GetFlag(FLAGS_pods) << " onto "
              << absl::GetFlag(FLAGS_nodes) << "\n";
  }
#endif
  if (absl::GetFlag(FLAGS_nodes).empty() || absl::GetFlag(FLAGS_pods).empty()) {
    std::cerr << "schedule_example: --nodes and --pods are required (see "
                 "--help)\n";
    return 2;
  }
  absl::Status status = deviceshare::Run();
  if (!status.ok()) {
    std::cerr << "schedule_example: " << status.message() << "\n";
    return 2;
  }
  return 0;
}
