// NodeAllocator (dra/node_allocator.h) under 100,000 random allocate and
// release steps on one fixed, randomly built node: shared GPUs with request
// policies, dedicated GPUs, and a partitionable GPU whose partitions (one
// of them multi-allocatable) share counters. After every step the live
// allocations are checked from first principles, without asking the
// allocator: capacity never oversubscribed, counters never negative, no
// dedicated device held twice, constraints kept by value, every consumed
// amount what the device's request policy makes of the request.
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "deviceshare/dra/node_allocator.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace deviceshare::dra {
namespace {

using ::deviceshare::testing::IsOk;

constexpr char kDriver[] = "gpu.example.com";
constexpr char kNode[] = "node-a";
constexpr char kPcieRoot[] = "resource.kubernetes.io/pcieRoot";
constexpr int64_t kMiB = int64_t{1} << 20;
constexpr int64_t kGiB = int64_t{1} << 30;
constexpr int kSteps = 100000;
// Releases are rarer than attempts, so the node runs mostly full (about
// two thirds used on average) and most attempts meet contention.
constexpr double kReleaseChance = 0.15;

using Rng = std::mt19937_64;

int64_t Uniform(Rng& rng, int64_t lo, int64_t hi) {
  return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
}

bool Chance(Rng& rng, double p) { return std::bernoulli_distribution(p)(rng); }

// ---------------------------------------------------------------------------
// The node.

Device SharedGpu(Rng& rng, int index, std::string uuid) {
  Device gpu;
  gpu.name = absl::StrCat("shared-", index);
  gpu.allow_multiple_allocations = true;
  gpu.attributes["kind"] = DeviceAttribute::String("shared");
  gpu.attributes["uuid"] = DeviceAttribute::String(std::move(uuid));
  gpu.attributes["numa"] = DeviceAttribute::Int(index % 2);
  gpu.attributes[kPcieRoot] =
      DeviceAttribute::String(absl::StrCat("pci-", index % 2));
  const int64_t memory = Uniform(rng, 2, 8) * 8 * kGiB;
  const int64_t step = 256 * kMiB;
  // Half default to the whole GPU, half to a quarter of it.
  const int64_t default_memory = Chance(rng, 0.5) ? memory : memory / 4;
  gpu.capacity["memory"] = {
      memory, QuantityFormat::kBinary,
      RequestPolicy{default_memory, step, memory, step, {}}};
  RequestPolicy cores{100, 1, 100, 1, {}};
  if (Chance(rng, 0.5)) cores = RequestPolicy{100, 0, 0, 0, {10, 25, 50, 100}};
  gpu.capacity["cores"] = {100, QuantityFormat::kDecimal, cores};
  // Without a policy, a request that omits it takes the GPU's only encoder
  // set: such shares are exclusive.
  if (index == 0) gpu.capacity["encoders"] = {4, QuantityFormat::kDecimal, {}};
  return gpu;
}

Device DedicatedGpu(Rng& rng, int index) {
  Device gpu;
  gpu.name = absl::StrCat("whole-", index);
  gpu.attributes["kind"] = DeviceAttribute::String("whole");
  gpu.attributes["uuid"] = DeviceAttribute::String(absl::StrCat("W-", index));
  gpu.attributes["numa"] = DeviceAttribute::Int(index % 2);
  gpu.attributes[kPcieRoot] =
      DeviceAttribute::String(absl::StrCat("pci-", index % 2));
  gpu.capacity["memory"] = {Uniform(rng, 2, 10) * 8 * kGiB,
                            QuantityFormat::kBinary, std::nullopt};
  return gpu;
}

// A placement on the partitionable GPU: memory slices [first, first+size)
// and `compute` compute units of its counter set.
Device Partition(std::string name, int first, int size, int compute) {
  Device part;
  part.name = std::move(name);
  part.attributes["kind"] = DeviceAttribute::String("mig");
  part.attributes["uuid"] = DeviceAttribute::String(part.name);
  part.attributes["numa"] = DeviceAttribute::Int(1);
  part.attributes[kPcieRoot] = DeviceAttribute::String("pci-1");
  part.capacity["memory"] = {size * 10 * kGiB, QuantityFormat::kBinary,
                             std::nullopt};
  CounterConsumption use{"mig-counters", {{"compute", {compute}}}};
  for (int m = first; m < first + size; ++m) {
    use.counters[absl::StrCat("slice-", m)] = {1};
  }
  part.consumes_counters.push_back(std::move(use));
  return part;
}

ResourceSlice PartitionableSlice() {
  ResourceSlice slice;
  slice.name = "node-a-mig";
  slice.driver = kDriver;
  slice.node_name = kNode;
  slice.pool = {"node-a-mig", 1, 1};
  CounterSet set{"mig-counters", {{"compute", {7}}}};
  for (int m = 0; m < 8; ++m) set.counters[absl::StrCat("slice-", m)] = {1};
  slice.shared_counters.push_back(std::move(set));
  slice.devices = {
      Partition("mig-whole", 0, 8, 7), Partition("mig-4g-0", 0, 4, 4),
      Partition("mig-3g-4", 4, 4, 3),  Partition("mig-2g-0", 0, 2, 2),
      Partition("mig-2g-2", 2, 2, 2),  Partition("mig-1g-4", 4, 2, 1)};
  // A multi-allocatable partition: its counters are taken once while any
  // share holds it (#139034).
  Device shared = Partition("mig-shared-6", 6, 2, 1);
  shared.allow_multiple_allocations = true;
  shared.capacity["memory"].policy =
      RequestPolicy{5 * kGiB, kGiB, 20 * kGiB, kGiB, {}};
  slice.devices.push_back(std::move(shared));
  return slice;
}

std::vector<ResourceSlice> MakeSlices(Rng& rng) {
  ResourceSlice gpus;
  gpus.name = "node-a-gpus";
  gpus.driver = kDriver;
  gpus.node_name = kNode;
  gpus.pool = {"node-a", 1, 1};
  // shared-1 and shared-2 publish the same uuid: distinctAttribute must
  // compare values, not where they are stored.
  const std::vector<std::string> uuids = {"GPU-0", "GPU-1", "GPU-1", "GPU-3"};
  for (int i = 0; i < 4; ++i)
    gpus.devices.push_back(SharedGpu(rng, i, uuids[i]));
  for (int i = 0; i < 3; ++i) gpus.devices.push_back(DedicatedGpu(rng, i));
  return {gpus, PartitionableSlice()};
}

std::map<std::string, DeviceClass> MakeClasses() {
  const std::string driver = absl::StrCat("device.driver == \"", kDriver, "\"");
  const auto cls = [&](std::string name, std::string extra) {
    return DeviceClass{name, {driver + extra}, {}, ""};
  };
  return {
      {"any", cls("any", "")},
      {"shared", cls("shared", " && device.allowMultipleAllocations == true")},
      {"dedicated",
       cls("dedicated", " && device.allowMultipleAllocations == false")},
      {"mig", cls("mig", absl::StrCat(" && device.attributes[\"", kDriver,
                                      "\"].kind == \"mig\""))},
  };
}

// ---------------------------------------------------------------------------
// Random claims.

ExactRequest RandomExact(Rng& rng) {
  static const std::vector<std::string> kClasses = {"any", "shared", "shared",
                                                    "dedicated", "mig"};
  ExactRequest request;
  request.device_class = kClasses[Uniform(rng, 0, kClasses.size() - 1)];
  request.count = Chance(rng, 0.7) ? 1 : Uniform(rng, 2, 3);
  if (Chance(rng, 0.04)) request.mode = ExactRequest::kAll;
  request.admin_access = Chance(rng, 0.03);
  if (request.device_class == "dedicated") return request;
  // Amounts off the policies' steps and now and then above their maxima.
  if (Chance(rng, 0.7)) {
    request.capacity["memory"] = Uniform(rng, 1, 48 * kGiB);
  }
  if (request.device_class == "shared" && Chance(rng, 0.6)) {
    request.capacity["cores"] = Uniform(rng, 0, 110);
  }
  if (request.device_class == "shared" && Chance(rng, 0.1)) {
    request.capacity["encoders"] = Uniform(rng, 1, 5);
  }
  return request;
}

DeviceRequest RandomRequest(Rng& rng, int index) {
  DeviceRequest request;
  request.name = absl::StrCat("r", index);
  if (Chance(rng, 0.75)) {
    request.exactly = RandomExact(rng);
    return request;
  }
  for (int s = 0; s < 2; ++s) {
    ExactRequest sub = RandomExact(rng);
    sub.admin_access = false;  // the API forbids it in subrequests
    request.first_available.push_back(
        SubRequest{absl::StrCat("s", s), std::move(sub)});
  }
  return request;
}

// A constraint over all requests, or over some requests and subrequests.
DeviceConstraint RandomConstraint(Rng& rng, const ClaimSpec& spec,
                                  std::string attribute, bool match) {
  DeviceConstraint constraint;
  (match ? constraint.match_attribute : constraint.distinct_attribute) =
      std::move(attribute);
  if (Chance(rng, 0.5)) return constraint;
  for (const DeviceRequest& request : spec.requests) {
    if (!Chance(rng, 0.6)) continue;
    constraint.requests.push_back(
        request.first_available.empty() || Chance(rng, 0.5)
            ? request.name
            : absl::StrCat(request.name, "/", request.first_available[0].name));
  }
  return constraint;
}

ResourceClaim RandomClaim(Rng& rng, int serial) {
  ResourceClaim claim;
  claim.ns = "default";
  claim.name = absl::StrCat("claim-", serial);
  const int requests = static_cast<int>(Uniform(rng, 1, 4));
  for (int r = 0; r < requests; ++r) {
    claim.spec.requests.push_back(RandomRequest(rng, r));
  }
  if (Chance(rng, 0.25)) {
    claim.spec.constraints.push_back(
        RandomConstraint(rng, claim.spec, kPcieRoot, /*match=*/true));
  }
  if (Chance(rng, 0.25)) {
    claim.spec.constraints.push_back(RandomConstraint(
        rng, claim.spec, absl::StrCat(kDriver, "/uuid"), /*match=*/false));
  }
  if (Chance(rng, 0.1)) {
    claim.spec.constraints.push_back(RandomConstraint(
        rng, claim.spec, absl::StrCat(kDriver, "/numa"), /*match=*/true));
  }
  return claim;
}

// ---------------------------------------------------------------------------
// The invariants, from the slices and the live allocations alone.

struct Live {
  const ResourceClaim* claim = nullptr;
  AllocationResult allocation;
};

struct Located {
  const Device* device = nullptr;
  const ResourceSlice* slice = nullptr;
};

// The attribute `qualified` of a device of `kDriver`: stored under its full
// name, or without the driver's own domain.
const DeviceAttribute* AttributeOf(const Device& device,
                                   const std::string& qualified) {
  if (auto it = device.attributes.find(qualified);
      it != device.attributes.end()) {
    return &it->second;
  }
  const std::string own = absl::StrCat(kDriver, "/");
  if (qualified.rfind(own, 0) != 0) return nullptr;
  auto it = device.attributes.find(qualified.substr(own.size()));
  return it == device.attributes.end() ? nullptr : &it->second;
}

// The request or subrequest a result names ("r1" or "r1/s0").
const ExactRequest* SpecOf(const ResourceClaim& claim,
                           const std::string& result_name) {
  const size_t slash = result_name.find('/');
  const std::string parent = result_name.substr(0, slash);
  for (const DeviceRequest& request : claim.spec.requests) {
    if (request.name != parent) continue;
    if (slash == std::string::npos) {
      return request.exactly.has_value() ? &*request.exactly : nullptr;
    }
    for (const SubRequest& sub : request.first_available) {
      if (sub.name == result_name.substr(slash + 1)) return &sub.exactly;
    }
  }
  return nullptr;
}

// What the policy must make of `asked` (nullopt: not asked), or "" when
// `consumed` is right.
std::string PolicyViolation(const DeviceCapacity& capacity,
                            std::optional<int64_t> asked, int64_t consumed) {
  const auto wrong = [&](const char* rule) {
    return absl::StrCat(rule, ": asked ", asked.value_or(-1), ", consumed ",
                        consumed);
  };
  if (!capacity.policy.has_value()) {
    return consumed == asked.value_or(capacity.value) ? "" : wrong("no policy");
  }
  const RequestPolicy& policy = *capacity.policy;
  if (!asked.has_value()) {
    return consumed == policy.default_value ? "" : wrong("default");
  }
  if (!policy.valid_values.empty()) {
    for (int64_t value : policy.valid_values) {
      if (value >= *asked) return consumed == value ? "" : wrong("validValues");
    }
    return wrong("no valid value fits");
  }
  if (consumed > policy.max || consumed < policy.min || consumed < *asked ||
      (consumed - policy.min) % policy.step != 0) {
    return wrong("validRange");
  }
  // The smallest such amount: one step less would be too little.
  if (consumed > policy.min && consumed - policy.step >= *asked) {
    return wrong("rounded too far");
  }
  return "";
}

class InvariantChecker {
 public:
  explicit InvariantChecker(const std::vector<ResourceSlice>& slices) {
    for (const ResourceSlice& slice : slices) {
      for (const Device& device : slice.devices) {
        devices_[Key(slice.pool.name, device.name)] = {&device, &slice};
      }
      for (const CounterSet& set : slice.shared_counters) {
        for (const auto& [name, counter] : set.counters) {
          full_counters_[CounterKey(slice, set.name, name)] = counter.value;
        }
      }
    }
  }

