// File: simulate/defrag_command.h
//
// `deviceshare-scheduler defrag` as a library call: options in, the plan
// printed, the exit status out (main.cc parses the flags). Inputs are
// files (--cluster, --pods, optional --budgets) or a live cluster
// (--kubeconfig, read-only unless --apply). --apply (live only) evicts the
// plan's pods in order through the Eviction API and stops at the first
// refusal.
//
// Exit status: 0 plan printed (and applied); 2 invalid flags or input; 1
// the cluster cannot be read, or an internal error; 3 --apply stopped at
// a refused eviction (the message names the move and the reason).
//
// Thread safety: one call at a time (it writes `out` and `err`).
#ifndef DEVICESHARE_SIMULATE_DEFRAG_COMMAND_H_
#define DEVICESHARE_SIMULATE_DEFRAG_COMMAND_H_

#include <cstdint>
#include <ostream>
#include <string>

#include "deviceshare/simulate/defrag_inputs.h"

namespace deviceshare::simulate {

struct DefragOptions {
  DefragSource source;
  std::string kubeconfig;  // non-empty: a live cluster
  int32_t free_whole_gpus = 0;
  int32_t max_moves = 8;
  bool json = false;
  bool apply = false;
};

// The help section of the command.
extern const char kDefragHelp[];

int RunDefrag(const DefragOptions& options, std::ostream& out,
              std::ostream& err);

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_DEFRAG_COMMAND_H_
