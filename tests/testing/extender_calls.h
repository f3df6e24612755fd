// What the extender's unit tests build over and over: a Scheduler with the
// built-in backends, the arguments of filter and bind for a Pod object, and
// an Extender over a fake clock and a fake pod writer.
#ifndef DEVICESHARE_TESTS_TESTING_EXTENDER_CALLS_H_
#define DEVICESHARE_TESTS_TESTING_EXTENDER_CALLS_H_

#include <memory>
#include <string>
#include <vector>

#include "deviceshare/extender/extender.h"
#include "deviceshare/extender/extender_wire.h"
#include "deviceshare/scheduler/scheduler.h"
#include "nlohmann/json.hpp"
#include "testing/fake_pod_writer.h"
#include "testing/fakes.h"
#include "testing/kube_objects.h"

namespace deviceshare::testing {

// MakeConfig() (testing/builders.h) over every built-in backend; no nodes.
std::unique_ptr<Scheduler> NewBuiltinScheduler();

// ExtenderArgs of `pod` with `nodes` as NodeNames (nodeCacheCapable).
extender::ExtenderArgs FilterArgs(const nlohmann::json& pod,
                                  std::vector<std::string> nodes);

// BindingArgs of `pod` to `node`.
extender::BindingArgs BindingFor(const nlohmann::json& pod,
                                 const std::string& node);

// An Extender over NewBuiltinScheduler(), a FakeClock and a FakePodWriter,
// logging at warn (the extender logs a line per refused pod at info). Test
// fixtures derive from it beside ::testing::Test.
class ExtenderHarness {
 protected:
  explicit ExtenderHarness(extender::ExtenderOptions options);
  // Over `scheduler` instead of NewBuiltinScheduler().
  ExtenderHarness(extender::ExtenderOptions options,
                  std::unique_ptr<Scheduler> scheduler);

  // Registers the nodes (HAMi's JSON registration), as a node list does.
  void AddNodes(std::vector<NodeSpec> specs);
  // Puts the pod in the fake API; returns it.
  nlohmann::json AddPod(nlohmann::json pod);

  FakeClock clock_;
  FakePodWriter writer_;
  std::unique_ptr<Scheduler> scheduler_;
  extender::Extender extender_;
};

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_EXTENDER_CALLS_H_