  // What the live allocations hold, counted from their results (admin
  // access holds nothing).
  struct Tally {
    std::map<std::string, int> holders;  // "<pool>/<device>" -> allocations
    std::map<std::string, std::map<std::string, int64_t>> consumed;
    std::map<std::string, int64_t> counters_left;  // "<pool>/<set>/<name>"
  };

  // "" when every invariant holds, else the first one broken. `tally` gets
  // what the allocations hold.
  std::string Violation(const std::deque<Live>& live, Tally& tally) const {
    tally = Tally{};
    for (const Live& entry : live) {
      if (std::string why = CheckAllocation(entry); !why.empty()) return why;
      for (const DeviceResult& result : entry.allocation.results) {
        if (result.admin_access) continue;
        const std::string key = Key(result.pool, result.device);
        ++tally.holders[key];
        for (const auto& [name, amount] : result.consumed) {
          tally.consumed[key][name] += amount.value;
        }
      }
    }
    if (std::string why = CheckHolders(tally); !why.empty()) return why;
    return CheckCounters(tally);
  }

  // Whether a share of `memory` on the multi-allocatable device `key` must
  // fit: the memory is left, and the device's counters are charged
  // already (it has shares) or free.
  bool ShareFits(const Tally& tally, const std::string& key,
                 int64_t memory) const {
    const Located& located = devices_.at(key);
    int64_t used = 0;
    if (auto it = tally.consumed.find(key); it != tally.consumed.end()) {
      used = it->second.count("memory") ? it->second.at("memory") : 0;
    }
    if (used + memory > located.device->capacity.at("memory").value) {
      return false;
    }
    if (tally.holders.contains(key)) return true;
    for (const CounterConsumption& use : located.device->consumes_counters) {
      for (const auto& [name, counter] : use.counters) {
        if (tally.counters_left.at(CounterKey(*located.slice, use.counter_set,
                                              name)) < counter.value) {
          return false;
        }
      }
    }
    return true;
  }

