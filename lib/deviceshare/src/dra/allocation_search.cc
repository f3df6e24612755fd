#include "dra/allocation_search.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "deviceshare/status_macros.h"

namespace deviceshare::dra {
namespace {

// The most devices one claim's allocation may list
// (resource.k8s.io/v1 AllocationResultsMaxSize).
constexpr int64_t kMaxResultsPerClaim = 32;

// The amount a best-fit order compares: what is left of the device's
// first capacity (memory when it has one) after the request; dedicated
// devices by their size.
int64_t FitKey(const Device& device, const ExactRequest& request,
               const PoolUsage& usage) {
  if (device.capacity.empty()) return 0;
  auto cap = device.capacity.find("memory");
  if (cap == device.capacity.end()) cap = device.capacity.begin();
  if (!device.allow_multiple_allocations) return cap->second.value;
  const auto& in_use = usage.InUse(device.name);
  auto used = in_use.find(cap->first);
  const int64_t held = used == in_use.end() ? 0 : used->second;
  auto asked = request.capacity.find(cap->first);
  std::string why;
  std::optional<int64_t> amount = RoundedAmount(
      cap->second,
      asked == request.capacity.end() ? std::nullopt
                                      : std::optional<int64_t>(asked->second),
      &why);
  return cap->second.value - held - amount.value_or(0);
}

// Whether `constraint` binds the alternative `result_name` ("gpu" or
// "gpu/share") of `request`: a constraint naming the request binds all its
// subrequests, one naming a subrequest binds only that one.
bool Applies(const DeviceConstraint& constraint, const std::string& request,
             const std::string& result_name) {
  if (constraint.requests.empty()) return true;
  for (const std::string& name : constraint.requests) {
    if (name == request || name == result_name) return true;
  }
  return false;
}

// Whether `device` could take `request` before anything of this search is
// charged: what allocationMode All counts as "all" (a dedicated device by
// its size, a shared one by what its other allocations leave).
bool HasRoomBeforeSearch(const Device& device, const ExactRequest& request,
                         const PoolUsage& usage) {
  static const std::map<std::string, int64_t> kNothingInUse;
  return ConsumeCapacity(device, request.capacity,
                         device.allow_multiple_allocations
                             ? usage.InUse(device.name)
                             : kNothingInUse)
      .fits;
}

// The devices an alternative takes when chosen.
int64_t ResultsOf(const ExactRequest& request, size_t candidates) {
  return request.mode == ExactRequest::kAll ? static_cast<int64_t>(candidates)
                                            : request.count;
}

// Whether a claim config applies to the allocation: it names no request,
// or a request or the chosen subrequest (`placed` holds both names). One
// naming only subrequests that were not chosen is left out, as in 1.34.
bool ConfigApplies(const ClaimConfig& config,
                   const std::set<std::string>& placed) {
  if (config.requests.empty()) return true;
  for (const std::string& name : config.requests) {
    if (placed.contains(name)) return true;
  }
  return false;
}

}  // namespace

AllocationSearch::AllocationSearch(
    const std::string& node_name, const NodePools& pools,
    std::vector<PoolUsage>& usage,
    const std::map<std::string, DeviceClass>& classes, CelCache& cel,
    const AllocatorOptions& options, DeviceOrder order, SelectorMemo& memo)
    : node_name_(node_name),
      pools_(pools),
      usage_(usage),
      classes_(classes),
      cel_(cel),
      options_(options),
      order_(order),
      memo_(memo) {}

absl::StatusOr<bool> AllocationSearch::Matches(
    const std::vector<std::string>& selectors, const PoolDevice& device) {
  for (const std::string& expression : selectors) {
    auto key = std::make_pair(expression, device.device);
    {
      absl::MutexLock lock(&memo_.mu);
      if (auto known = memo_.answers.find(key); known != memo_.answers.end()) {
        if (!known->second) return false;
        continue;
      }
    }
    DS_ASSIGN_OR_RETURN(std::shared_ptr<const CelProgram> program,
                        cel_.Get(expression));
    DS_ASSIGN_OR_RETURN(
        bool matches,
        program->Matches(CelDevice{device.slice->driver, device.device}));
    {
      absl::MutexLock lock(&memo_.mu);
      memo_.answers.emplace(std::move(key), matches);
    }
    if (!matches) return false;
  }
  return true;
}

absl::StatusOr<AllocationSearch::Alternative> AllocationSearch::Resolve(
    const ExactRequest& request, std::string result_name) {
  auto cls = classes_.find(request.device_class);
  if (cls == classes_.end()) {
    return absl::InvalidArgumentError(
        absl::StrCat("request ", result_name, ": DeviceClass \"",
                     request.device_class, "\" does not exist"));
  }
  Alternative alternative;
  alternative.request = &request;
  alternative.result_name = std::move(result_name);
  for (size_t p = 0; p < pools_.pools.size(); ++p) {
    const NodePool& pool = pools_.pools[p];
    for (const PoolDevice& device : pool.devices) {
      bool has_keys = true;
      for (const auto& [name, amount] : request.capacity) {
        has_keys &= device.device->capacity.contains(name);
      }
      if (!has_keys) continue;
      DS_ASSIGN_OR_RETURN(bool by_class,
                          Matches(cls->second.selectors, device));
      if (!by_class) continue;
      DS_ASSIGN_OR_RETURN(bool by_request, Matches(request.selectors, device));
      if (!by_request) continue;
      if (request.mode == ExactRequest::kAll &&
          !HasRoomBeforeSearch(*device.device, request, usage_[p])) {
        continue;
      }
      alternative.candidates.push_back(Candidate{p, &device});
      alternative.complete_pools &= pool.complete;
    }
  }
  Order(request, alternative.candidates);
  return alternative;
}

void AllocationSearch::Order(const ExactRequest& request,
                             std::vector<Candidate>& candidates) {
  if (order_ == DeviceOrder::kFirstFit || request.mode == ExactRequest::kAll) {
    return;
  }
  const bool spread = order_ == DeviceOrder::kSpread;
  std::vector<std::pair<int64_t, Candidate>> keyed;
  keyed.reserve(candidates.size());
  for (const Candidate& c : candidates) {
    keyed.emplace_back(FitKey(*c.device->device, request, usage_[c.pool]), c);
  }
  std::stable_sort(keyed.begin(), keyed.end(),
                   [spread](const auto& a, const auto& b) {
                     // Devices that cannot fit (negative) go last.
                     if ((a.first < 0) != (b.first < 0)) return b.first < 0;
                     return spread ? a.first > b.first : a.first < b.first;
                   });
  for (size_t i = 0; i < keyed.size(); ++i) candidates[i] = keyed[i].second;
}

absl::Status AllocationSearch::Plan(
    const std::vector<const ResourceClaim*>& claims) {
  for (const ResourceClaim* claim : claims) {
    ClaimPlan plan;
    plan.claim = claim;
    for (const DeviceRequest& request : claim->spec.requests) {
      RequestPlan rp;
      rp.name = request.name;
      if (request.exactly.has_value()) {
        DS_ASSIGN_OR_RETURN(Alternative a,
                            Resolve(*request.exactly, request.name));
        rp.alternatives.push_back(std::move(a));
      }
      for (const SubRequest& sub : request.first_available) {
        DS_ASSIGN_OR_RETURN(
            Alternative a,
            Resolve(sub.exactly, absl::StrCat(request.name, "/", sub.name)));
        rp.alternatives.push_back(std::move(a));
      }
      plan.requests.push_back(std::move(rp));
    }
    Constrain(plan);
    plan.min_results_after.assign(plan.requests.size() + 1, 0);
    for (size_t r = plan.requests.size(); r-- > 0;) {
      int64_t fewest = kMaxResultsPerClaim + 1;
      for (const Alternative& a : plan.requests[r].alternatives) {
        fewest = std::min(fewest, ResultsOf(*a.request, a.candidates.size()));
      }
      plan.min_results_after[r] = plan.min_results_after[r + 1] + fewest;
    }
    plans_.push_back(std::move(plan));
  }
  results_of_.assign(plans_.size(), 0);
  return absl::OkStatus();
}

// Builds the claim's constraints and hands each alternative those that
// bind it.
void AllocationSearch::Constrain(ClaimPlan& plan) {
  for (const DeviceConstraint& constraint : plan.claim->spec.constraints) {
    const bool match = !constraint.match_attribute.empty();
    plan.constraints.push_back(std::make_unique<AttributeConstraint>(
        match ? AttributeConstraint::Kind::kMatch
              : AttributeConstraint::Kind::kDistinct,
        match ? constraint.match_attribute : constraint.distinct_attribute));
    for (RequestPlan& rp : plan.requests) {
      for (Alternative& a : rp.alternatives) {
        if (Applies(constraint, rp.name, a.result_name)) {
          a.constraints.push_back(plan.constraints.back().get());
        }
      }
    }
  }
}

// Conditions no search can get around, checked in O(devices): a dedicated-
// only request with fewer free candidates than it needs; dedicated-only
// requests together needing more distinct free devices than they have; a
// matchAttribute with no value enough devices of every request share.
bool AllocationSearch::NecessaryConditionsHold() {
  std::set<const PoolDevice*> union_free;
  int64_t needed = 0;
  for (const ClaimPlan& plan : plans_) {
    for (size_t r = 0; r < plan.requests.size(); ++r) {
      const RequestPlan& rp = plan.requests[r];
      if (rp.alternatives.size() != 1) continue;
      const Alternative& a = rp.alternatives[0];
      if (a.request->mode != ExactRequest::kExactCount ||
          a.request->admin_access) {
        continue;
      }
      bool dedicated_only = true;
      std::vector<const PoolDevice*> free;
      for (const Candidate& c : a.candidates) {
        dedicated_only &= !c.device->device->allow_multiple_allocations;
        if (usage_[c.pool].Holders(c.device->device->name) == 0) {
          free.push_back(c.device);
        }
      }
      if (!dedicated_only) continue;
      if (static_cast<int64_t>(free.size()) < a.request->count) {
        last_reason_ =
            absl::StrCat("request ", a.result_name, " needs ", a.request->count,
                         " devices, ", free.size(), " free ones match");
        return false;
      }
      union_free.insert(free.begin(), free.end());
      needed += a.request->count;
    }
  }
  if (needed > static_cast<int64_t>(union_free.size())) {
    last_reason_ = absl::StrCat("the dedicated requests need ", needed,
                                " distinct devices, ", union_free.size(),
                                " free ones match");
    return false;
  }
  for (const ClaimPlan& plan : plans_) {
    for (const DeviceConstraint& constraint : plan.claim->spec.constraints) {
      if (!constraint.match_attribute.empty() &&
          !SomeValueServesAll(plan, constraint)) {
        last_reason_ = absl::StrCat("no value of ", constraint.match_attribute,
                                    " is shared by enough devices of every "
                                    "request it constrains");
        return false;
      }
    }
  }
  return true;
}

// For matchAttribute: a value that, for every single-alternative ExactCount
// request under the constraint, enough matching devices carry (free ones,
// for dedicated devices). Requests with alternatives are not counted.
bool AllocationSearch::SomeValueServesAll(const ClaimPlan& plan,
                                          const DeviceConstraint& constraint) {
  std::optional<std::set<std::string>> common;
  for (const RequestPlan& rp : plan.requests) {
    if (rp.alternatives.size() != 1) continue;
    const Alternative& a = rp.alternatives[0];
    if (!Applies(constraint, rp.name, a.result_name)) continue;
    if (a.request->mode != ExactRequest::kExactCount) continue;
    std::map<std::string, int64_t> per_value;
    for (const Candidate& c : a.candidates) {
      const Device& device = *c.device->device;
      if (!device.allow_multiple_allocations &&
          usage_[c.pool].Holders(device.name) > 0) {
        continue;
      }
      std::optional<DeviceAttribute> value = FindAttribute(
          device, c.device->slice->driver, constraint.match_attribute);
      if (!value.has_value()) continue;
      // A shared device can serve every device of the request.
      per_value[AttributeKey(*value)] +=
          device.allow_multiple_allocations ? a.request->count : 1;
    }
    std::set<std::string> enough;
    for (const auto& [key, n] : per_value) {
      if (n >= a.request->count) enough.insert(key);
    }
    if (!common.has_value()) {
      common = std::move(enough);
    } else {
      std::set<std::string> both;
      std::set_intersection(common->begin(), common->end(), enough.begin(),
                            enough.end(), std::inserter(both, both.begin()));
      common = std::move(both);
    }
    if (common->empty()) return false;
  }
  return true;
}

bool AllocationSearch::PlaceClaim(size_t c, size_t r) {
  if (c == plans_.size()) return true;
  ClaimPlan& plan = plans_[c];
  if (r == plan.requests.size()) return PlaceClaim(c + 1, 0);
  for (const Alternative& a : plan.requests[r].alternatives) {
    int64_t count = a.request->count;
    if (a.request->mode == ExactRequest::kAll) {
      if (!a.complete_pools) {
        last_reason_ = absl::StrCat("request ", a.result_name,
                                    ": allocationMode All on an incomplete "
                                    "pool");
        continue;
      }
      count = static_cast<int64_t>(a.candidates.size());
      if (count == 0) {
        last_reason_ =
            absl::StrCat("request ", a.result_name, ": no device matches");
        continue;
      }
    }
    // The later requests' fewest devices count too: no choice of devices
    // here can make room for them, so the search does not try.
    if (results_of_[c] + count + plan.min_results_after[r + 1] >
        kMaxResultsPerClaim) {
      last_reason_ = absl::StrCat("request ", a.result_name,
                                  ": the claim would get more than ",
                                  kMaxResultsPerClaim, " devices");
      continue;
    }
    if (Fill(c, r, a, 0, count, 0)) return true;
    if (out_of_steps_) return false;
  }
  return false;
}

bool AllocationSearch::Fill(size_t c, size_t r, const Alternative& a, int64_t k,
                            int64_t count, size_t min_pos) {
  if (k == count) return PlaceClaim(c, r + 1);
  // Devices alike a failed one fail too: with identical GPUs this turns
  // an unsatisfiable search from combinations of devices into combinations
  // of kinds of devices.
  const bool symmetric =
      a.request->mode == ExactRequest::kExactCount && !a.request->admin_access;
  std::vector<size_t> failed;
  for (size_t pos = min_pos; pos < a.candidates.size(); ++pos) {
    if (symmetric && !failed.empty() && AlikeFailed(a, pos, failed)) continue;
    if (++steps_ > options_.max_steps) {
      out_of_steps_ = true;
      return false;
    }
    if (!TryDevice(c, r, a, pos)) {
      failed.push_back(pos);
      continue;
    }
    const bool shared =
        a.candidates[pos].device->device->allow_multiple_allocations &&
        a.request->mode == ExactRequest::kExactCount;
    if (Fill(c, r, a, k + 1, count, shared ? pos : pos + 1)) return true;
    Unplace();
    if (out_of_steps_) return false;
    if (a.request->mode == ExactRequest::kAll) return false;
    failed.push_back(pos);
  }
  if (a.candidates.empty()) {
    last_reason_ =
        absl::StrCat("request ", a.result_name, ": no device matches");
  }
  return false;
}

bool AllocationSearch::AlikeFailed(const Alternative& a, size_t pos,
                                   const std::vector<size_t>& failed) {
  const Candidate& candidate = a.candidates[pos];
  const int cls = ClassOf(candidate.device);
  if (cls < 0) return false;
  const PoolUsage& usage = usage_[candidate.pool];
  const std::string& name = candidate.device->device->name;
  for (size_t f : failed) {
    const Candidate& other = a.candidates[f];
    if (ClassOf(other.device) != cls) continue;
    const std::string& other_name = other.device->device->name;
    if (usage.Holders(name) == usage.Holders(other_name) &&
        usage.InUse(name) == usage.InUse(other_name)) {
      return true;
    }
  }
  return false;
}

int AllocationSearch::ClassOf(const PoolDevice* device) {
  if (!classes_built_) BuildClasses();
  auto it = class_of_.find(device);
  return it == class_of_.end() ? -1 : it->second;
}

void AllocationSearch::BuildClasses() {
  classes_built_ = true;
  // Which alternatives take each device, in plan order.
  absl::flat_hash_map<const PoolDevice*, std::string> key;
  std::vector<const PoolDevice*> devices;
  std::vector<std::pair<size_t, const PoolDevice*>> pool_of;
  size_t serial = 0;
  for (const ClaimPlan& plan : plans_) {
    for (const RequestPlan& rp : plan.requests) {
      for (const Alternative& a : rp.alternatives) {
        for (const Candidate& c : a.candidates) {
          auto [it, added] = key.try_emplace(c.device);
          if (added) {
            devices.push_back(c.device);
            absl::StrAppend(&it->second, "p", c.pool, ";");
          }
          absl::StrAppend(&it->second, "a", serial, ",");
        }
        ++serial;
      }
    }
  }
  // Constrained attributes: a match attribute by value; a distinct one by
  // value unless every device's value differs (then only its presence).
  std::vector<std::pair<std::string, bool>> attributes;  // name, by value
  for (const ClaimPlan& plan : plans_) {
    for (const DeviceConstraint& constraint : plan.claim->spec.constraints) {
      if (!constraint.match_attribute.empty()) {
        attributes.emplace_back(constraint.match_attribute, true);
        continue;
      }
      std::set<std::string> seen;
      bool unique = true;
      for (const PoolDevice* device : devices) {
        std::optional<DeviceAttribute> value =
            FindAttribute(*device->device, device->slice->driver,
                          constraint.distinct_attribute);
        if (value && !seen.insert(AttributeKey(*value)).second) unique = false;
      }
      attributes.emplace_back(constraint.distinct_attribute, !unique);
    }
  }
  std::map<std::string, int> ids;
  for (const PoolDevice* device : devices) {
    const Device& d = *device->device;
    // Devices on counters differ by the counter sets they take.
    if (!d.consumes_counters.empty()) continue;
    std::string& k = key[device];
    absl::StrAppend(&k, d.allow_multiple_allocations ? "m;" : "d;");
    for (const auto& [name, capacity] : d.capacity) {
      absl::StrAppend(&k, name, "=", capacity.value);
      if (capacity.policy) {
        const RequestPolicy& p = *capacity.policy;
        absl::StrAppend(&k, "/", p.default_value, ",", p.min, ",", p.max, ",",
                        p.step, ",", absl::StrJoin(p.valid_values, ","));
      }
      k += ';';
    }
    for (const auto& [name, by_value] : attributes) {
      std::optional<DeviceAttribute> value =
          FindAttribute(d, device->slice->driver, name);
      absl::StrAppend(&k, "@", name, "=",
                      !value     ? "-"
                      : by_value ? AttributeKey(*value)
                                 : "+");
    }
    auto [it, added] = ids.try_emplace(k, static_cast<int>(ids.size()));
    class_of_[device] = it->second;
  }
}

bool AllocationSearch::TryDevice(size_t c, size_t r, const Alternative& a,
                                 size_t pos) {
  const Candidate& candidate = a.candidates[pos];
  const Device& device = *candidate.device->device;
  // Admin access does not charge a device, so only this keeps a claim
  // from listing a dedicated device twice.
  if (!device.allow_multiple_allocations && HeldByClaim(c, candidate.device)) {
    last_reason_ = absl::StrCat("request ", a.result_name, ": ", device.name,
                                " is allocated to the claim already");
    return false;
  }
  Placed placed{c, r, &a, candidate, {}, false};
  if (a.request->admin_access) {
    placed.verdict.fits = true;
  } else {
    placed.verdict = usage_[candidate.pool].Check(device, a.request->capacity);
    if (!placed.verdict.fits) {
      last_reason_ =
          absl::StrCat("request ", a.result_name, ": ", placed.verdict.reason);
      return false;
    }
  }
  const std::vector<AttributeConstraint*>& constraints = a.constraints;
  for (size_t i = 0; i < constraints.size(); ++i) {
    std::string why;
    if (!constraints[i]->Add(device, candidate.device->slice->driver, &why)) {
      for (size_t j = 0; j < i; ++j) {
        constraints[j]->Remove(device, candidate.device->slice->driver);
      }
      last_reason_ = absl::StrCat("request ", a.result_name, ": ", why);
      return false;
    }
  }
  if (!a.request->admin_access) {
    usage_[candidate.pool].Take(device, placed.verdict);
    placed.charged = true;
  }
  placed_.push_back(std::move(placed));
  ++results_of_[c];
  return true;
}

bool AllocationSearch::HeldByClaim(size_t c, const PoolDevice* device) const {
  for (auto it = placed_.rbegin(); it != placed_.rend() && it->claim == c;
       ++it) {
    if (it->candidate.device == device) return true;
  }
  return false;
}

void AllocationSearch::Unplace() {
  Placed placed = std::move(placed_.back());
  placed_.pop_back();
  const Device& device = *placed.candidate.device->device;
  for (AttributeConstraint* constraint : placed.alternative->constraints) {
    constraint->Remove(device, placed.candidate.device->slice->driver);
  }
  --results_of_[placed.claim];
  if (placed.charged) {
    usage_[placed.candidate.pool].Give(device, placed.verdict.consumed);
  }
}

void AllocationSearch::Undo() {
  while (!placed_.empty()) Unplace();
}

ClaimsVerdict AllocationSearch::Run() {
  ClaimsVerdict verdict;
  if (NecessaryConditionsHold() && PlaceClaim(0, 0)) {
    verdict = Report();
    verdict.fits = true;
  } else {
    verdict.reason = out_of_steps_ ? absl::StrCat("no allocation found within ",
                                                  options_.max_steps, " steps")
                                   : last_reason_;
  }
  verdict.steps = steps_;
  return verdict;
}

ClaimsVerdict AllocationSearch::Report() const {
  ClaimsVerdict verdict;
  verdict.allocations.resize(plans_.size());
  for (size_t c = 0; c < plans_.size(); ++c) {
    verdict.allocations[c].node_name = node_name_;
  }
  std::vector<std::map<std::string, std::vector<std::string>>> class_requests(
      plans_.size());
  for (const Placed& placed : placed_) {
    const PoolDevice& device = *placed.candidate.device;
    const NodePool& pool = pools_.pools[placed.candidate.pool];
    DeviceResult result;
    result.request = placed.alternative->result_name;
    result.driver = pool.driver;
    result.pool = pool.name;
    result.device = device.device->name;
    result.admin_access = placed.alternative->request->admin_access;
    if (device.device->allow_multiple_allocations && !result.admin_access) {
      if (options_.new_share_id) result.share_id = options_.new_share_id();
      for (const auto& [name, amount] : placed.verdict.consumed) {
        result.consumed[name] =
            CapacityAmount{amount, device.device->capacity.at(name).format};
      }
    }
    verdict.allocations[placed.claim].results.push_back(std::move(result));
    std::vector<std::string>& names =
        class_requests[placed.claim][placed.alternative->request->device_class];
    if (std::find(names.begin(), names.end(),
                  placed.alternative->result_name) == names.end()) {
      names.push_back(placed.alternative->result_name);
    }
  }
  for (size_t c = 0; c < plans_.size(); ++c) {
    AddConfigs(c, class_requests[c], verdict.allocations[c]);
  }
  return verdict;
}

void AllocationSearch::AddConfigs(
    size_t c, const std::map<std::string, std::vector<std::string>>& by_class,
    AllocationResult& allocation) const {
  std::set<std::string> placed_names;
  for (const Placed& placed : placed_) {
    if (placed.claim != c) continue;
    placed_names.insert(plans_[c].requests[placed.request].name);
    placed_names.insert(placed.alternative->result_name);
  }
  for (const auto& [cls, names] : by_class) {
    for (const nlohmann::json& config : classes_.at(cls).config) {
      allocation.config.push_back(
          {{"source", "FromClass"},
           {"requests", names},
           {"opaque", config.value("opaque", nlohmann::json::object())}});
    }
  }
  for (const ClaimConfig& config : plans_[c].claim->spec.config) {
    if (!ConfigApplies(config, placed_names)) continue;
    allocation.config.push_back({{"source", "FromClaim"},
                                 {"requests", config.requests},
                                 {"opaque", config.opaque}});
  }
}

}  // namespace deviceshare::dra
