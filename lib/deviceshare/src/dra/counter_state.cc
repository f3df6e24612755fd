#include "deviceshare/dra/counter_state.h"

#include "absl/strings/str_cat.h"

namespace deviceshare::dra {

absl::Status CounterState::AddSet(const CounterSet& set) {
  auto [it, added] = left_.try_emplace(set.name);
  if (!added) {
    return absl::InvalidArgumentError(
        absl::StrCat("counter set \"", set.name, "\" is defined twice"));
  }
  for (const auto& [name, counter] : set.counters) {
    it->second[name] = counter.value;
  }
  total_[set.name] = it->second;
  return absl::OkStatus();
}

bool CounterState::Fits(const Device& device, std::string* why) const {
  for (const CounterConsumption& use : device.consumes_counters) {
    auto set = left_.find(use.counter_set);
    if (set == left_.end()) {
      *why = absl::StrCat("counter set ", use.counter_set, " is not published");
      return false;
    }
    for (const auto& [name, counter] : use.counters) {
      auto left = set->second.find(name);
      if (left == set->second.end()) {
        *why = absl::StrCat(use.counter_set, "/", name, " is not published");
        return false;
      }
      if (left->second < counter.value) {
        *why = absl::StrCat(use.counter_set, "/", name, ": ", counter.value,
                            " needed, ", left->second, " left");
        return false;
      }
    }
  }
  return true;
}

void CounterState::Take(const Device& device) {
  for (const CounterConsumption& use : device.consumes_counters) {
    auto& set = left_[use.counter_set];
    for (const auto& [name, counter] : use.counters) {
      set[name] -= counter.value;
    }
  }
}

void CounterState::Give(const Device& device) {
  for (const CounterConsumption& use : device.consumes_counters) {
    auto& set = left_[use.counter_set];
    for (const auto& [name, counter] : use.counters) {
      set[name] += counter.value;
    }
  }
}

int64_t CounterState::Left(const std::string& set,
                           const std::string& counter) const {
  auto s = left_.find(set);
  if (s == left_.end()) return -1;
  auto c = s->second.find(counter);
  return c == s->second.end() ? -1 : c->second;
}

std::map<std::string, int64_t> CounterState::UsedPermille() const {
  std::map<std::string, int64_t> used;
  for (const auto& [set, totals] : total_) {
    const auto& left = left_.at(set);
    int64_t sum = 0;
    int counted = 0;
    for (const auto& [name, total] : totals) {
      if (total <= 0) continue;
      sum += (total - left.at(name)) * 1000 / total;
      ++counted;
    }
    used[set] = counted == 0 ? 0 : sum / counted;
  }
  return used;
}

}  // namespace deviceshare::dra