  static std::string Key(const std::string& pool, const std::string& device) {
    return absl::StrCat(pool, "/", device);
  }

 private:
  std::string CheckHolders(const Tally& tally) const {
    const auto& [holders, consumed, unused] = tally;
    for (const auto& [key, count] : holders) {
      const Device& device = *devices_.at(key).device;
      if (!device.allow_multiple_allocations && count > 1) {
        return absl::StrCat(key, " is dedicated but held ", count, " times");
      }
    }
    for (const auto& [key, amounts] : consumed) {
      const Device& device = *devices_.at(key).device;
      for (const auto& [name, sum] : amounts) {
        if (sum > device.capacity.at(name).value) {
          return absl::StrCat(key, ": ", name, " oversubscribed, ", sum, " of ",
                              device.capacity.at(name).value);
        }
      }
    }
    return "";
  }

  static std::string CounterKey(const ResourceSlice& slice,
                                const std::string& set,
                                const std::string& counter) {
    return absl::StrCat(slice.pool.name, "/", set, "/", counter);
  }

  // Counters recomputed: every held device that consumes counters takes
  // them once, however many shares hold it.
  std::string CheckCounters(Tally& tally) const {
    std::map<std::string, int64_t>& left = tally.counters_left;
    left = full_counters_;
    for (const auto& [key, count] : tally.holders) {
      const Located& located = devices_.at(key);
      for (const CounterConsumption& use : located.device->consumes_counters) {
        for (const auto& [name, counter] : use.counters) {
          const std::string counter_key =
              CounterKey(*located.slice, use.counter_set, name);
          if ((left[counter_key] -= counter.value) < 0) {
            return absl::StrCat("counter ", counter_key, " below zero");
          }
        }
      }
    }
    return "";
  }

