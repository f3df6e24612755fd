// File: gpu_links.h (internal to deviceshare_core)
//
// The optional `links` member of one device in HAMi's JSON node
// registration, both directions: how the device reaches each peer of the
// node (GpuLink), as the node agent found it:
//
//   "links":[{"peer":1,"nvlinks":12,"pcie":"switch","numa":true}]
//
// peer: the peer's `index`; nvlinks: NVLink lanes to it (0-1024); pcie: the
// closest PCIe element the two share (PcieLevelName: board, switch,
// switches, hostbridge, numa, system; absent: system); numa: the path stays
// on one NUMA node (absent: false). HAMi's decoder (Go's encoding/json)
// ignores members its DeviceInfo lacks, so HAMi serves such a node as
// before; Volcano's register annotation is not JSON and carries no links.
//
// As HAMi ignores the member, nothing in it refuses the registration: a
// link that cannot be read (an entry not an object, a member of the wrong
// type, a negative or huge lane count, an unknown level, a peer that is no
// other device of the node) is left out, the device keeps its other links,
// and the reason, naming field and value, goes to Gpu::links_left_out.
// Unknown members of a link are ignored.
#ifndef DEVICESHARE_SRC_CODEC_GPU_LINKS_H_
#define DEVICESHARE_SRC_CODEC_GPU_LINKS_H_

#include <cstdint>
#include <set>
#include <vector>

#include "absl/strings/string_view.h"
#include "deviceshare/model/gpu.h"
#include "nlohmann/json.hpp"

namespace deviceshare::wire {

// Most NVLink lanes one link may carry.
inline constexpr int64_t kMostNvlinkLanes = 1024;

// Sets gpu.links and gpu.links_left_out from a registration entry's
// "links" member (absent or null: none). `node_indices`: the index of
// every device of the registration (gpu.index among them); `where` names
// the entry.
void ReadGpuLinks(const nlohmann::json& entry, absl::string_view where,
                  const std::set<int32_t>& node_indices, Gpu& gpu);

// The "links" value for `links`, in their order.
nlohmann::ordered_json GpuLinksJson(const std::vector<GpuLink>& links);

}  // namespace deviceshare::wire

#endif  // DEVICESHARE_SRC_CODEC_GPU_LINKS_H_
