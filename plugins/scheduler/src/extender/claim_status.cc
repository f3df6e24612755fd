#include "claim_status.h"

namespace deviceshare::extender {
namespace {

using nlohmann::json;

// claim.status, made an object when it is absent or null.
json& StatusOf(json& claim) {
  json& status = claim["status"];
  if (!status.is_object()) status = json::object();
  return status;
}

const json* Member(const json& object, const char* key) {
  if (!object.is_object()) return nullptr;
  auto it = object.find(key);
  return it == object.end() || it->is_null() ? nullptr : &*it;
}

// object[key] when it is a string, else "" (never throws).
std::string Str(const json& object, const char* key) {
  const json* value = Member(object, key);
  return value != nullptr && value->is_string() ? value->get<std::string>()
                                                : "";
}

}  // namespace

bool IsAllocated(const json& claim) {
  const json* status = Member(claim, "status");
  return status != nullptr && Member(*status, "allocation") != nullptr;
}

std::string AllocatedNode(const json& claim) {
  const json* status = Member(claim, "status");
  const json* allocation =
      status == nullptr ? nullptr : Member(*status, "allocation");
  const json* selector =
      allocation == nullptr ? nullptr : Member(*allocation, "nodeSelector");
  const json* terms =
      selector == nullptr ? nullptr : Member(*selector, "nodeSelectorTerms");
  if (terms == nullptr || !terms->is_array()) return "";
  for (const json& term : *terms) {
    const json* fields = Member(term, "matchFields");
    if (fields == nullptr || !fields->is_array()) continue;
    for (const json& field : *fields) {
      const json* values = Member(field, "values");
      if (values == nullptr) continue;
      if (Str(field, "key") == "metadata.name" &&
          Str(field, "operator") == "In" && values->is_array() &&
          values->size() == 1 && (*values)[0].is_string()) {
        return (*values)[0].get<std::string>();
      }
    }
  }
  return "";
}

void SetAllocation(json& claim, const dra::AllocationResult& allocation) {
  StatusOf(claim)["allocation"] = dra::AllocationResultToJson(allocation);
}

void ClearAllocation(json& claim) { StatusOf(claim).erase("allocation"); }

bool AddConsumer(json& claim, const std::string& name, const std::string& uid) {
  json& reserved = StatusOf(claim)["reservedFor"];
  if (!reserved.is_array()) reserved = json::array();
  for (const json& entry : reserved) {
    if (Str(entry, "uid") == uid) return false;
  }
  reserved.push_back({{"resource", "pods"}, {"name", name}, {"uid", uid}});
  return true;
}

bool RemoveConsumer(json& claim, const std::string& uid) {
  json& status = StatusOf(claim);
  auto reserved = status.find("reservedFor");
  if (reserved == status.end()) return false;
  if (!reserved->is_array()) {
    status.erase(reserved);
    return true;
  }
  bool changed = false;
  json kept = json::array();
  for (json& entry : *reserved) {
    if (Str(entry, "uid") == uid) {
      changed = true;
    } else {
      kept.push_back(std::move(entry));
    }
  }
  if (kept.empty()) {
    status.erase(reserved);
  } else {
    *reserved = std::move(kept);
  }
  return changed;
}

bool HasConsumers(const json& claim) {
  const json* status = Member(claim, "status");
  const json* reserved =
      status == nullptr ? nullptr : Member(*status, "reservedFor");
  return reserved != nullptr && reserved->is_array() && !reserved->empty();
}

}  // namespace deviceshare::extender
