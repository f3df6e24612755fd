#include "deviceshare/extender/in_flight.h"

#include <algorithm>
#include <utility>

namespace deviceshare::extender {

ContainerShares GpuShares(const PodAllocation& allocation) {
  ContainerShares shares;
  for (const ContainerAllocation& container : allocation.containers) {
    if (!container.devices.empty()) shares.push_back(container.devices);
  }
  return shares;
}

bool Confusable(const ContainerShares& a, const ContainerShares& b) {
  for (const std::vector<DeviceGrant>& mine : a) {
    for (const std::vector<DeviceGrant>& theirs : b) {
      if (mine.size() == theirs.size() && !SameShare(mine, theirs)) {
        return true;
      }
    }
  }
  return false;
}

void InFlightIndex::Upsert(const std::string& uid, InFlightPod pod) {
  if (pod.shares.empty()) {
    Remove(uid);
    return;
  }
  auto [at, inserted] = node_of_.try_emplace(uid, pod.node);
  if (!inserted) {
    auto node = by_node_.find(at->second);
    if (node != by_node_.end()) {
      auto old = node->second.find(uid);
      if (old != node->second.end()) {
        pod.deadline = std::min(pod.deadline, old->second.deadline);
        node->second.erase(old);
      }
      if (node->second.empty()) by_node_.erase(node);
    }
    at->second = pod.node;
  }
  NodePods& pods = by_node_[pod.node];
  pods.insert_or_assign(uid, std::move(pod));
}

void InFlightIndex::SetDeadline(const std::string& uid, absl::Time deadline) {
  auto at = node_of_.find(uid);
  if (at == node_of_.end()) return;
  auto node = by_node_.find(at->second);
  if (node == by_node_.end()) return;
  auto pod = node->second.find(uid);
  if (pod != node->second.end()) pod->second.deadline = deadline;
}

void InFlightIndex::Remove(const std::string& uid) {
  auto at = node_of_.find(uid);
  if (at == node_of_.end()) return;
  auto node = by_node_.find(at->second);
  if (node != by_node_.end()) {
    node->second.erase(uid);
    if (node->second.empty()) by_node_.erase(node);
  }
  node_of_.erase(at);
}

std::optional<InFlightPod> InFlightIndex::FindConfusable(
    const std::string& node, const std::string& uid,
    const ContainerShares& shares, absl::Time now) {
  auto found = by_node_.find(node);
  if (found == by_node_.end()) return std::nullopt;
  NodePods& pods = found->second;
  std::optional<InFlightPod> blocker;
  for (auto it = pods.begin(); it != pods.end();) {
    if (it->second.deadline <= now) {
      node_of_.erase(it->first);
      pods.erase(it++);
      continue;
    }
    if (!blocker && it->first != uid && Confusable(shares, it->second.shares)) {
      blocker = it->second;
    }
    ++it;
  }
  if (pods.empty()) by_node_.erase(found);
  return blocker;
}

std::vector<std::string> InFlightIndex::Uids() const {
  std::vector<std::string> uids;
  uids.reserve(node_of_.size());
  for (const auto& [uid, node] : node_of_) uids.push_back(uid);
  return uids;
}

int InFlightIndex::Expire(absl::Time now) {
  int expired = 0;
  for (auto node = by_node_.begin(); node != by_node_.end();) {
    NodePods& pods = node->second;
    for (auto it = pods.begin(); it != pods.end();) {
      if (it->second.deadline > now) {
        ++it;
        continue;
      }
      node_of_.erase(it->first);
      pods.erase(it++);
      ++expired;
    }
    if (pods.empty()) {
      by_node_.erase(node++);
    } else {
      ++node;
    }
  }
  return expired;
}

}  // namespace deviceshare::extender
