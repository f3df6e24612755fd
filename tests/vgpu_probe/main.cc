// vgpu_probe's command line: global options, then a script of ops, each
// checked before anything runs (see probe.h).
//
// Ops:
//   init [ORDINAL]                 cuInit, primary context current
//   count                          cuDeviceGetCount
//   uuid                           cuDeviceGetUuid of each visible device
//   meminfo                        cuMemGetInfo_v2
//   totalmem [ORDINAL]             cuDeviceTotalMem_v2
//   nvml-meminfo [ORDINAL]         NVML v1 + v2 memory info of that GPU
//   alloc PATH BYTES               one allocation
//   alloc-until-oom PATH STEP      STEP at a time until refused
//   free-all                       free everything, sync, trim
//   fork-alloc PATH BYTES          fork; the child inits and allocates
//   launch-loop KERNEL GRID BLOCK SECONDS [sync-every N]
//   hold MS | signal-ready PATH | wait-file PATH [TIMEOUT_MS]
// PATH: memalloc pitch managed array array3d mipmapped vmm async frompool
// graph. BYTES take a k/m/g suffix.
#include <cstdio>
#include <cstring>

#include "probe.h"

namespace vgpu_probe {
namespace {

struct OpSpec {
  const char* name;
  size_t min_args;
  size_t max_args;
  bool (*check)(const Args&, std::string&);  // null: arity and ints only
  void (*run)(Probe&, const Args&);
  bool uses_nvml;
};

bool CheckOrdinal(const Args& args, std::string& error) {
  long long value = 0;
  if (!args.empty() && (!ParseInt(args[0], value) || value < 0)) {
    error = "bad device ordinal '" + args[0] + "'";
    return false;
  }
  return true;
}

bool CheckMs(const Args& args, std::string& error) {
  long long value = 0;
  if (!ParseInt(args[0], value) || value < 0) {
    error = "bad milliseconds '" + args[0] + "'";
    return false;
  }
  return true;
}

bool CheckWaitFile(const Args& args, std::string& error) {
  long long value = 0;
  if (args.size() > 1 && (!ParseInt(args[1], value) || value < 0)) {
    error = "bad timeout '" + args[1] + "'";
    return false;
  }
  return true;
}

constexpr OpSpec kOps[] = {
    {"init", 0, 1, CheckOrdinal, RunInit, false},
    {"count", 0, 0, nullptr, RunCount, false},
    {"uuid", 0, 0, nullptr, RunUuid, false},
    {"meminfo", 0, 0, nullptr, RunMemInfo, false},
    {"totalmem", 0, 1, CheckOrdinal, RunTotalMem, false},
    {"nvml-meminfo", 0, 1, CheckOrdinal, RunNvmlMemInfo, true},
    {"alloc", 2, 2, CheckAlloc, RunAlloc, false},
    {"alloc-until-oom", 2, 2, CheckAlloc, RunAllocUntilOom, false},
    {"free-all", 0, 0, nullptr, RunFreeAll, false},
    {"fork-alloc", 2, 2, CheckAlloc, RunForkAlloc, false},
    {"launch-loop", 4, 6, CheckLaunchLoop, RunLaunchLoop, false},
    {"hold", 1, 1, CheckMs, RunHold, false},
    {"signal-ready", 1, 1, nullptr, RunSignalReady, false},
    {"wait-file", 1, 2, CheckWaitFile, RunWaitFile, false},
};

const OpSpec* FindOp(const std::string& name) {
  for (const OpSpec& op : kOps) {
    if (name == op.name) return &op;
  }
  return nullptr;
}

struct Step {
  const OpSpec* op;
  Args args;
};

int Usage(const std::string& message) {
  std::fprintf(stderr, "vgpu_probe: %s\n", message.c_str());
  return 2;
}

}  // namespace

int Main(int argc, char** argv, Resolve default_resolve) {
  Probe probe;
  probe.resolve = default_resolve;
  int i = 1;
  for (; i < argc && std::strncmp(argv[i], "--", 2) == 0; ++i) {
    const std::string arg = argv[i];
    if (arg == "--resolve=getproc") {
      probe.resolve = Resolve::kGetProc;
    } else if (arg == "--resolve=dlsym") {
      probe.resolve = Resolve::kDlsym;
    } else if (arg == "--resolve=linked") {
      probe.resolve = Resolve::kLinked;
    } else if (arg == "--no-timing") {
      g_timing = false;
    } else if (arg == "--launch=kernel") {
      probe.launch = Launch::kKernel;
    } else if (arg == "--launch=ex") {
      probe.launch = Launch::kEx;
    } else if (arg == "--launch=coop") {
      probe.launch = Launch::kCoop;
    } else if (arg == "--launch=graph") {
      probe.launch = Launch::kGraph;
    } else {
      return Usage("unknown option '" + arg + "'");
    }
  }
  // An op's arguments run up to the next op name.
  std::vector<Step> script;
  bool uses_nvml = false;
  while (i < argc) {
    const OpSpec* op = FindOp(argv[i]);
    if (op == nullptr)
      return Usage(std::string("unknown op '") + argv[i] + "'");
    Step step{op, {}};
    for (++i; i < argc && FindOp(argv[i]) == nullptr; ++i) {
      step.args.push_back(argv[i]);
    }
    if (step.args.size() < op->min_args || step.args.size() > op->max_args) {
      return Usage(std::string("op '") + op->name + "' takes " +
                   std::to_string(op->min_args) + ".." +
                   std::to_string(op->max_args) + " arguments, got " +
                   std::to_string(step.args.size()));
    }
    std::string error;
    if (op->check != nullptr && !op->check(step.args, error)) {
      return Usage(std::string("op '") + op->name + "': " + error);
    }
    uses_nvml = uses_nvml || op->uses_nvml;
    script.push_back(std::move(step));
  }
  if (script.empty()) return Usage("no ops given");

  std::string error;
  if (!LoadDriver(probe.resolve, probe.cu, error)) {
    std::fprintf(stderr, "vgpu_probe: %s\n", error.c_str());
    return 3;
  }
  if (uses_nvml) {
    probe.nvml_loaded = LoadNvml(probe.resolve, probe.nvml, probe.nvml_error);
  }
  for (const Step& step : script) step.op->run(probe, step.args);
  return 0;
}

}  // namespace vgpu_probe

int main(int argc, char** argv) {
#ifdef VGPU_PROBE_LINKED
  return vgpu_probe::Main(argc, argv, vgpu_probe::Resolve::kLinked);
#else
  return vgpu_probe::Main(argc, argv, vgpu_probe::Resolve::kGetProc);
#endif
}
