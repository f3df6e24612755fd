// deviceshare-node-agent: the node agent's command line.
//
//   deviceshare-node-agent discover [flags]   prints the node's GPUs
//   deviceshare-node-agent serve [flags]      registers the node and serves
//                                             kubelet's device plugin API
//
// Invalid input exits 2 with one line naming the flag or file and the value.
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "deviceshare/agent/agent_service.h"
#include "deviceshare/agent/discovery_json.h"
#include "deviceshare/agent/node_registrar.h"
#include "deviceshare/agent/resource_slices.h"
#include "deviceshare/backend/backend_set.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/cli/command_flags.h"
#include "deviceshare/config/config_parser.h"
#include "deviceshare/dra/slice_json.h"
#include "deviceshare/hamicore/hamicore_backend.h"
#include "deviceshare/json_text.h"
#include "deviceshare/mig/mig_config.h"
#include "deviceshare/mps/mps_backend.h"
#include "deviceshare/status_macros.h"
#include "spdlog/spdlog.h"

// Each flag's help is what --help prints after it; the default comes from
// the flag itself (FlagLine), so the two cannot disagree.
ABSL_FLAG(std::string, inventory, "",
          "GPU inventory file (YAML/JSON) read instead of NVML");
ABSL_FLAG(std::string, output, "json", "json | annotation | resourceslices");
ABSL_FLAG(std::string, dra_driver_name, "gpu.deviceshare.io",
          "DRA driver name (hami-core-gpu.project-hami.io: HAMi's device "
          "names, attributes and capacities)");
ABSL_FLAG(std::string, dialect, "hami", "hami | volcano");
ABSL_FLAG(std::string, config, "",
          "deviceshare config YAML (nvidia: and scheduler: sections, or a "
          "ConfigMap)");
ABSL_FLAG(std::string, nvml_library, "libnvidia-ml.so.1",
          "NVML library, loaded with dlopen");
ABSL_FLAG(std::string, node_name, "", "this node's name");
ABSL_FLAG(std::string, kubeconfig, "", "kubeconfig file (current context)");
ABSL_FLAG(std::string, device_plugin_dir, "/var/lib/kubelet/device-plugins",
          "kubelet's device plugin directory");
ABSL_FLAG(std::string, state_dir, "/run/deviceshare",
          "the agent's state (journals)");
ABSL_FLAG(std::string, hook_path, "/usr/local/vgpu",
          "host directory of libvgpu.so and the per-container directories");
ABSL_FLAG(std::string, vgpu_library, "",
          "libvgpu.so to install into --hook-path");
ABSL_FLAG(std::string, mps_root, "/run/deviceshare/mps",
          "MPS pipe/, log/ and shm/ root");
ABSL_FLAG(std::string, mps_control, "nvidia-cuda-mps-control",
          "MPS control binary");
ABSL_FLAG(std::string, gpu_mode, "hami-core",
          "hami-core | mps: the mode of GPUs not in MIG mode");
ABSL_FLAG(std::string, cdi_kind, "",
          "CDI kind of the device names Allocate returns, e.g. nvidia.com/gpu");
ABSL_FLAG(bool, dra, false, "run the DRA driver");
ABSL_FLAG(bool, device_plugin, true,
          "run the device plugin (off with --dra unless given)");
ABSL_FLAG(std::string, dra_plugin_dir, "/var/lib/kubelet/plugins",
          "--dra: kubelet's plugin directory (<dir>/<driver>/dra.sock)");
ABSL_FLAG(std::string, dra_registry_dir, "/var/lib/kubelet/plugins_registry",
          "--dra: kubelet's plugin registration directory");
ABSL_FLAG(std::string, cdi_dir, "/var/run/cdi",
          "--dra: where the claims' CDI specs are written");
ABSL_FLAG(absl::Duration, health_interval, absl::Seconds(5),
          "GPU health poll interval");
ABSL_FLAG(absl::Duration, register_interval, absl::Seconds(30),
          "registration refresh interval");
ABSL_FLAG(std::string, record_key_file, "",
          "serve only allocation records signed by a key of this file "
          "(lines `<id>: <base64 secret>`, the scheduler's Secret)");
ABSL_FLAG(bool, accept_unsigned_records, false,
          "serve unsigned allocation records too (migrating from HAMi's or "
          "Volcano's scheduler); forged ones never");
ABSL_FLAG(std::string, metrics_address, "",
          "serve GET /metrics (Prometheus) and /healthz at HOST:PORT or :PORT");
ABSL_FLAG(std::string, log_level, "info",
          "trace | debug | info | warn | error | critical | off");

