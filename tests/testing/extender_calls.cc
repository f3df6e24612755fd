#include "testing/extender_calls.h"

#include "deviceshare/backend/backend_registry.h"
#include "deviceshare/builtin_backends.h"
#include "deviceshare/extender/serve.h"
#include "gtest/gtest.h"
#include "testing/builders.h"

namespace deviceshare::testing {

std::unique_ptr<Scheduler> NewBuiltinScheduler() {
  BackendRegistry registry;
  EXPECT_TRUE(RegisterBuiltinBackends(registry).ok());
  auto scheduler = Scheduler::Create(MakeConfig(), registry);
  EXPECT_TRUE(scheduler.ok()) << scheduler.status();
  return *std::move(scheduler);
}

extender::ExtenderArgs FilterArgs(const nlohmann::json& pod,
                                  std::vector<std::string> nodes) {
  extender::ExtenderArgs args;
  args.pod = pod;
  args.node_names = extender::NameList(nodes);
  return args;
}

extender::BindingArgs BindingFor(const nlohmann::json& pod,
                                 const std::string& node) {
  return extender::BindingArgs{pod["metadata"]["name"],
                               pod["metadata"]["namespace"],
                               pod["metadata"]["uid"], node};
}

ExtenderHarness::ExtenderHarness(extender::ExtenderOptions options)
    : ExtenderHarness(options, NewBuiltinScheduler()) {}

ExtenderHarness::ExtenderHarness(extender::ExtenderOptions options,
                                 std::unique_ptr<Scheduler> scheduler)
    : scheduler_(std::move(scheduler)),
      extender_(scheduler_.get(), &writer_, &clock_, options) {
  EXPECT_TRUE(extender::SetLogLevel("warn").ok());
}

void ExtenderHarness::AddNodes(std::vector<NodeSpec> specs) {
  std::vector<nlohmann::json> nodes;
  for (const NodeSpec& spec : specs) nodes.push_back(HamiNodeObject(spec));
  extender_.OnNodesReplaced(nodes);
}

nlohmann::json ExtenderHarness::AddPod(nlohmann::json pod) {
  writer_.AddPod(pod);
  return pod;
}

}  // namespace deviceshare::testing
