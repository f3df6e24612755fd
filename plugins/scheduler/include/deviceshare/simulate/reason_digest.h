// File: simulate/reason_digest.h
//
// ReasonDigest: the reasons of an unschedulable pod, kept small enough for
// a 1,000-node cluster: how many nodes gave each reason code, and at most N
// example node reasons (every code once, its first node by name, then
// further nodes by name; see ScheduleOptions::max_explained_nodes). When the
// cluster has no more than N nodes, the examples are all the reasons.
#ifndef DEVICESHARE_SIMULATE_REASON_DIGEST_H_
#define DEVICESHARE_SIMULATE_REASON_DIGEST_H_

#include <cstdint>
#include <map>
#include <string>

#include "deviceshare/scheduler/scheduler.h"

namespace deviceshare::simulate {

struct ReasonDigest {
  std::map<std::string, std::string> examples;  // node -> reason
  std::map<std::string, int64_t> counts;        // code -> nodes
  int64_t nodes = 0;                            // nodes that gave a reason
};

// The digest of a Schedule() outcome in which nothing fit.
ReasonDigest DigestReasons(const Decision& outcome);

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_REASON_DIGEST_H_