namespace {

using ::deviceshare::cli::FlagSpec;
namespace agent = ::deviceshare::agent;

constexpr char kProgram[] = "deviceshare-node-agent";

// A flag as a command accepts it and --help lists it: the placeholder of
// its value ("" for a bool) and, where the default is an empty string that
// means something, what it means.
struct FlagRow {
  FlagSpec spec;
  const char* value;
  const char* empty_default = nullptr;
};

constexpr FlagRow kDiscoverFlags[] = {
    {{"inventory", false}, "FILE", "none: NVML"},
    {{"output", false}, "FORMAT"},
    {{"dialect", false}, "D"},
    {{"config", false}, "FILE", "none: the built-in defaults"},
    {{"nvml_library", false}, "PATH"},
    {{"gpu_mode", false}, "MODE"},
    {{"node_name", false}, "NAME", "the host name"},
    {{"dra_driver_name", false}, "NAME"},
};
constexpr FlagRow kServeFlags[] = {
    {{"node_name", false}, "NAME", "none: required"},
    {{"kubeconfig", false}, "FILE", "none: the pod's service account"},
    {{"inventory", false}, "FILE", "none: NVML"},
    {{"nvml_library", false}, "PATH"},
    {{"config", false}, "FILE", "none: the built-in defaults"},
    {{"dialect", false}, "D"},
    {{"gpu_mode", false}, "MODE"},
    {{"device_plugin_dir", false}, "DIR"},
    {{"state_dir", false}, "DIR"},
    {{"hook_path", false}, "DIR"},
    {{"vgpu_library", false}, "PATH", "none: the hook path is left as it is"},
    {{"mps_root", false}, "DIR"},
    {{"mps_control", false}, "PATH"},
    {{"cdi_kind", false}, "KIND", "none: no CDI device names"},
    {{"health_interval", false}, "D"},
    {{"register_interval", false}, "D"},
    {{"metrics_address", false}, "ADDR", "none: no metrics endpoint"},
    {{"record_key_file", false}, "FILE", "none: records are not checked"},
    {{"accept_unsigned_records", true}, ""},
    {{"log_level", false}, "L"},
    {{"dra", true}, ""},
    {{"device_plugin", true}, ""},
    {{"dra_driver_name", false}, "NAME"},
    {{"dra_plugin_dir", false}, "DIR"},
    {{"dra_registry_dir", false}, "DIR"},
    {{"cdi_dir", false}, "DIR"},
};

std::vector<FlagSpec> Specs(absl::Span<const FlagRow> rows) {
  std::vector<FlagSpec> specs;
  for (const FlagRow& row : rows) specs.push_back(row.spec);
  return specs;
}

// One flag's --help entry: "  --name VALUE" padded to the text column, its
// help and default wrapped at 78 columns.
std::string FlagLine(const FlagRow& row) {
  constexpr size_t kColumn = 24;
  constexpr size_t kWidth = 78;
  const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(row.spec.name);
  if (flag == nullptr) return "";  // every row names an ABSL_FLAG above
  std::string name =
      absl::StrCat("  --", absl::StrReplaceAll(row.spec.name, {{"_", "-"}}),
                   *row.value == '\0' ? "" : " ", row.value);
  std::string fallback = flag->DefaultValue();
  if (fallback.empty() && row.empty_default != nullptr) {
    fallback = row.empty_default;
  }
  const std::string text =
      absl::StrCat(flag->Help(), " (default ", fallback, ")");
  std::string out = name;
  if (name.size() + 1 > kColumn) {
    absl::StrAppend(&out, "\n");
    out.append(kColumn, ' ');
  } else {
    out.append(kColumn - name.size(), ' ');
  }
  size_t column = kColumn;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (column > kColumn && column + 1 + word.size() > kWidth) {
      absl::StrAppend(&out, "\n");
      out.append(kColumn, ' ');
      column = kColumn;
    } else if (column > kColumn) {
      out += ' ';
      ++column;
    }
    absl::StrAppend(&out, word);
    column += word.size();
  }
  return out + "\n";
}

std::string FlagLines(absl::Span<const FlagRow> rows) {
  std::string out;
  for (const FlagRow& row : rows) out += FlagLine(row);
  return out;
}

constexpr char kUsage[] = R"help(Usage:
  deviceshare-node-agent discover [flags]   prints the node's GPUs
  deviceshare-node-agent serve --node-name NAME [flags]
                                            runs the node agent
Flags are written --name=value or --name value, with dashes or underscores.

)help";

constexpr char kDiscoverHelp[] =
    R"help(discover prints the node's GPUs: from NVML (libnvidia-ml.so.1, loaded with
