#include "deviceshare/agent/kubelet_checkpoint.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace deviceshare::agent {

absl::StatusOr<std::vector<CheckpointEntry>> ReadKubeletCheckpoint(
    const std::string& path, const std::string& resource_name) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  const nlohmann::json root = nlohmann::json::parse(buffer.str(), nullptr,
                                                    /*allow_exceptions=*/false);
  auto bad = [&](const std::string& why) {
    return absl::DataLossError(
        absl::StrCat(path, ": not a kubelet device checkpoint: ", why));
  };
  if (!root.is_object() || !root.contains("Data") ||
      !root["Data"].is_object()) {
    return bad("no Data object");
  }
  const nlohmann::json& data = root["Data"];
  std::vector<CheckpointEntry> entries;
  auto list = data.find("PodDeviceEntries");
  if (list == data.end() || list->is_null()) return entries;
  if (!list->is_array()) return bad("PodDeviceEntries is not a list");
  for (size_t i = 0; i < list->size(); ++i) {
    const nlohmann::json& item = (*list)[i];
    const std::string where = absl::StrCat("PodDeviceEntries[", i, "]");
    if (!item.is_object()) return bad(absl::StrCat(where, " is not an object"));
    auto text = [&](const char* key) -> std::string {
      auto found = item.find(key);
      return found != item.end() && found->is_string()
                 ? found->get<std::string>()
                 : std::string();
    };
    if (text("ResourceName") != resource_name) continue;
    CheckpointEntry entry;
    entry.pod_uid = text("PodUID");
    entry.container_name = text("ContainerName");
    auto ids = item.find("DeviceIDs");
    auto add = [&](const nlohmann::json& values) -> bool {
      if (!values.is_array()) return false;
      for (const nlohmann::json& id : values) {
        if (!id.is_string()) return false;
        entry.device_ids.push_back(id.get<std::string>());
      }
      return true;
    };
    if (ids == item.end() || ids->is_null()) {
      // no devices of this resource
    } else if (ids->is_array()) {
      if (!add(*ids)) return bad(absl::StrCat(where, ".DeviceIDs"));
    } else if (ids->is_object()) {
      for (const auto& [numa, values] : ids->items()) {
        if (!add(values)) {
          return bad(absl::StrCat(where, ".DeviceIDs[", numa, "]"));
        }
      }
    } else {
      return bad(absl::StrCat(where, ".DeviceIDs"));
    }
    if (entry.pod_uid.empty()) return bad(absl::StrCat(where, ".PodUID"));
    std::sort(entry.device_ids.begin(), entry.device_ids.end());
    entries.push_back(std::move(entry));
  }
  return entries;
}

}  // namespace deviceshare::agent
