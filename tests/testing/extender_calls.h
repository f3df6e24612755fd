// What the extender's unit tests build over and over: a Scheduler with the
// built-in backends, and the arguments of filter and bind for a Pod object.
#ifndef DEVICESHARE_TESTS_TESTING_EXTENDER_CALLS_H_
#define DEVICESHARE_TESTS_TESTING_EXTENDER_CALLS_H_

#include <memory>
#include <string>
#include <vector>

#include "deviceshare/extender/extender_wire.h"
#include "deviceshare/scheduler/scheduler.h"
#include "nlohmann/json.hpp"

namespace deviceshare::testing {

// MakeConfig() (testing/builders.h) over every built-in backend; no nodes.
std::unique_ptr<Scheduler> NewBuiltinScheduler();

// ExtenderArgs of `pod` with `nodes` as NodeNames (nodeCacheCapable).
extender::ExtenderArgs FilterArgs(const nlohmann::json& pod,
                                  std::vector<std::string> nodes);

// BindingArgs of `pod` to `node`.
extender::BindingArgs BindingFor(const nlohmann::json& pod,
                                 const std::string& node);

}  // namespace deviceshare::testing

#endif  // DEVICESHARE_TESTS_TESTING_EXTENDER_CALLS_H_