dlopen; a machine without the driver gets a clear error) or from
--inventory, a YAML/JSON file with the fields `discover --output json`
prints ({"gpus": [{uuid, index, model, memory_mib, sm_count, numa,
pci_device_id, mig_capable, health, ...}]}) or the short GPU form of the
simulate cluster file (nodes: [{name, gpus: [{model, memory_mib, count}]}]).
--output annotation prints the node registration as a merge patch for
`kubectl patch node NAME --type merge -p "$(...)"`, shaped by the device
config (--config: deviceSplitCount, deviceMemoryScaling, deviceCoreScaling)
in the --dialect's annotation (hami.io/node-nvidia-register or
volcano.sh/node-vgpu-register). --output resourceslices prints the DRA
ResourceSlices `serve --dra` would publish for the node (--node-name, the
pool; default the host name), a JSON List for `kubectl apply -f -`: one
shared device per hami-core or mps GPU (capacities memory, cores, shares),
one partitionable device per MIG placement, unhealthy GPUs withdrawn.

discover flags:
)help";

constexpr char kServeHelp[] = R"help(
serve runs the node agent (a DaemonSet; deploy):
  - registers the node's GPUs in the dialect's annotation, only when it
    changes; unhealthy GPUs are registered unhealthy and come back when
    healthy (polled every --health-interval);
  - serves kubelet's device plugin API v1beta1 on
    <device-plugin-dir>/deviceshare-<resource>.sock for the dialect's
    resource (hami: the config's count resource, nvidia.com/gpu by default;
    volcano: volcano.sh/vgpu-number), each GPU as deviceSplitCount replicas,
    and re-registers when kubelet restarts;
  - answers each Allocate with the share the scheduler recorded on that
    pod (matched on the GPUs kubelet passes, checked again at
    PreStartContainer against kubelet's checkpoint; see
    plugins/node-agent/include/deviceshare/agent/allocation_matcher.h),
    remembering what it served in <state-dir>/served-<node>.journal;
  - installs --vgpu-library (deviceshare's libvgpu.so, the enforcer of
    hami-core shares) as <hook-path>/libvgpu.so with the
    <hook-path>/ld.so.preload that loads it in every hami-core container;
    without the flag the hook path is left as it is (e.g. HAMi-core's);
  - creates MIG instances at the placement the scheduler chose, and runs
    the MPS control daemon for --gpu-mode mps GPUs.
  - with --dra, runs a DRA driver instead of the device plugin (beside
    it with --dra --device-plugin): publishes the node's ResourceSlices
    (resource.k8s.io/v1, pool = node name; see discover --output
    resourceslices) and keeps them current as GPU health changes, serves
    kubelet's DRA plugin API (v1 and v1beta1) on
    <dra-plugin-dir>/<driver>/dra.sock, registered through
    <dra-registry-dir>/<driver>-reg.sock, and prepares each claim from its
    allocation: a CDI spec <cdi-dir>/<driver>-claim-<uid>.json with the
    backend's limits per GPU (hami-core: CUDA_DEVICE_MEMORY_LIMIT_<i> and
    CUDA_DEVICE_SM_LIMIT_<i> by GPU index, libvgpu.so, a per-claim cache),
    journaled in <state-dir>/dra-claims/. A MIG partition's instance is
    created (or adopted) at its placement on prepare and removed on
    unprepare (with --device-plugin too, MIG stays the device plugin's).
    --dra-driver-name hami-core-gpu.project-hami.io publishes HAMi's device
    names, attributes and capacities instead of ours.

serve flags:
)help";

constexpr char kCredentialsHelp[] = R"help(
Credentials: --kubeconfig, else the pod's service account.
)help";

std::string Help() {
  return absl::StrCat(kUsage, kDiscoverHelp, FlagLines(kDiscoverFlags), "\n",
                      kServeHelp, FlagLines(kServeFlags), kCredentialsHelp);
}

int Fail(absl::string_view command, absl::string_view message) {
  std::cerr << kProgram << " " << command << ": "
            << absl::StrReplaceAll(message, {{"\n", " "}}) << "\n";
  return 2;
}

std::optional<std::string> ParseDialect(const std::string& text,
                                        deviceshare::Dialect& dialect) {
  if (text == "hami") {
    dialect = deviceshare::Dialect::kHami;
  } else if (text == "volcano") {
    dialect = deviceshare::Dialect::kVolcano;
  } else {
    return absl::StrCat("--dialect: \"", text,
                        "\" is not one of hami, volcano");
  }
  return std::nullopt;
}

