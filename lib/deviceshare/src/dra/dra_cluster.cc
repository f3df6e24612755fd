#include "deviceshare/dra/dra_cluster.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "deviceshare/dra/allocated_claim.h"
#include "deviceshare/dra/consumable_capacity.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::dra {
namespace {

// The node of an allocation's nodeSelector (a single matchFields term on
// metadata.name, as schedulers write it); "" when it names none.
std::string SelectedNode(const nlohmann::json& allocation) {
  const nlohmann::json* terms = nullptr;
  if (allocation.contains("nodeSelector") &&
      allocation["nodeSelector"].is_object() &&
      allocation["nodeSelector"].contains("nodeSelectorTerms")) {
    terms = &allocation["nodeSelector"]["nodeSelectorTerms"];
  }
  if (terms == nullptr || !terms->is_array()) return "";
  for (const nlohmann::json& term : *terms) {
    if (!term.is_object() || !term.contains("matchFields") ||
        !term["matchFields"].is_array()) {
      continue;
    }
    for (const nlohmann::json& field : term["matchFields"]) {
      if (field.is_object() && field.value("key", "") == "metadata.name" &&
          field.value("operator", "") == "In" && field.contains("values") &&
          field["values"].is_array() && field["values"].size() == 1 &&
          field["values"][0].is_string()) {
        return field["values"][0].get<std::string>();
      }
    }
  }
  return "";
}

// The claim's status.allocation as an AllocationResult; nullopt when it
// has none.
absl::StatusOr<std::optional<AllocationResult>> AllocationFromStatus(
    const ResourceClaim& claim) {
  if (claim.allocation.is_null()) return std::nullopt;
  nlohmann::json wrapped = {
      {"metadata", {{"namespace", claim.ns}, {"name", claim.name}}},
      {"status", {{"allocation", claim.allocation}}}};
  if (!claim.uid.empty()) wrapped["metadata"]["uid"] = claim.uid;
  DS_ASSIGN_OR_RETURN(AllocatedClaim decoded, DecodeAllocatedClaim(wrapped));
  AllocationResult allocation;
  for (AllocatedDevice& device : decoded.results) {
    DeviceResult result;
    result.request = std::move(device.request);
    result.driver = std::move(device.driver);
    result.pool = std::move(device.pool);
    result.device = std::move(device.device);
    result.share_id = std::move(device.share_id);
    result.admin_access = device.admin_access;
    for (const auto& [name, amount] : device.consumed) {
      result.consumed[name] = CapacityAmount{amount, QuantityFormat::kDecimal};
    }
    allocation.results.push_back(std::move(result));
  }
  if (claim.allocation.contains("devices") &&
      claim.allocation["devices"].is_object() &&
      claim.allocation["devices"].contains("config") &&
      claim.allocation["devices"]["config"].is_array()) {
    for (const nlohmann::json& config : claim.allocation["devices"]["config"]) {
      allocation.config.push_back(config);
    }
  }
  allocation.node_name = SelectedNode(claim.allocation);
  return allocation;
}

// The same devices and shares (what is charged), whatever the config.
bool SameDevices(const AllocationResult& a, const AllocationResult& b) {
  if (a.node_name != b.node_name || a.results.size() != b.results.size()) {
    return false;
  }
  for (size_t i = 0; i < a.results.size(); ++i) {
    const DeviceResult& x = a.results[i];
    const DeviceResult& y = b.results[i];
    if (x.driver != y.driver || x.pool != y.pool || x.device != y.device ||
        x.request != y.request || x.admin_access != y.admin_access ||
        x.consumed.size() != y.consumed.size()) {
      return false;
    }
    for (const auto& [name, amount] : x.consumed) {
      auto it = y.consumed.find(name);
      if (it == y.consumed.end() || it->second.value != amount.value) {
        return false;
      }
    }
  }
  return true;
}

void AppendExact(const ExactRequest& request, std::string& out) {
  absl::StrAppend(&out, request.device_class, "|",
                  absl::StrJoin(request.selectors, "\x1f"), "|",
                  request.mode == ExactRequest::kAll ? "all" : "n",
                  request.count, "|", request.admin_access ? "admin" : "", "|");
  for (const auto& [name, amount] : request.capacity) {
    absl::StrAppend(&out, name, "=", amount, ",");
  }
}

}  // namespace

