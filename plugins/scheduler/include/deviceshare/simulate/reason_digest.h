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

#include "absl/strings/string_view.h"
#include "deviceshare/scheduler/scheduler.h"

namespace deviceshare::simulate {

struct ReasonDigest {
  std::map<std::string, std::string> examples;  // node -> reason
  std::map<std::string, int64_t> counts;        // code -> nodes
  int64_t nodes = 0;                            // nodes that gave a reason
};

// The digest of a Schedule() outcome in which nothing fit.
ReasonDigest DigestReasons(const Decision& outcome);

// The digest of a pod the scheduler refused before looking at any node (an
// annotation it cannot use, as HAMi's filter refuses it): `why` under the
// node name "*" and the code "PodRefused".
ReasonDigest RefusedDigest(absl::string_view why);

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_REASON_DIGEST_H_