std::optional<std::string> ParseGpuMode(const std::string& text,
                                        deviceshare::SharingMode& mode) {
  if (text == "hami-core") {
    mode = deviceshare::hamicore::kMode;
  } else if (text == "mps") {
    mode = deviceshare::mps::kMode;
  } else {
    return absl::StrCat("--gpu-mode: \"", text,
                        "\" is not one of hami-core, mps");
  }
  return std::nullopt;
}

std::string HostName() {
  char name[256] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "node";
  return absl::AsciiStrToLower(name);
}

// The slices `serve --dra` would publish, as a kubectl List.
absl::StatusOr<nlohmann::json> SliceList(
    const std::vector<agent::DiscoveredGpu>& gpus,
    const std::vector<deviceshare::Gpu>& registered,
    const deviceshare::Config& config) {
  deviceshare::BackendRegistry registry;
  DS_RETURN_IF_ERROR(deviceshare::RegisterBuiltinBackends(registry));
  DS_ASSIGN_OR_RETURN(deviceshare::BackendSet backends,
                      deviceshare::BackendSet::Create(registry, config));
  agent::SliceOptions options;
  options.driver = absl::GetFlag(FLAGS_dra_driver_name);
  options.node_name = absl::GetFlag(FLAGS_node_name);
  if (options.node_name.empty()) options.node_name = HostName();
  DS_ASSIGN_OR_RETURN(
      agent::NodeSlices slices,
      agent::BuildResourceSlices(gpus, registered, backends, options));
  for (const std::string& reason : slices.withdrawn) {
    std::cerr << kProgram << " discover: withdrawn: " << reason << "\n";
  }
  nlohmann::json items = nlohmann::json::array();
  for (const deviceshare::dra::ResourceSlice& slice : slices.slices) {
    items.push_back(deviceshare::dra::ResourceSliceToJson(slice));
  }
  return nlohmann::json{
      {"apiVersion", "v1"}, {"kind", "List"}, {"items", std::move(items)}};
}

int Discover(int argc, char** argv) {
  std::set<std::string> given;
  if (auto error = deviceshare::cli::ParseCommandFlags(
          argc, argv, Specs(kDiscoverFlags), given)) {
    return Fail("discover", *error);
  }
  const std::string output = absl::GetFlag(FLAGS_output);
  if (output != "json" && output != "annotation" &&
      output != "resourceslices") {
    return Fail("discover", absl::StrCat("--output: \"", output,
                                         "\" is not one of json, annotation, "
                                         "resourceslices"));
  }
  deviceshare::Dialect dialect;
  if (auto error = ParseDialect(absl::GetFlag(FLAGS_dialect), dialect)) {
    return Fail("discover", *error);
  }
  deviceshare::SharingMode mode;
  if (auto error = ParseGpuMode(absl::GetFlag(FLAGS_gpu_mode), mode)) {
    return Fail("discover", *error);
  }
  absl::StatusOr<deviceshare::Config> config =
      agent::LoadConfigFile(absl::GetFlag(FLAGS_config));
  if (!config.ok()) return Fail("discover", config.status().message());
  absl::StatusOr<std::unique_ptr<agent::GpuSource>> source =
      agent::OpenGpuSource(absl::GetFlag(FLAGS_inventory),
                           absl::GetFlag(FLAGS_nvml_library));
  if (!source.ok()) return Fail("discover", source.status().message());
  absl::StatusOr<std::vector<agent::DiscoveredGpu>> gpus =
      (*source)->Discover();
  if (!gpus.ok()) return Fail("discover", gpus.status().message());
  if (output == "json") {
    std::cout << deviceshare::JsonText(agent::DiscoveryJson(*gpus), 2) << "\n";
    return 0;
  }
  absl::StatusOr<deviceshare::mig::MigConfig> mig =
      deviceshare::mig::ReadMigConfig(*config);
  if (!mig.ok()) return Fail("discover", mig.status().message());
  absl::StatusOr<std::vector<deviceshare::Gpu>> registered =
      agent::RegisteredGpus(*gpus, config->device, mode,
                            mig->profile_allowlist);
  if (!registered.ok()) return Fail("discover", registered.status().message());
  if (output == "resourceslices") {
    absl::StatusOr<nlohmann::json> list =
        SliceList(*gpus, *registered, *config);
    if (!list.ok()) return Fail("discover", list.status().message());
    std::cout << list->dump(2) << "\n";
    return 0;
  }
  nlohmann::json patch;
  patch["metadata"]["annotations"][agent::RegistrationKey(dialect)] =
      agent::RegistrationValue(*registered, dialect,
                               config->device.memory_factor);
  std::cout << deviceshare::JsonText(patch) << "\n";
  return 0;
}

