#include "codec/gpu_links.h"

#include <set>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "codec/json_members.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::wire {
namespace {

using Json = nlohmann::json;
using OrderedJson = nlohmann::ordered_json;

constexpr int64_t kInt32Max = 2147483647;

absl::StatusOr<GpuLink> ReadLink(const Json& value, const std::string& field,
                                 absl::string_view where, const Gpu& gpu,
                                 const std::set<int32_t>& node_indices) {
  if (!value.is_object()) {
    return JsonFieldError(where, field, value, "is not a JSON object");
  }
  GpuLink link;
  auto peer = value.find("peer");
  if (peer == value.end()) {
    return MissingField(where, absl::StrCat(field, ".peer"));
  }
  DS_ASSIGN_OR_RETURN(
      int64_t index,
      JsonIntValue(*peer, absl::StrCat(field, ".peer"), kInt32Max, where));
  DS_ASSIGN_OR_RETURN(
      int64_t lanes,
      JsonIntNamed(value, "nvlinks", absl::StrCat(field, ".nvlinks"),
                   kMostNvlinkLanes, where));
  if (index == gpu.index) {
    return JsonFieldError(where, absl::StrCat(field, ".peer"), *peer,
                          "is the device itself");
  }
  if (!node_indices.count(static_cast<int32_t>(index))) {
    return JsonFieldError(where, absl::StrCat(field, ".peer"), *peer,
                          "names no device of the node");
  }
  link.peer_index = static_cast<int32_t>(index);
  link.nvlinks = static_cast<int32_t>(lanes);
  if (auto it = value.find("pcie"); it != value.end() && !it->is_null()) {
    std::optional<PcieLevel> level;
    if (it->is_string()) level = ParsePcieLevel(it->get<std::string>());
    if (!level) {
      return JsonFieldError(
          where, absl::StrCat(field, ".pcie"), *it,
          absl::StrCat("is not a PCIe level (want ", PcieLevelNames(), ")"));
    }
    link.pcie = *level;
  }
  if (auto it = value.find("numa"); it != value.end() && !it->is_null()) {
    if (!it->is_boolean()) {
      return JsonFieldError(where, absl::StrCat(field, ".numa"), *it,
                            "is not a boolean");
    }
    link.same_numa = it->get<bool>();
  }
  return link;
}

}  // namespace

void ReadGpuLinks(const Json& entry, absl::string_view where,
                  const std::set<int32_t>& node_indices, Gpu& gpu) {
  gpu.links.clear();
  gpu.links_left_out.clear();
  auto it = entry.find("links");
  if (it == entry.end() || it->is_null()) return;
  if (!it->is_array()) {
    gpu.links_left_out.emplace_back(
        JsonFieldError(where, "links", *it, "is not a JSON list").message());
    return;
  }
  std::set<int32_t> peers;
  for (size_t i = 0; i < it->size(); ++i) {
    const std::string field = absl::StrCat("links[", i, "]");
    absl::StatusOr<GpuLink> link =
        ReadLink((*it)[i], field, where, gpu, node_indices);
    if (link.ok() && !peers.insert(link->peer_index).second) {
      link = JsonFieldError(where, absl::StrCat(field, ".peer"),
                            link->peer_index, "is listed twice");
    }
    if (link.ok()) {
      gpu.links.push_back(*link);
    } else {
      gpu.links_left_out.emplace_back(link.status().message());
    }
  }
}

OrderedJson GpuLinksJson(const std::vector<GpuLink>& links) {
  OrderedJson list = OrderedJson::array();
  for (const GpuLink& link : links) {
    OrderedJson entry = OrderedJson::object();
    entry["peer"] = link.peer_index;
    entry["nvlinks"] = link.nvlinks;
    entry["pcie"] = std::string(PcieLevelName(link.pcie));
    entry["numa"] = link.same_numa;
    list.push_back(std::move(entry));
  }
  return list;
}

}  // namespace deviceshare::wire
