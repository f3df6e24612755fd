// File: simulate/reason_digest.h
//
// ReasonDigest: the reasons of an unschedulable pod, kept small enough for
// a 1,000-node cluster: how many nodes gave each reason code, and at most N
// example node reasons chosen so that every code appears once (its first
// node by name), then filled up with the remaining nodes by name. When the
// cluster has no more than N nodes, the examples are all the reasons.
#ifndef DEVICESHARE_SIMULATE_REASON_DIGEST_H_
#define DEVICESHARE_SIMULATE_REASON_DIGEST_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

#include "absl/strings/string_view.h"

namespace deviceshare::simulate {

struct ReasonDigest {
  std::map<std::string, std::string> examples;  // node -> reason
  std::map<std::string, int64_t> counts;        // code -> nodes
  int64_t nodes = 0;                            // nodes that gave a reason
};

// The code a reason string starts with: "InsufficientMemory gpu=..." ->
// "InsufficientMemory".
absl::string_view ReasonCodeOf(absl::string_view reason);

ReasonDigest DigestReasons(const std::map<std::string, std::string>& reasons,
                           size_t max_examples);

}  // namespace deviceshare::simulate

#endif  // DEVICESHARE_SIMULATE_REASON_DIGEST_H_
