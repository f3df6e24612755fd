// File: agent/slice_publisher.h
//
// SlicePublisher: keeps the node's pool of ResourceSlices at the API server
// equal to what the agent would publish now (agent/resource_slices.h).
//
// Publish() reads the slices of (driver, node) once (field selectors
// spec.driver and spec.nodeName), then, only when what it wants differs
// from what it last wrote or found: bumps the pool generation above every
// generation seen (consumers use only the highest generation of a pool, so
// a half-written update is never mixed with the old one), creates or
// replaces each slice, and deletes the pool's other slices. Unchanged
// devices cost one list, no write.
//
// Thread safety: not thread-safe; one caller (the agent's health loop).
#ifndef DEVICESHARE_AGENT_SLICE_PUBLISHER_H_
#define DEVICESHARE_AGENT_SLICE_PUBLISHER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "deviceshare/dra/resource_slice.h"
#include "deviceshare/kube/api_client.h"
#include "nlohmann/json.hpp"

namespace deviceshare::agent {

struct PublishStats {
  int64_t generation = 0;  // the pool's generation now
  int written = 0;         // slices created or replaced by this call
  int deleted = 0;
};

class SlicePublisher {
 public:
  // `api` must outlive the publisher.
  SlicePublisher(kube::ApiClient* api, std::string driver,
                 std::string node_name);

  // `slices` as BuildResourceSlices made them (their generation is
  // replaced). An error leaves the pool to the next call, which writes
  // again.
  absl::StatusOr<PublishStats> Publish(std::vector<dra::ResourceSlice> slices);

 private:
  kube::ApiClient* const api_;
  const std::string driver_;
  const std::string node_name_;
  int64_t generation_ = 0;
};

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_SLICE_PUBLISHER_H_
