#include "deviceshare/agent/slice_publisher.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "deviceshare/dra/slice_json.h"
#include "deviceshare/kube/api_status.h"
#include "deviceshare/kube/object_paths.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::agent {
namespace {

using nlohmann::json;

// A slice's JSON with what changes on every write left out: the pool's
// generation and the server's metadata.
json Comparable(json slice) {
  json out = {{"name", slice["metadata"]["name"]}, {"spec", slice["spec"]}};
  if (out["spec"].contains("pool")) out["spec"]["pool"].erase("generation");
  return out;
}

}  // namespace

SlicePublisher::SlicePublisher(kube::ApiClient* api, std::string driver,
                               std::string node_name)
    : api_(api), driver_(std::move(driver)), node_name_(std::move(node_name)) {}

absl::StatusOr<PublishStats> SlicePublisher::Publish(
    std::vector<dra::ResourceSlice> slices) {
  DS_ASSIGN_OR_RETURN(
      json list,
      api_->Get(kube::WithQuery(
          kube::ResourceSlicesPath(),
          {{"fieldSelector", absl::StrCat("spec.nodeName=", node_name_,
                                          ",spec.driver=", driver_)}})));
  std::map<std::string, json> existing;
  int64_t highest = generation_;
  std::vector<json> found;
  if (list.contains("items") && list["items"].is_array()) {
    for (const json& item : list["items"]) {
      const std::string name = item["metadata"].value("name", "");
      existing[name] = item;
      highest = std::max<int64_t>(
          highest, item["spec"]["pool"].value("generation", int64_t{0}));
      found.push_back(Comparable(item));
    }
  }
  std::vector<json> wanted;
  for (const dra::ResourceSlice& slice : slices) {
    wanted.push_back(Comparable(dra::ResourceSliceToJson(slice)));
  }
  auto by_name = [](const json& a, const json& b) {
    return a["name"].get<std::string>() < b["name"].get<std::string>();
  };
  std::sort(found.begin(), found.end(), by_name);
  std::sort(wanted.begin(), wanted.end(), by_name);
  PublishStats stats;
  if (found == wanted && !found.empty()) {
    generation_ = highest;
    stats.generation = highest;
    return stats;
  }
  const int64_t generation = highest + 1;
  for (dra::ResourceSlice& slice : slices) {
    slice.pool.generation = generation;
    json body = dra::ResourceSliceToJson(slice);
    auto it = existing.find(slice.name);
    if (it != existing.end()) {
      body["metadata"]["resourceVersion"] =
          it->second["metadata"].value("resourceVersion", "");
      DS_RETURN_IF_ERROR(
          api_->Put(kube::ResourceSlicePath(slice.name), body).status());
      existing.erase(it);
    } else {
      DS_RETURN_IF_ERROR(api_->Post(kube::ResourceSlicesPath(), body).status());
    }
    ++stats.written;
  }
  for (const auto& [name, item] : existing) {
    absl::Status deleted = api_->Delete(kube::ResourceSlicePath(name));
    if (!deleted.ok() && kube::HttpStatusOf(deleted) != 404) return deleted;
    ++stats.deleted;
  }
  generation_ = generation;
  stats.generation = generation;
  return stats;
}

}  // namespace deviceshare::agent