  std::string CheckAllocation(const Live& entry) const {
    const AllocationResult& allocation = entry.allocation;
    if (allocation.node_name != kNode) return "bound to another node";
    if (allocation.results.size() > 32) return "more than 32 results";
    for (const DeviceResult& result : allocation.results) {
      if (std::string why = CheckResult(*entry.claim, result); !why.empty()) {
        return absl::StrCat(entry.claim->name, " ", result.request, " ",
                            result.device, ": ", why);
      }
    }
    if (std::string why = CheckCounts(*entry.claim, allocation); !why.empty()) {
      return absl::StrCat(entry.claim->name, ": ", why);
    }
    return CheckConstraints(*entry.claim, allocation);
  }

  // One result: its device fits the request's class, it carries a share id
  // exactly when it is a share, and a share consumes every capacity as
  // the device's policy makes of the request.
  std::string CheckResult(const ResourceClaim& claim,
                          const DeviceResult& result) const {
    const ExactRequest* spec = SpecOf(claim, result.request);
    if (spec == nullptr) return "no such request";
    auto found = devices_.find(Key(result.pool, result.device));
    if (found == devices_.end()) return "no such device";
    const Device& device = *found->second.device;
    const bool multi = device.allow_multiple_allocations;
    if ((spec->device_class == "shared" && !multi) ||
        (spec->device_class == "dedicated" && multi) ||
        (spec->device_class == "mig" &&
         device.attributes.at("kind").text != "mig")) {
      return "outside the request's class";
    }
    if (result.admin_access != spec->admin_access) return "admin access";
    const bool share = multi && !result.admin_access;
    if (share == result.share_id.empty()) return "share id presence";
    if (!share) return result.consumed.empty() ? "" : "consumes as a whole";
    if (result.consumed.size() != device.capacity.size()) {
      return "consumedCapacity lacks a capacity";
    }
    for (const auto& [name, capacity] : device.capacity) {
      auto asked = spec->capacity.find(name);
      std::string why = PolicyViolation(capacity,
                                        asked == spec->capacity.end()
                                            ? std::nullopt
                                            : std::optional(asked->second),
                                        result.consumed.at(name).value);
      if (!why.empty()) return absl::StrCat(name, ": ", why);
    }
    return "";
  }