std::atomic<bool> g_stop{false};

void OnSignal(int) { g_stop.store(true); }

int Serve(int argc, char** argv) {
  std::set<std::string> given;
  if (auto error = deviceshare::cli::ParseCommandFlags(
          argc, argv, Specs(kServeFlags), given)) {
    return Fail("serve", *error);
  }
  agent::AgentOptions options;
  options.node_name = absl::GetFlag(FLAGS_node_name);
  if (options.node_name.empty()) {
    return Fail("serve",
                "--node-name: required (the DaemonSet passes spec.nodeName)");
  }
  if (auto error =
          ParseDialect(absl::GetFlag(FLAGS_dialect), options.dialect)) {
    return Fail("serve", *error);
  }
  if (auto error =
          ParseGpuMode(absl::GetFlag(FLAGS_gpu_mode), options.whole_gpu_mode)) {
    return Fail("serve", *error);
  }
  options.kubeconfig = absl::GetFlag(FLAGS_kubeconfig);
  options.inventory = absl::GetFlag(FLAGS_inventory);
  options.nvml_library = absl::GetFlag(FLAGS_nvml_library);
  options.device_plugin_dir = absl::GetFlag(FLAGS_device_plugin_dir);
  options.config_path = absl::GetFlag(FLAGS_config);
  options.state_dir = absl::GetFlag(FLAGS_state_dir);
  options.hook_path = absl::GetFlag(FLAGS_hook_path);
  options.vgpu_library = absl::GetFlag(FLAGS_vgpu_library);
  options.mps_root = absl::GetFlag(FLAGS_mps_root);
  options.mps_control_binary = absl::GetFlag(FLAGS_mps_control);
  options.cdi_kind = absl::GetFlag(FLAGS_cdi_kind);
  options.dra = absl::GetFlag(FLAGS_dra);
  options.device_plugin = !options.dra || (given.contains("device-plugin") &&
                                           absl::GetFlag(FLAGS_device_plugin));
  if (!options.dra && !absl::GetFlag(FLAGS_device_plugin)) {
    return Fail("serve",
                "--device-plugin=false: needs --dra (nothing to "
                "serve otherwise)");
  }
  options.dra_driver_name = absl::GetFlag(FLAGS_dra_driver_name);
  options.dra_plugin_dir = absl::GetFlag(FLAGS_dra_plugin_dir);
  options.dra_registry_dir = absl::GetFlag(FLAGS_dra_registry_dir);
  options.cdi_dir = absl::GetFlag(FLAGS_cdi_dir);
  options.health_interval = absl::GetFlag(FLAGS_health_interval);
  options.register_interval = absl::GetFlag(FLAGS_register_interval);
  options.metrics_address = absl::GetFlag(FLAGS_metrics_address);
  options.record_key_file = absl::GetFlag(FLAGS_record_key_file);
  options.accept_unsigned_records =
      absl::GetFlag(FLAGS_accept_unsigned_records);
  if (options.health_interval <= absl::ZeroDuration()) {
    return Fail("serve", "--health-interval: must be positive");
  }
  if (options.register_interval <= absl::ZeroDuration()) {
    return Fail("serve", "--register-interval: must be positive");
  }
  const std::string level = absl::GetFlag(FLAGS_log_level);
  const spdlog::level::level_enum parsed = spdlog::level::from_str(level);
  if (parsed == spdlog::level::off && level != "off") {
    return Fail("serve", absl::StrCat("--log-level: \"", level,
                                      "\" is not one of trace, debug, info, "
                                      "warn, error, critical, off"));
  }
  spdlog::set_level(parsed);
  std::signal(SIGTERM, OnSignal);
  std::signal(SIGINT, OnSignal);
  std::signal(SIGPIPE, SIG_IGN);
  absl::Status status = agent::RunAgent(options, g_stop);
  if (!status.ok()) {
    spdlog::error("{}", status.ToString());
    return 1;
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (deviceshare::cli::IsHelp(argv[i])) {
      std::cout << Help();
      return 0;
    }
  }
  if (argc >= 2 && absl::string_view(argv[1]) == "discover") {
    return Discover(argc, argv);
  }
  if (argc >= 2 && absl::string_view(argv[1]) == "serve") {
    return Serve(argc, argv);
  }
  std::cerr << kProgram << ": "
            << (argc < 2 ? std::string("no command")
                         : absl::StrCat("unknown command \"", argv[1], "\""))
            << "; the commands are `discover` and `serve` (see --help)\n";
  return 2;
}