std::string ClaimSpecShape(const ClaimSpec& spec) {
  std::string out;
  for (const DeviceRequest& request : spec.requests) {
    absl::StrAppend(&out, "R", request.name, ":");
    if (request.exactly) AppendExact(*request.exactly, out);
    for (const SubRequest& sub : request.first_available) {
      absl::StrAppend(&out, "S", sub.name, ":");
      AppendExact(sub.exactly, out);
    }
    out += ';';
  }
  for (const DeviceConstraint& constraint : spec.constraints) {
    absl::StrAppend(&out, "C", absl::StrJoin(constraint.requests, ","), "|",
                    constraint.match_attribute, "|",
                    constraint.distinct_attribute, ";");
  }
  return out;
}

std::string ClaimKey(const std::string& ns, const std::string& name) {
  return absl::StrCat(ns, "/", name);
}

absl::StatusOr<std::unique_ptr<DraCluster>> DraCluster::Create(
    DraClusterOptions options) {
  if (!options.new_share_id) {
    return absl::InvalidArgumentError("DraClusterOptions.new_share_id: unset");
  }
  return std::unique_ptr<DraCluster>(new DraCluster(std::move(options)));
}

DraCluster::DraCluster(DraClusterOptions options)
    : options_(std::move(options)) {}

std::vector<std::string> DraCluster::AllNodes() const { return Nodes(); }

std::vector<std::string> DraCluster::Nodes() const {
  std::vector<std::string> names;
  names.reserve(nodes_.size());
  for (const auto& [name, devices] : nodes_) names.push_back(name);
  return names;
}

bool DraCluster::HasNode(const std::string& node) const {
  return nodes_.contains(node);
}

void DraCluster::Touch(ClaimEntry& entry) { entry.version = ++last_version_; }

std::vector<std::string> DraCluster::UpsertDeviceClass(
    DeviceClass device_class) {
  std::string name = device_class.name;
  classes_[name] = std::move(device_class);
  return AllNodes();
}

std::vector<std::string> DraCluster::RemoveDeviceClass(
    const std::string& name) {
  if (classes_.erase(name) == 0) return {};
  return AllNodes();
}