  // Every request got what it asked: `count` devices (or at least one for
  // All) from one alternative.
  static std::string CheckCounts(const ResourceClaim& claim,
                                 const AllocationResult& allocation) {
    for (const DeviceRequest& request : claim.spec.requests) {
      std::map<std::string, int64_t> per_name;
      for (const DeviceResult& result : allocation.results) {
        if (result.request.substr(0, result.request.find('/')) ==
            request.name) {
          ++per_name[result.request];
        }
      }
      if (per_name.size() != 1) return absl::StrCat(request.name, " split");
      const auto& [name, got] = *per_name.begin();
      const ExactRequest& spec = *SpecOf(claim, name);
      if (spec.mode == ExactRequest::kExactCount ? got != spec.count
                                                 : got < 1) {
        return absl::StrCat(name, " got ", got, " devices");
      }
    }
    return "";
  }

  std::string CheckConstraints(const ResourceClaim& claim,
                               const AllocationResult& allocation) const {
    for (const DeviceConstraint& constraint : claim.spec.constraints) {
      const bool match = !constraint.match_attribute.empty();
      const std::string& attribute =
          match ? constraint.match_attribute : constraint.distinct_attribute;
      std::vector<DeviceAttribute> values;
      for (const DeviceResult& result : allocation.results) {
        if (!Binds(constraint, result.request)) continue;
        const DeviceAttribute* value = AttributeOf(
            *devices_.at(Key(result.pool, result.device)).device, attribute);
        if (value == nullptr) return absl::StrCat("no ", attribute);
        for (const DeviceAttribute& other : values) {
          if (match ? !(other == *value) : other == *value) {
            return absl::StrCat(claim.name, ": ", attribute, " ",
                                match ? "differs" : "repeats");
          }
        }
        values.push_back(*value);
      }
    }
    return "";
  }

