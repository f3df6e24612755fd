#include "deviceshare/dra/allocation_json.h"

#include "deviceshare/dra/slice_json.h"

namespace deviceshare::dra {
namespace {

using nlohmann::json;

json ResultToJson(const DeviceResult& result) {
  json out = {{"request", result.request},
              {"driver", result.driver},
              {"pool", result.pool},
              {"device", result.device}};
  if (result.admin_access) out["adminAccess"] = true;
  if (!result.share_id.empty()) out["shareID"] = result.share_id;
  if (!result.consumed.empty()) {
    json& consumed = out["consumedCapacity"] = json::object();
    for (const auto& [name, amount] : result.consumed) {
      consumed[name] = FormatQuantity(amount.value, amount.format);
    }
  }
  return out;
}

}  // namespace

json AllocationResultToJson(const AllocationResult& allocation) {
  json results = json::array();
  for (const DeviceResult& result : allocation.results) {
    results.push_back(ResultToJson(result));
  }
  json devices = {{"results", std::move(results)}};
  if (!allocation.config.empty()) devices["config"] = allocation.config;
  json out = {{"devices", std::move(devices)}};
  if (!allocation.node_name.empty()) {
    out["nodeSelector"] = {
        {"nodeSelectorTerms",
         json::array(
             {{{"matchFields",
                json::array(
                    {{{"key", "metadata.name"},
                      {"operator", "In"},
                      {"values", json::array({allocation.node_name})}}})}}})}};
  }
  return out;
}

}  // namespace deviceshare::dra