absl::Status DraCluster::Rebuild(const std::string& node,
                                 NodeDevices& devices) {
  std::vector<const ResourceSlice*> slices;
  for (const auto& [name, slice] : devices.slices) slices.push_back(&slice);
  AllocatorOptions allocator_options;
  allocator_options.max_steps = options_.max_steps;
  allocator_options.new_share_id = options_.new_share_id;
  DS_ASSIGN_OR_RETURN(
      std::unique_ptr<NodeAllocator> allocator,
      NodeAllocator::Create(node, slices, &classes_, &cel_, allocator_options));
  devices.allocator = std::move(allocator);
  for (const auto& [key, entry] : claims_) {
    if (entry.allocation && entry.allocation->node_name == node) {
      // A device the node no longer publishes cannot be charged; the claim
      // stays allocated as the API server says.
      devices.allocator->Charge(*entry.allocation).IgnoreError();
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> DraCluster::UpsertSlice(
    ResourceSlice slice) {
  if (slice.node_name.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ResourceSlice ", slice.name,
        ": spec.nodeName is empty; only node-local slices are used"));
  }
  std::vector<std::string> changed;
  auto moved = slice_nodes_.find(slice.name);
  if (moved != slice_nodes_.end() && moved->second != slice.node_name) {
    changed = RemoveSlice(slice.name);
  }
  const std::string node = slice.node_name;
  NodeDevices candidate;
  auto existing = nodes_.find(node);
  if (existing != nodes_.end()) candidate.slices = existing->second.slices;
  const std::string name = slice.name;
  candidate.slices[name] = std::move(slice);
  DS_RETURN_IF_ERROR(Rebuild(node, candidate));
  // std::map keeps its nodes on move, so the allocator's slice pointers
  // stay valid.
  nodes_[node] = std::move(candidate);
  slice_nodes_[name] = node;
  changed.push_back(node);
  Refresh(changed);
  return changed;
}

std::vector<std::string> DraCluster::RemoveSlice(const std::string& name) {
  auto it = slice_nodes_.find(name);
  if (it == slice_nodes_.end()) return {};
  const std::string node = it->second;
  slice_nodes_.erase(it);
  auto devices = nodes_.find(node);
  if (devices == nodes_.end()) return {node};
  devices->second.slices.erase(name);
  if (devices->second.slices.empty()) {
    nodes_.erase(devices);
    return {node};
  }
  // Pools that built with the slice build without it (a duplicate counter
  // set can only disappear).
  Rebuild(node, devices->second).IgnoreError();
  Refresh({node});
  return {node};
}

void DraCluster::ChargeOn(const ClaimEntry& entry) {
  if (!entry.allocation) return;
  auto node = nodes_.find(entry.allocation->node_name);
  if (node == nodes_.end() || node->second.allocator == nullptr) return;
  node->second.allocator->Charge(*entry.allocation).IgnoreError();
}

void DraCluster::FreeOn(const ClaimEntry& entry) {
  if (!entry.allocation) return;
  auto node = nodes_.find(entry.allocation->node_name);
  if (node == nodes_.end() || node->second.allocator == nullptr) return;
  node->second.allocator->Release(*entry.allocation);
}

absl::StatusOr<std::vector<std::string>> DraCluster::UpsertClaim(
    ResourceClaim claim) {
  DS_ASSIGN_OR_RETURN(std::optional<AllocationResult> from_api,
                      AllocationFromStatus(claim));
  const std::string key = ClaimKey(claim.ns, claim.name);
  ClaimEntry& entry = claims_[key];
  std::vector<std::string> changed;
  auto note = [&](const std::optional<AllocationResult>& allocation) {
    if (allocation && !allocation->node_name.empty()) {
      changed.push_back(allocation->node_name);
    }
  };
  // What stays reserved: the API server's consumers, plus ours while our
  // allocation is only assumed (the API server has not caught up).
  std::set<std::string> reserved(claim.reserved_for_uids.begin(),
                                 claim.reserved_for_uids.end());
  if (from_api) {
    if (!entry.allocation || !SameDevices(*entry.allocation, *from_api)) {
      note(entry.allocation);
      FreeOn(entry);
      entry.allocation = std::move(from_api);
      ChargeOn(entry);
      note(entry.allocation);
    }
    entry.assumed = false;
  } else if (entry.allocation && !entry.assumed) {
    note(entry.allocation);  // the API server dropped it
    FreeOn(entry);
    entry.allocation.reset();
  }
  if (entry.assumed) {
    reserved.insert(entry.reserved_by.begin(), entry.reserved_by.end());
  }
  entry.reserved_by = std::move(reserved);
  entry.shape = ClaimSpecShape(claim.spec);
  entry.claim = std::move(claim);
  Touch(entry);
  Refresh(changed);
  return changed;
}

std::vector<std::string> DraCluster::RemoveClaim(const std::string& key) {
  auto it = claims_.find(key);
  if (it == claims_.end()) return {};
  std::vector<std::string> changed;
  if (it->second.allocation) {
    changed.push_back(it->second.allocation->node_name);
    FreeOn(it->second);
  }
  claims_.erase(it);
  Refresh(changed);
  return changed;
}

ClaimsOnNode DraCluster::Filter(const std::string& pod_uid,
                                const std::vector<std::string>& claim_keys,
                                const std::string& node,
                                DeviceOrder order) const {
  using Outcome = ClaimsOnNode::Outcome;
  ClaimsOnNode verdict;
  std::vector<const ResourceClaim*> pending;
  std::vector<std::string> pending_keys;
  for (const std::string& key : claim_keys) {
    auto it = claims_.find(key);
    if (it == claims_.end()) {
      verdict.outcome = Outcome::kClaimNotReady;
      verdict.reason = absl::StrCat("claim ", key, " does not exist (yet)");
      return verdict;
    }
    const ClaimEntry& entry = it->second;
    if (!entry.reserved_by.contains(pod_uid) &&
        entry.reserved_by.size() >= kMaxClaimConsumers) {
      verdict.outcome = Outcome::kClaimNotReady;
      verdict.reason = absl::StrCat("claim ", key, " already has ",
                                    kMaxClaimConsumers, " consumers");
      return verdict;
    }
    if (entry.allocation) {
      if (!entry.allocation->node_name.empty() &&
          entry.allocation->node_name != node) {
        verdict.outcome = Outcome::kClaimElsewhere;
        verdict.reason = absl::StrCat("claim ", key, " is allocated on node ",
                                      entry.allocation->node_name);
        return verdict;
      }
      continue;
    }
    pending.push_back(&entry.claim);
    pending_keys.push_back(key);
  }
  auto devices = nodes_.find(node);
  if (devices == nodes_.end()) {
    if (pending.empty()) {
      verdict.utilisation_after = 0;
      return verdict;
    }
    verdict.outcome = Outcome::kNoDevices;
    verdict.reason = absl::StrCat("node ", node, " publishes no DRA device");
    return verdict;
  }
  const NodeAllocator& allocator = *devices->second.allocator;
  if (pending.empty()) {
    verdict.utilisation_after = allocator.UtilisationPercent();
    return verdict;
  }
  absl::StatusOr<ClaimsVerdict> tried = allocator.Try(pending, order);
  if (!tried.ok()) {
    verdict.outcome = Outcome::kClaimNotReady;
    verdict.reason = std::string(tried.status().message());
    return verdict;
  }
  if (!tried->fits) {
    verdict.outcome = Outcome::kDevicesUnavailable;
    verdict.reason = std::move(tried->reason);
    return verdict;
  }
  for (size_t i = 0; i < pending.size(); ++i) {
    verdict.allocations.emplace(pending_keys[i],
                                std::move(tried->allocations[i]));
  }
  verdict.utilisation_after = tried->utilisation_after;
  return verdict;
}

absl::StatusOr<std::vector<std::string>> DraCluster::Reserve(
    const std::string& pod_uid, const std::string& node,
    const std::vector<std::string>& claim_keys,
    const std::map<std::string, AllocationResult>& allocations) {
  for (const std::string& key : claim_keys) {
    auto it = claims_.find(key);
    if (it == claims_.end()) {
      return absl::NotFoundError(
          absl::StrCat("claim ", key, " does not exist"));
    }
    if (allocations.contains(key) && it->second.allocation) {
      return absl::FailedPreconditionError(
          absl::StrCat("claim ", key, " was allocated meanwhile"));
    }
  }
  std::vector<AllocationResult> committed;
  if (!allocations.empty()) {
    auto devices = nodes_.find(node);
    if (devices == nodes_.end()) {
      return absl::FailedPreconditionError(
          absl::StrCat("node ", node, " publishes no DRA device"));
    }
    for (const auto& [key, allocation] : allocations) {
      committed.push_back(allocation);
    }
    DS_RETURN_IF_ERROR(devices->second.allocator->Commit(committed));
  }
  size_t next = 0;
  for (const auto& [key, allocation] : allocations) {
    ClaimEntry& entry = claims_.at(key);
    entry.allocation = std::move(committed[next++]);
    entry.assumed = true;
  }
  for (const std::string& key : claim_keys) {
    ClaimEntry& entry = claims_.at(key);
    entry.reserved_by.insert(pod_uid);
    Touch(entry);
  }
  Refresh({node});
  return std::vector<std::string>{node};
}

std::vector<std::string> DraCluster::Unreserve(
    const std::string& pod_uid, const std::vector<std::string>& claim_keys) {
  std::vector<std::string> changed;
  for (const std::string& key : claim_keys) {
    auto it = claims_.find(key);
    if (it == claims_.end()) continue;
    ClaimEntry& entry = it->second;
    if (entry.reserved_by.erase(pod_uid) == 0) continue;
    Touch(entry);
    if (entry.assumed && entry.reserved_by.empty()) {
      changed.push_back(entry.allocation->node_name);
      FreeOn(entry);
      entry.allocation.reset();
      entry.assumed = false;
    }
  }
  Refresh(changed);
  return changed;
}

const ClaimEntry* DraCluster::FindClaim(const std::string& key) const {
  auto it = claims_.find(key);
  return it == claims_.end() ? nullptr : &it->second;
}

uint64_t DraCluster::ClaimVersion(const std::string& key) const {
  const ClaimEntry* entry = FindClaim(key);
  return entry == nullptr ? 0 : entry->version;
}

std::string DraCluster::FilterShape(const std::string& key) const {
  const ClaimEntry* entry = FindClaim(key);
  if (entry == nullptr) return absl::StrCat("?", key);
  if (entry->allocation || entry->reserved_by.size() >= kMaxClaimConsumers) {
    return absl::StrCat("=", key, "@", entry->version);
  }
  return entry->shape;
}

GpuTotals DraCluster::Totals() const {
  GpuTotals totals;
  for (const auto& [name, devices] : nodes_) {
    totals += devices.allocator->Totals();
  }
  return totals;
}

int DraCluster::UtilisationPercent(const std::string& node) const {
  auto it = nodes_.find(node);
  if (it == nodes_.end()) return 0;
  return it->second.allocator->UtilisationPercent();
}

}  // namespace deviceshare::dra