  static bool Binds(const DeviceConstraint& constraint,
                    const std::string& result_name) {
    if (constraint.requests.empty()) return true;
    const std::string parent = result_name.substr(0, result_name.find('/'));
    for (const std::string& name : constraint.requests) {
      if (name == parent || name == result_name) return true;
    }
    return false;
  }

  std::map<std::string, Located> devices_;
  // "<pool>/<set>/<counter>" -> the counter's full value.
  std::map<std::string, int64_t> full_counters_;
};

// ---------------------------------------------------------------------------
// The walk.

constexpr char kSharedPartitionUuid[] = "mig-shared-6";

// One 1 GiB share of the multi-allocatable partition and nothing else:
// whether it fits can be told from the live allocations alone.
ResourceClaim SharedPartitionProbe() {
  ExactRequest share;
  share.device_class = "any";
  share.selectors = {absl::StrCat("device.attributes[\"", kDriver,
                                  "\"].uuid == \"", kSharedPartitionUuid,
                                  "\"")};
  share.capacity["memory"] = kGiB;
  ResourceClaim claim;
  claim.name = "probe";
  claim.spec.requests.push_back(DeviceRequest{"probe", share, {}});
  return claim;
}

class DraAllocatorPropertyTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Rng node_rng(20260526);
    slices_ = MakeSlices(node_rng);
    classes_ = MakeClasses();
    std::vector<const ResourceSlice*> slices;
    for (const ResourceSlice& slice : slices_) slices.push_back(&slice);
    AllocatorOptions options;
    // A small budget: the walk checks safety, and an unsatisfiable random
    // claim should not search for long.
    options.max_steps = 2000;
    options.new_share_id = [this] { return absl::StrCat("s-", ++share_ids_); };
    auto made = NodeAllocator::Create(kNode, slices, &classes_, &cel_, options);
    ASSERT_THAT(made.status(), IsOk());
    allocator_ = *std::move(made);
  }

  // Allocates one or two new claims, by Allocate or by Try and Commit in a
  // random order; whatever fits becomes live.
  void AllocateSome(Rng& rng) {
    std::vector<const ResourceClaim*> batch;
    const int count = Chance(rng, 0.2) ? 2 : 1;
    for (int i = 0; i < count; ++i) {
      claims_.push_back(
          std::make_unique<ResourceClaim>(RandomClaim(rng, ++claim_serial_)));
      batch.push_back(claims_.back().get());
    }
    const int utilisation = allocator_->UtilisationPercent();
    absl::StatusOr<ClaimsVerdict> verdict;
    if (Chance(rng, 0.7)) {
      verdict = allocator_->Allocate(batch, /*commit=*/true);
    } else {
      static constexpr DeviceOrder kOrders[] = {
          DeviceOrder::kBestFit, DeviceOrder::kSpread, DeviceOrder::kFirstFit};
      verdict = allocator_->Try(batch, kOrders[Uniform(rng, 0, 2)]);
      if (verdict.ok() && verdict->fits) {
        ASSERT_THAT(allocator_->Commit(verdict->allocations), IsOk());
      }
    }
    ASSERT_THAT(verdict.status(), IsOk());
    if (!verdict->fits) {
      // A failed attempt leaves the node as it was.
      ASSERT_EQ(allocator_->UtilisationPercent(), utilisation);
      return;
    }
    ASSERT_EQ(verdict->allocations.size(), batch.size());
    for (size_t i = 0; i < batch.size(); ++i) {
      live_.push_back(Live{batch[i], verdict->allocations[i]});
    }
  }

  void ReleaseOne(Rng& rng) {
    const size_t victim = Uniform(rng, 0, live_.size() - 1);
    allocator_->Release(live_[victim].allocation);
    live_.erase(live_.begin() + victim);
  }

  std::vector<ResourceSlice> slices_;
  std::map<std::string, DeviceClass> classes_;
  CelCache cel_;
  std::unique_ptr<NodeAllocator> allocator_;
  // Claims stay alive for the test's life: live allocations point at them.
  std::vector<std::unique_ptr<ResourceClaim>> claims_;
  std::deque<Live> live_;
  const ResourceClaim probe_ = SharedPartitionProbe();
  int share_ids_ = 0;
  int claim_serial_ = 0;
};

TEST_F(DraAllocatorPropertyTest, RandomAllocateAndReleaseKeepInvariants) {
  const InvariantChecker checker(slices_);
  const std::string shared_partition =
      InvariantChecker::Key("node-a-mig", kSharedPartitionUuid);
  Rng rng(7);
  int attempts = 0;
  int fitted = 0;
  int probes_fitted = 0;
  for (int step = 0; step < kSteps; ++step) {
    const size_t before = live_.size();
    if (!live_.empty() && Chance(rng, kReleaseChance)) {
      ReleaseOne(rng);
    } else {
      ASSERT_NO_FATAL_FAILURE(AllocateSome(rng)) << "step " << step;
      ++attempts;
      fitted += live_.size() > before;
    }
    InvariantChecker::Tally tally;
    ASSERT_EQ(checker.Violation(live_, tally), "") << "step " << step;
    // Where the answer can be told independently, the allocator must not
    // refuse what fits either (1.34 charged this device's counters per
    // share and so refused its second share).
    absl::StatusOr<ClaimsVerdict> probe =
        allocator_->Try({&probe_}, DeviceOrder::kBestFit);
    ASSERT_THAT(probe.status(), IsOk());
    ASSERT_EQ(probe->fits, checker.ShareFits(tally, shared_partition, kGiB))
        << "step " << step << ": " << probe->reason;
    probes_fitted += probe->fits;
  }
  // The walk must have exercised both verdicts, or it proved little.
  EXPECT_GT(fitted, attempts / 10);
  EXPECT_LT(fitted, attempts - attempts / 10);
  EXPECT_GT(probes_fitted, kSteps / 10);
  EXPECT_LT(probes_fitted, kSteps - kSteps / 10);
  while (!live_.empty()) ReleaseOne(rng);
  // Everything given back: no capacity, holder or counter leaked.
  EXPECT_EQ(allocator_->UtilisationPercent(), 0);
}

}  // namespace
}  // namespace deviceshare::dra
