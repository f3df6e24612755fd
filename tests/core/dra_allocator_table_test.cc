// NodeAllocator (dra/node_allocator.h) against the scenarios of Kubernetes
// v1.34's shared structured-allocator table (allocatortesting, at
// kubernetes/dynamic-resource-allocation v0.34.0), restated as our own data
// with our own names. Each case's comment names the upstream case.
//
// Cases run in DeviceOrder::kFirstFit, the order 1.34 tries devices in, so
// the devices chosen are the ones kube-scheduler would choose (for one
// pool; 1.34 walks pools in Go map order). Where ours answers differently
// on purpose the comment says how; where 1.34 has a bug the case expects
// the right answer and names the bug. Case names start with the feature:
// all_ (allocationMode All), admin_, match_/distinct_ (constraints),
// config_, prio_ (firstAvailable), part_ (shared counters), cc_
// (consumable capacity), multi_ (allowMultipleAllocations), bug_.
//
// Not ported, because our model has no such input: feature gates (every
// feature is on), device taints and binding conditions, network-attached
// slices and node label selectors (a NodeAllocator is given the slices that
// reach its node, and binds to it), unknown selector/constraint/mode kinds
// (the claim decoder rejects them), and context interruption (ours has a
// step budget, tested in dra_node_allocator_test.cc).
#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "deviceshare/dra/node_allocator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"

namespace deviceshare::dra {
namespace {

using ::deviceshare::testing::IsOk;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAreArray;

constexpr char kNode[] = "node-1";
constexpr char kDriverA[] = "a.example.com";
constexpr char kDriverB[] = "b.example.com";
constexpr char kClassA[] = "class-a";
constexpr char kClassB[] = "class-b";
constexpr char kPool1[] = "pool-1";
constexpr char kPool2[] = "pool-2";
// The one consumable capacity of the consumable-capacity cases.
constexpr char kCap[] = "cap-0";
constexpr int64_t kGi = int64_t{1} << 30;

// ---------------------------------------------------------------------------
// Building the node.

class DeviceBuilder {
 public:
  explicit DeviceBuilder(std::string name) { device_.name = std::move(name); }

  DeviceBuilder& Capacity(const std::string& name, int64_t value) {
    device_.capacity[name] = {value, QuantityFormat::kBinary, std::nullopt};
    return *this;
  }
  DeviceBuilder& Memory(int64_t bytes) { return Capacity("memory", bytes); }
  // The small range the upstream capacity cases use: default 2, min 2,
  // step 2, max 4.
  DeviceBuilder& SmallRange(const std::string& name, int64_t value) {
    device_.capacity[name] = {value, QuantityFormat::kBinary,
                              RequestPolicy{2, 2, 4, 2, {}}};
    return *this;
  }
  // validValues: the default (the smallest) and `more`, ascending.
  DeviceBuilder& ValidValues(const std::string& name, int64_t value,
                             int64_t default_value, std::vector<int64_t> more) {
    RequestPolicy policy;
    policy.default_value = default_value;
    policy.valid_values = {default_value};
    policy.valid_values.insert(policy.valid_values.end(), more.begin(),
                               more.end());
    device_.capacity[name] = {value, QuantityFormat::kBinary, policy};
    return *this;
  }
  DeviceBuilder& Multi() {
    device_.allow_multiple_allocations = true;
    return *this;
  }
  DeviceBuilder& Attr(const std::string& name, DeviceAttribute value) {
    device_.attributes[name] = std::move(value);
    return *this;
  }
  DeviceBuilder& Consumes(const std::string& set,
                          const std::map<std::string, int64_t>& counters) {
    CounterConsumption use;
    use.counter_set = set;
    for (const auto& [name, value] : counters) use.counters[name] = {value};
    device_.consumes_counters.push_back(std::move(use));
    return *this;
  }
  // A partition whose capacities are what it takes from the counter set,
  // so that capacity selectors see its size.
  DeviceBuilder& Partition(const std::string& set,
                           const std::map<std::string, int64_t>& counters) {
    for (const auto& [name, value] : counters) Capacity(name, value);
    return Consumes(set, counters);
  }

  operator Device() const { return device_; }  // NOLINT: builder

 private:
  Device device_;
};

DeviceBuilder Dev(std::string name) { return DeviceBuilder(std::move(name)); }

CounterSet Counters(std::string name,
                    const std::map<std::string, int64_t>& counters) {
  CounterSet set;
  set.name = std::move(name);
  for (const auto& [counter, value] : counters) set.counters[counter] = {value};
  return set;
}

ResourceSlice Slice(std::string name, std::string pool, std::string driver,
                    std::vector<Device> devices,
                    std::vector<CounterSet> counters = {}) {
  ResourceSlice slice;
  slice.name = std::move(name);
  slice.driver = std::move(driver);
  slice.node_name = kNode;
  slice.pool = {std::move(pool), 1, 1};
  slice.shared_counters = std::move(counters);
  slice.devices = std::move(devices);
  return slice;
}

// `count` plain devices dev-0 .. dev-<count-1>.
ResourceSlice PlainSlice(std::string name, std::string pool, std::string driver,
                         int count) {
  std::vector<Device> devices;
  for (int i = 0; i < count; ++i)
    devices.push_back(Dev(absl::StrCat("dev-", i)));
  return Slice(std::move(name), std::move(pool), std::move(driver), devices);
}

DeviceClass Class(std::string name, const std::string& driver) {
  DeviceClass cls;
  cls.name = std::move(name);
  cls.selectors = {absl::StrCat("device.driver == \"", driver, "\"")};
  return cls;
}

// A class that takes only devices that do (or do not) allow multiple
// allocations.
DeviceClass MultiClass(std::string name, const std::string& driver,
                       bool multi) {
  DeviceClass cls = Class(std::move(name), driver);
  cls.selectors[0] += absl::StrCat(" && device.allowMultipleAllocations == ",
                                   multi ? "true" : "false");
  return cls;
}

// An opaque config whose parameters are {<marker>: "<marker>Value"}, so a
// result's config can be told apart by its marker.
nlohmann::json Opaque(const std::string& driver, const std::string& marker) {
  return {{"driver", driver},
          {"parameters", {{marker, absl::StrCat(marker, "Value")}}}};
}

DeviceClass ConfigClass(std::string name, const std::string& driver,
                        const std::string& marker) {
  DeviceClass cls = Class(std::move(name), driver);
  cls.config = {nlohmann::json{{"opaque", Opaque(driver, marker)}}};
  return cls;
}

std::string MemoryAtLeast(const std::string& quantity) {
  return absl::StrCat("device.capacity[\"", kDriverA,
                      "\"].memory.compareTo(quantity(\"", quantity,
                      "\")) >= 0");
}

// ---------------------------------------------------------------------------
// Building the claims.

// One ExactRequest, built fluently: Ask(kClassA).Count(2).Where(...).
class Ask {
 public:
  explicit Ask(std::string device_class) {
    request_.device_class = std::move(device_class);
  }
  Ask& Count(int64_t count) {
    request_.count = count;
    return *this;
  }
  Ask& All() {
    request_.mode = ExactRequest::kAll;
    return *this;
  }
  Ask& Admin() {
    request_.admin_access = true;
    return *this;
  }
  Ask& Where(std::string expression) {
    request_.selectors.push_back(std::move(expression));
    return *this;
  }
  Ask& Capacity(const std::string& name, int64_t amount) {
    request_.capacity[name] = amount;
    return *this;
  }
  operator ExactRequest() const { return request_; }  // NOLINT: builder

 private:
  ExactRequest request_;
};

DeviceRequest Req(std::string name, ExactRequest exactly) {
  DeviceRequest request;
  request.name = std::move(name);
  request.exactly = std::move(exactly);
  return request;
}

SubRequest Sub(std::string name, ExactRequest exactly) {
  return SubRequest{std::move(name), std::move(exactly)};
}

DeviceRequest FirstOf(std::string name, std::vector<SubRequest> subs) {
  DeviceRequest request;
  request.name = std::move(name);
  request.first_available = std::move(subs);
  return request;
}

DeviceConstraint Match(std::string attribute,
                       std::vector<std::string> requests = {}) {
  return DeviceConstraint{std::move(requests), std::move(attribute), ""};
}

DeviceConstraint Distinct(std::string attribute,
                          std::vector<std::string> requests = {}) {
  return DeviceConstraint{std::move(requests), "", std::move(attribute)};
}

ResourceClaim Claim(std::string name, std::vector<DeviceRequest> requests,
                    std::vector<DeviceConstraint> constraints = {},
                    std::vector<ClaimConfig> config = {}) {
  ResourceClaim claim;
  claim.ns = "default";
  claim.name = std::move(name);
  claim.spec.requests = std::move(requests);
  claim.spec.constraints = std::move(constraints);
  claim.spec.config = std::move(config);
  return claim;
}

// The common shape: one request "req-0" for one device of `cls`.
ResourceClaim OneDevice(std::string name, const std::string& cls) {
  return Claim(std::move(name), {Req("req-0", Ask(cls))});
}

std::string Qualified(const std::string& attribute) {
  return absl::StrCat(kDriverA, "/", attribute);
}

// ---------------------------------------------------------------------------
// Expected results.

// One device of an allocation, as the table compares it: the share id by
// presence only (ids are random in Kubernetes, a counter here).
struct Got {
  std::string request;
  std::string driver;
  std::string pool;
  std::string device;
  bool has_share_id = false;
  bool admin = false;
  std::map<std::string, int64_t> consumed;

  bool operator==(const Got& other) const = default;
};

void PrintTo(const Got& got, std::ostream* os) {
  *os << got.request << " -> " << got.driver << "/" << got.pool << "/"
      << got.device << (got.has_share_id ? " share" : "")
      << (got.admin ? " admin" : "");
  for (const auto& [name, amount] : got.consumed) {
    *os << " " << name << "=" << amount;
  }
}

Got Whole(std::string request, std::string pool, std::string device,
          std::string driver = kDriverA) {
  return Got{std::move(request),
             std::move(driver),
             std::move(pool),
             std::move(device),
             false,
             false,
             {}};
}

Got AdminOf(std::string request, std::string pool, std::string device) {
  Got got = Whole(std::move(request), std::move(pool), std::move(device));
  got.admin = true;
  return got;
}

// A share of a multi-allocatable device consuming `consumed` (every
// capacity of the device).
Got Share(std::string request, std::string pool, std::string device,
          std::map<std::string, int64_t> consumed = {}) {
  return Got{std::move(request), kDriverA, std::move(pool),
             std::move(device),  true,     false,
             std::move(consumed)};
}

struct GotConfig {
  std::string source;
  std::vector<std::string> requests;
  std::string marker;

  bool operator==(const GotConfig& other) const = default;
};

void PrintTo(const GotConfig& config, std::ostream* os) {
  *os << config.source << " [" << absl::StrJoin(config.requests, ",") << "] "
      << config.marker;
}

struct WantClaim {
  std::vector<Got> devices;
  std::vector<GotConfig> configs;  // none unless listed
};

enum class Outcome { kFits, kDoesNotFit, kError };

struct TableCase {
  std::string name;
  std::vector<ResourceSlice> slices;
  std::vector<DeviceClass> classes;
  std::vector<ResourceClaim> claims;
  // Allocations of claims already allocated (charged before the call).
  std::vector<Got> held;
  Outcome outcome = Outcome::kFits;
  std::vector<WantClaim> want;  // one per claim, when it fits
  // A substring of the verdict's reason (kDoesNotFit) or the error.
  std::string reason;
  DeviceOrder order = DeviceOrder::kFirstFit;
  std::string node = kNode;
  size_t invalid_pools = 0;
};

void PrintTo(const TableCase& tc, std::ostream* os) { *os << tc.name; }

std::vector<Got> Flatten(const AllocationResult& allocation) {
  std::vector<Got> out;
  for (const DeviceResult& result : allocation.results) {
    Got got{result.request,
            result.driver,
            result.pool,
            result.device,
            !result.share_id.empty(),
            result.admin_access,
            {}};
    for (const auto& [name, amount] : result.consumed) {
      got.consumed[name] = amount.value;
    }
    out.push_back(std::move(got));
  }
  return out;
}

std::vector<GotConfig> Configs(const AllocationResult& allocation) {
  std::vector<GotConfig> out;
  for (const nlohmann::json& config : allocation.config) {
    GotConfig got;
    got.source = config.value("source", "");
    for (const auto& name : config.value("requests", nlohmann::json::array())) {
      got.requests.push_back(name.get<std::string>());
    }
    const nlohmann::json parameters =
        config["opaque"].value("parameters", nlohmann::json::object());
    if (!parameters.empty()) got.marker = parameters.begin().key();
    out.push_back(std::move(got));
  }
  return out;
}

// ---------------------------------------------------------------------------
// The cases. Unless a comment says otherwise, devices are dedicated, the
// node is node-1, the pools complete and of generation 1.

// "simple": one device, one request.
TableCase Simple() {
  return {.name = "simple",
          .slices = {PlainSlice("s1", kPool1, kDriverA, 1)},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {OneDevice("c0", kClassA)},
          .want = {{{Whole("req-0", kPool1, "dev-0")}}}};
}

// "other-node": the allocator of node-2 sees node-2's slice (of driver A)
// and binds the claim to node-2.
TableCase OtherNode() {
  ResourceSlice slice = PlainSlice("s2", kPool2, kDriverA, 1);
  slice.node_name = "node-2";
  return {.name = "other_node",
          .slices = {slice},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {OneDevice("c0", kClassA)},
          .want = {{{Whole("req-0", kPool2, "dev-0")}}},
          .node = "node-2"};
}

// "small-and-large": each request gets the device its selector wants.
TableCase SmallAndLarge() {
  return {.name = "small_and_large",
          .slices = {Slice(
              "s1", kPool1, kDriverA,
              {Dev("small").Memory(kGi), Dev("large").Memory(2 * kGi)})},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {Claim(
              "c0", {Req("req-0", Ask(kClassA).Where(MemoryAtLeast("1Gi"))),
                     Req("req-1", Ask(kClassA).Where(MemoryAtLeast("2Gi")))})},
          .want = {{{Whole("req-0", kPool1, "small"),
                     Whole("req-1", kPool1, "large")}}}};
}

// "small-and-large-backtrack-requests": the large device is listed first,
// so first fit gives it to the small request and must undo that.
TableCase SmallAndLargeBacktrackRequests() {
  TableCase tc = SmallAndLarge();
  tc.name = "small_and_large_backtrack_requests";
  std::reverse(tc.slices[0].devices.begin(), tc.slices[0].devices.end());
  return tc;
}

// The same under best fit: the smallest adequate device comes first, so
// no backtracking is needed and the answer is the same.
TableCase SmallAndLargeBestFit() {
  TableCase tc = SmallAndLargeBacktrackRequests();
  tc.name = "small_and_large_best_fit";
  tc.order = DeviceOrder::kBestFit;
  return tc;
}

// "small-and-large-backtrack-claims": the backtracking crosses claims.
TableCase SmallAndLargeBacktrackClaims() {
  TableCase tc = SmallAndLargeBacktrackRequests();
  tc.name = "small_and_large_backtrack_claims";
  const ResourceClaim both = tc.claims[0];
  tc.claims = {Claim("c0", {both.spec.requests[0]}),
               Claim("c1", {both.spec.requests[1]})};
  tc.want = {{{Whole("req-0", kPool1, "small")}},
             {{Whole("req-1", kPool1, "large")}}};
  return tc;
}

// "devices-split-across-different-slices": count 2 over two pools.
TableCase SplitAcrossPools() {
  return {.name = "split_across_pools",
          .slices = {PlainSlice("s1", kPool1, kDriverA, 1),
                     PlainSlice("s2", kPool2, kDriverA, 1)},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {Claim("c0", {Req("req-0", Ask(kClassA).Count(2))})},
          .want = {{{Whole("req-0", kPool1, "dev-0"),
                     Whole("req-0", kPool2, "dev-0")}}}};
}

// "obsolete-slice": only the newest generation of a pool counts.
TableCase ObsoleteGeneration() {
  ResourceSlice old_slice = Slice("s0-old", kPool1, kDriverA, {Dev("old-dev")});
  ResourceSlice current = Slice("s1", kPool1, kDriverA, {Dev("new-dev")});
  current.pool.generation = 2;
  return {.name = "obsolete_generation",
          .slices = {old_slice, current},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {OneDevice("c0", kClassA)},
          .want = {{{Whole("req-0", kPool1, "new-dev")}}}};
}

// "duplicate-slice": a pool with one device name twice is invalid. 1.34
// fails the whole Allocate with an error; ours leaves the pool out, so
// with no other pool the claim does not fit.
TableCase DuplicateDeviceInvalidatesPool() {
  ResourceSlice a = PlainSlice("s1", kPool1, kDriverA, 1);
  a.pool.resource_slice_count = 2;
  ResourceSlice b = a;
  b.name = "s1-2";
  return {.name = "invalid_pool_duplicate_device",
          .slices = {a, b},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {OneDevice("c0", kClassA)},
          .outcome = Outcome::kDoesNotFit,
          .invalid_pools = 1};
}

// 1.35's "invalid-pool-is-ok-if-devices-can-be-allocated-from-other": the
// other pools stay usable (1.34 errs as above).
TableCase InvalidPoolOtherPoolUsable() {
  TableCase tc = DuplicateDeviceInvalidatesPool();
  tc.name = "invalid_pool_other_pool_usable";
  tc.slices.push_back(Slice("s3", kPool2, kDriverA, {Dev("dev-2")}));
  tc.outcome = Outcome::kFits;
  tc.want = {{{Whole("req-0", kPool2, "dev-2")}}};
  return tc;
}

// "no-slices".
TableCase NoSlices() {
  return {.name = "no_slices",
          .classes = {Class(kClassA, kDriverA)},
          .claims = {OneDevice("c0", kClassA)},
          .outcome = Outcome::kDoesNotFit};
}

// "not-enough-suitable-devices": two claims, one device.
TableCase NotEnoughDevices() {
  return {.name = "not_enough_devices",
          .slices = {PlainSlice("s1", kPool1, kDriverA, 1)},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {OneDevice("c0", kClassA),
                     Claim("c0", {Req("req-1", Ask(kClassA))})},
          .outcome = Outcome::kDoesNotFit};
}

// "no-classes" / "unknown-class": an error naming the class.
TableCase UnknownClass() {
  return {.name = "unknown_class",
          .slices = {PlainSlice("s1", kPool1, kDriverA, 1)},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {OneDevice("c0", "no-such-class")},
          .outcome = Outcome::kError,
          .reason = "no-such-class"};
}

// "empty-class": a request without a class is an error.
TableCase EmptyClassName() {
  TableCase tc = UnknownClass();
  tc.name = "empty_class_name";
  tc.claims = {OneDevice("c0", "")};
  tc.reason = "DeviceClass \"\"";
  return tc;
}

// "empty" / "no-claims-to-allocate": nothing asked, nothing given.
TableCase NoClaims() {
  return {.name = "no_claims",
          .slices = {PlainSlice("s1", kPool1, kDriverA, 1)},
          .classes = {Class(kClassA, kDriverA)}};
}

// "several-different-drivers": two claims, one per driver's class.
TableCase SeveralDrivers() {
  return {.name = "several_drivers",
          .slices = {PlainSlice("s1", kPool1, kDriverA, 2),
                     PlainSlice("s1", kPool1, kDriverB, 1)},
          .classes = {Class(kClassA, kDriverA), Class(kClassB, kDriverB)},
          .claims = {OneDevice("c0", kClassA), OneDevice("c0", kClassB)},
          .want = {{{Whole("req-0", kPool1, "dev-0")}},
                   {{Whole("req-0", kPool1, "dev-0", kDriverB)}}}};
}

// "already-allocated-devices": the only device is taken.
TableCase AlreadyAllocated() {
  return {.name = "already_allocated",
          .slices = {PlainSlice("s1", kPool1, kDriverA, 1)},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {OneDevice("c0", kClassA)},
          .held = {Whole("x", kPool1, "dev-0")},
          .outcome = Outcome::kDoesNotFit,
          .reason = "0 free"};
}

// "max-number-devices": 32 devices, the most one claim may hold.
TableCase MaxNumberOfDevices() {
  TableCase tc{.name = "max_number_of_devices",
               .slices = {PlainSlice("s1", kPool1, kDriverA, 32)},
               .classes = {Class(kClassA, kDriverA)},
               .claims = {Claim("c0", {Req("req-0", Ask(kClassA).Count(32))})}};
  tc.want.resize(1);
  for (int i = 0; i < 32; ++i) {
    tc.want[0].devices.push_back(
        Whole("req-0", kPool1, absl::StrCat("dev-", i)));
  }
  return tc;
}

// "too-many-devices-total": 33 devices for one claim exceed the API's 32
// results. 1.34 errs before searching; ours answers "does not fit".
TableCase TooManyDevicesTotal() {
  return {.name = "too_many_devices_total",
          .slices = {PlainSlice("s1", kPool1, kDriverA, 33)},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {Claim("c0", {Req("req-0", Ask(kClassA).Count(32)),
                                  Req("req-1", Ask(kClassA))})},
          .outcome = Outcome::kDoesNotFit,
          .reason = "32"};
}

// "invalid-CEL-one-device": a selector we cannot compile is an error.
TableCase InvalidCelInRequest() {
  return {
      .name = "invalid_cel_in_request",
      .slices = {PlainSlice("s1", kPool1, kDriverA, 1)},
      .classes = {Class(kClassA, kDriverA)},
      .claims = {Claim("c0", {Req("req-0", Ask(kClassA).Where("noSuchVar"))})},
      .outcome = Outcome::kError,
      .reason = "noSuchVar"};
}

// "invalid-CEL-one-device-class": the same in the class.
TableCase InvalidCelInClass() {
  TableCase tc = InvalidCelInRequest();
  tc.name = "invalid_cel_in_class";
  tc.classes[0].selectors = {"noSuchVar"};
  tc.claims = {OneDevice("c0", kClassA)};
  return tc;
}

// "invalid-CEL-all-devices": the same for allocationMode All.
TableCase InvalidCelAllDevices() {
  TableCase tc = InvalidCelInRequest();
  tc.name = "invalid_cel_all_devices";
  tc.claims = {
      Claim("c0", {Req("req-0", Ask(kClassA).All().Where("noSuchVar"))})};
  return tc;
}

// ---------------------------------------------------------------------------
// allocationMode All.

ResourceClaim AllOf(std::string name, const std::string& cls) {
  return Claim(std::move(name), {Req("req-0", Ask(cls).All())});
}

// "all-devices-single".
TableCase AllSingle() {
  return {.name = "all_single",
          .slices = {PlainSlice("s1", kPool1, kDriverA, 1)},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {AllOf("c0", kClassA)},
          .want = {{{Whole("req-0", kPool1, "dev-0")}}}};
}

// "all-devices-many": every matching device of every pool.
TableCase AllMany() {
  TableCase tc = AllSingle();
  tc.name = "all_many";
  tc.slices.push_back(PlainSlice("s1", kPool2, kDriverA, 1));
  tc.want = {
      {{Whole("req-0", kPool1, "dev-0"), Whole("req-0", kPool2, "dev-0")}}};
  return tc;
}

// "all-devices-of-the-incomplete-pool": a pool missing a slice cannot
// serve All (1.34 errs; ours does not fit, with the reason).
TableCase AllIncompletePool() {
  TableCase tc = AllSingle();
  tc.name = "all_incomplete_pool";
  tc.slices[0].pool.resource_slice_count = 2;
  tc.outcome = Outcome::kDoesNotFit;
  tc.reason = "incomplete";
  tc.want.clear();
  return tc;
}

// "all-devices-plus-another": All of driver A, one of driver B.
TableCase AllPlusAnother() {
  return {.name = "all_plus_another",
          .slices = {PlainSlice("s1", kPool1, kDriverA, 1),
                     PlainSlice("s1", kPool1, kDriverB, 1)},
          .classes = {Class(kClassA, kDriverA), Class(kClassB, kDriverB)},
          .claims = {AllOf("c0", kClassA), OneDevice("c1", kClassB)},
          .want = {{{Whole("req-0", kPool1, "dev-0")}},
                   {{Whole("req-0", kPool1, "dev-0", kDriverB)}}}};
}

// "all-devices-plus-another-reversed".
TableCase AllPlusAnotherReversed() {
  TableCase tc = AllPlusAnother();
  tc.name = "all_plus_another_reversed";
  std::swap(tc.claims[0], tc.claims[1]);
  std::swap(tc.want[0], tc.want[1]);
  return tc;
}

// "all-devices-many-plus-another".
TableCase AllManyPlusAnother() {
  TableCase tc = AllPlusAnother();
  tc.name = "all_many_plus_another";
  tc.slices[0] = PlainSlice("s1", kPool1, kDriverA, 2);
  tc.want[0].devices.push_back(Whole("req-0", kPool1, "dev-1"));
  return tc;
}

// "all-devices-many-plus-another-reversed".
TableCase AllManyPlusAnotherReversed() {
  TableCase tc = AllManyPlusAnother();
  tc.name = "all_many_plus_another_reversed";
  std::swap(tc.claims[0], tc.claims[1]);
  std::swap(tc.want[0], tc.want[1]);
  return tc;
}

// "all-devices-no-solution": one device, one claim wants it, the next
// wants all.
TableCase AllNoSolution() {
  return {.name = "all_no_solution",
          .slices = {PlainSlice("s1", kPool1, kDriverA, 1)},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {OneDevice("c1", kClassA), AllOf("c0", kClassA)},
          .outcome = Outcome::kDoesNotFit};
}

// "all-devices-no-solution-reversed".
TableCase AllNoSolutionReversed() {
  TableCase tc = AllNoSolution();
  tc.name = "all_no_solution_reversed";
  std::swap(tc.claims[0], tc.claims[1]);
  return tc;
}

// "all-devices-slice-without-devices" / "all-devices-no-slices": All needs
// at least one device.
TableCase AllWithoutDevices() {
  return {.name = "all_without_devices",
          .slices = {Slice("s1", kPool1, kDriverA, {})},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {AllOf("c0", kClassA)},
          .outcome = Outcome::kDoesNotFit};
}

// "all-devices-some-allocated": one of the two is taken.
TableCase AllSomeAllocated() {
  return {.name = "all_some_allocated",
          .slices = {PlainSlice("s1", kPool1, kDriverA, 2)},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {AllOf("c0", kClassA)},
          .held = {Whole("x", kPool1, "dev-0")},
          .outcome = Outcome::kDoesNotFit};
}

// ---------------------------------------------------------------------------
// Admin access: the device need not be free.

// "all-devices-some-allocated-admin-access".
TableCase AdminAllSomeAllocated() {
  TableCase tc = AllSomeAllocated();
  tc.name = "admin_all_some_allocated";
  tc.claims = {Claim("c0", {Req("req-0", Ask(kClassA).All().Admin())})};
  tc.outcome = Outcome::kFits;
  tc.want = {
      {{AdminOf("req-0", kPool1, "dev-0"), AdminOf("req-0", kPool1, "dev-1")}}};
  return tc;
}

// "all-devices-some-allocating-admin-access": even with admin access a
// claim does not get one dedicated device twice, so All cannot follow a
// request that took one of the devices.
TableCase AdminAllSomeAllocating() {
  return {.name = "admin_all_some_allocating",
          .slices = {PlainSlice("s1", kPool1, kDriverA, 2)},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {Claim("c0", {Req("req-0", Ask(kClassA).Admin()),
                                  Req("req-1", Ask(kClassA).All().Admin())})},
          .outcome = Outcome::kDoesNotFit};
}

// "count-devices-some-allocated-admin-access".
TableCase AdminCountSomeAllocated() {
  TableCase tc = AdminAllSomeAllocated();
  tc.name = "admin_count_some_allocated";
  tc.claims = {Claim("c0", {Req("req-0", Ask(kClassA).Count(2).Admin())})};
  return tc;
}

// "separate-claims-share-device-admin-access".
TableCase AdminSeparateClaimsShare() {
  const ResourceClaim admin = Claim("c0", {Req("req-0", Ask(kClassA).Admin())});
  return {.name = "admin_separate_claims_share",
          .slices = {PlainSlice("s1", kPool1, kDriverA, 2)},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {admin, admin},
          .want = {{{AdminOf("req-0", kPool1, "dev-0")}},
                   {{AdminOf("req-0", kPool1, "dev-0")}}}};
}

// "admin-access-claims-device-allocating-for-non-admin-access".
TableCase AdminAfterNonAdmin() {
  TableCase tc = AdminSeparateClaimsShare();
  tc.name = "admin_after_non_admin";
  tc.claims[0] = OneDevice("c0", kClassA);
  tc.want[0] = {{Whole("req-0", kPool1, "dev-0")}};
  return tc;
}

// "admin-access-enabled": the taken device is granted for admin access.
TableCase AdminOnAllocatedDevice() {
  TableCase tc = AlreadyAllocated();
  tc.name = "admin_on_allocated_device";
  tc.claims = {Claim("c0", {Req("req-0", Ask(kClassA).Admin())})};
  tc.outcome = Outcome::kFits;
  tc.reason.clear();
  tc.want = {{{AdminOf("req-0", kPool1, "dev-0")}}};
  return tc;
}

// ---------------------------------------------------------------------------
// matchAttribute / distinctAttribute.

Device Attributed(std::string name, int64_t numa, std::string text, bool flag,
                  std::string version) {
  return Dev(std::move(name))
      .Attr("numa", DeviceAttribute::Int(numa))
      .Attr("text", DeviceAttribute::String(std::move(text)))
      .Attr("flag", DeviceAttribute::Bool(flag))
      .Attr("driverVersion", DeviceAttribute::Version(std::move(version)));
}

ResourceClaim TwoRequests(std::vector<DeviceConstraint> constraints) {
  return Claim("c0", {Req("req-0", Ask(kClassA)), Req("req-1", Ask(kClassA))},
               std::move(constraints));
}

// "with-constraint": four matchAttributes of each kind hold together.
TableCase MatchEveryKind() {
  return {.name = "match_every_kind",
          .slices = {Slice("s1", kPool1, kDriverA,
                           {Attributed("dev-1", 1, "x", true, "1.0.0"),
                            Attributed("dev-2", 1, "x", true, "1.0.0")})},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {TwoRequests(
              {Match(Qualified("numa")), Match(Qualified("driverVersion")),
               Match(Qualified("text")), Match(Qualified("flag"))})},
          .want = {{{Whole("req-0", kPool1, "dev-1"),
                     Whole("req-1", kPool1, "dev-2")}}}};
}

// "with-constraint-non-existent-attribute": a device without the
// attribute never satisfies the constraint.
TableCase MatchMissingAttribute() {
  return {.name = "match_missing_attribute",
          .slices = {PlainSlice("s1", kPool1, kDriverA, 1)},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {Claim("c0", {Req("req-0", Ask(kClassA))},
                           {Match(Qualified("missing"))})},
          .outcome = Outcome::kDoesNotFit};
}

// "with-constraint-not-matching-{int,string,bool,version}-attribute": the
// two devices differ in `attribute` only.
TableCase MatchDiffers(const std::string& attribute) {
  Device one = Attributed("dev-1", 1, "x", true, "1.0.0");
  Device two = one;
  two.name = "dev-2";
  const DeviceAttribute& value = one.attributes.at(attribute);
  switch (value.kind) {
    case DeviceAttribute::Kind::kInt:
      two.attributes[attribute] = DeviceAttribute::Int(2);
      break;
    case DeviceAttribute::Kind::kString:
      two.attributes[attribute] = DeviceAttribute::String("y");
      break;
    case DeviceAttribute::Kind::kBool:
      two.attributes[attribute] = DeviceAttribute::Bool(false);
      break;
    case DeviceAttribute::Kind::kVersion:
      two.attributes[attribute] = DeviceAttribute::Version("2.0.0");
      break;
  }
  return {.name = absl::StrCat("match_", attribute, "_differs"),
          .slices = {Slice("s1", kPool1, kDriverA, {one, two})},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {Claim("c0", {Req("req-0", Ask(kClassA).Count(2))},
                           {Match(Qualified(attribute))})},
          .outcome = Outcome::kDoesNotFit};
}

// "with-constraint-not-matching-int-attribute-all-devices": All cannot
// satisfy the constraint (1.34 errs; ours does not fit).
TableCase MatchDiffersAllDevices() {
  TableCase tc = MatchDiffers("numa");
  tc.name = "match_numa_differs_all_devices";
  tc.claims[0].spec.requests[0] = Req("req-0", Ask(kClassA).All());
  return tc;
}

// "with-constraint-for-request": the constraint names req-0 only, so
// req-1 may differ.
TableCase MatchForOneRequest() {
  return {
      .name = "match_for_one_request",
      .slices = {Slice("s1", kPool1, kDriverA,
                       {Attributed("dev-1", 1, "x", true, "1.0.0"),
                        Attributed("dev-2", 1, "x", true, "2.0.0")})},
      .classes = {Class(kClassA, kDriverA)},
      .claims = {TwoRequests({Match(Qualified("driverVersion"), {"req-0"})})},
      .want = {{{Whole("req-0", kPool1, "dev-1"),
                 Whole("req-1", kPool1, "dev-2")}}}};
}

// "with-constraint-for-request-retry": dev-1 satisfies req-0's constraint
// but no other device shares its text, so req-0 must move to dev-2.
TableCase MatchRetry() {
  return {.name = "match_retry",
          .slices = {Slice("s1", kPool1, kDriverA,
                           {Attributed("dev-1", 1, "a", true, "1.0.0"),
                            Attributed("dev-2", 1, "b", true, "2.0.0"),
                            Attributed("dev-3", 1, "b", true, "3.0.0")})},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {TwoRequests({Match(Qualified("driverVersion"), {"req-0"}),
                                  Match(Qualified("text"))})},
          .want = {{{Whole("req-0", kPool1, "dev-2"),
                     Whole("req-1", kPool1, "dev-3")}}}};
}

// 1.35's "with-distinct-constraints": three overlapping distinct
// constraints over four requests, each of a different attribute kind.
TableCase DistinctEveryKind() {
  return {
      .name = "distinct_every_kind",
      .slices = {Slice("s1", kPool1, kDriverA,
                       {Attributed("dev-1", 0, "x", true, "1.0.0"),
                        Attributed("dev-2", 1, "x", false, "1.0.1"),
                        Attributed("dev-3", 2, "x", true, "1.0.2"),
                        Attributed("dev-4", 3, "x", true, "1.0.0")})},
      .classes = {Class(kClassA, kDriverA)},
      .claims = {Claim(
          "c0",
          {Req("req-0", Ask(kClassA)), Req("req-1", Ask(kClassA)),
           Req("req-2", Ask(kClassA)), Req("req-3", Ask(kClassA))},
          {Distinct(Qualified("flag"), {"req-0", "req-1"}),
           Distinct(Qualified("driverVersion"), {"req-0", "req-1", "req-2"}),
           Distinct(Qualified("numa"), {"req-0", "req-1", "req-2", "req-3"})})},
      .want = {
          {{Whole("req-0", kPool1, "dev-1"), Whole("req-1", kPool1, "dev-2"),
            Whole("req-2", kPool1, "dev-3"),
            Whole("req-3", kPool1, "dev-4")}}}};
}

// ---------------------------------------------------------------------------
// Configs in the result. 1.34.0 writes a class config without `requests`
// ("all of them") once per request; from 1.34.2 on, and here, each class
// config lists the requests it applies to, once per class.

// "with-class-device-config".
TableCase ConfigFromClass() {
  return {.name = "config_from_class",
          .slices = {PlainSlice("s1", kPool1, kDriverA, 1)},
          .classes = {ConfigClass(kClassA, kDriverA, "classMarker")},
          .claims = {OneDevice("c0", kClassA)},
          .want = {{{Whole("req-0", kPool1, "dev-0")},
                    {{"FromClass", {"req-0"}, "classMarker"}}}}};
}

// "claim-with-device-config": a claim config for all requests.
TableCase ConfigFromClaim() {
  TableCase tc = Simple();
  tc.name = "config_from_claim";
  tc.claims[0].spec.config = {ClaimConfig{{}, Opaque(kDriverA, "claimMarker")}};
  tc.want[0].configs = {{"FromClaim", {}, "claimMarker"}};
  return tc;
}

// 1.35's "with-class-device-config-with-multiple-request-and-configs": one
// config entry per class, listing its requests.
TableCase ClassConfigPerClass() {
  return {.name = "config_from_class_per_class",
          .slices = {PlainSlice("s1", kPool1, kDriverA, 2),
                     PlainSlice("s2", kPool1, kDriverB, 1)},
          .classes = {ConfigClass(kClassA, kDriverA, "markerA"),
                      ConfigClass(kClassB, kDriverB, "markerB")},
          .claims = {Claim(
              "c0", {Req("req-0", Ask(kClassA)), Req("req-1", Ask(kClassA)),
                     Req("req-2", Ask(kClassB))})},
          .want = {{{Whole("req-0", kPool1, "dev-0"),
                     Whole("req-1", kPool1, "dev-1"),
                     Whole("req-2", kPool1, "dev-0", kDriverB)},
                    {{"FromClass", {"req-0", "req-1"}, "markerA"},
                     {"FromClass", {"req-2"}, "markerB"}}}}};
}

// ---------------------------------------------------------------------------
// firstAvailable: subrequests tried in order, results named "req/sub".

// "prioritized-list-first-unavailable": class B has no device.
TableCase PrioFirstUnavailable() {
  return {
      .name = "prio_first_unavailable",
      .slices = {PlainSlice("s1", kPool1, kDriverA, 1)},
      .classes = {Class(kClassA, kDriverA), Class(kClassB, kDriverB)},
      .claims = {Claim("c0", {FirstOf("req-0", {Sub("sub-0", Ask(kClassB)),
                                                Sub("sub-1", Ask(kClassA))})})},
      .want = {{{Whole("req-0/sub-1", kPool1, "dev-0")}}}};
}

// "prioritized-list-non-available": neither subrequest finds two devices.
TableCase PrioNoneAvailable() {
  return {.name = "prio_none_available",
          .slices = {PlainSlice("s1", kPool1, kDriverA, 1),
                     PlainSlice("s2", kPool2, kDriverB, 1)},
          .classes = {Class(kClassA, kDriverA), Class(kClassB, kDriverB)},
          .claims = {Claim(
              "c0", {FirstOf("req-0", {Sub("sub-0", Ask(kClassB).Count(2)),
                                       Sub("sub-1", Ask(kClassA).Count(2))})})},
          .outcome = Outcome::kDoesNotFit};
}

// "prioritized-list-device-config": a claim config naming only the
// subrequest that was not chosen is left out of the result.
TableCase PrioClaimConfig() {
  return {.name = "prio_config_of_chosen_subrequest_only",
          .slices = {PlainSlice("s1", kPool1, kDriverB, 2)},
          .classes = {Class(kClassA, kDriverA), Class(kClassB, kDriverB)},
          .claims = {Claim(
              "c0",
              {FirstOf("req-0", {Sub("sub-0", Ask(kClassA)),
                                 Sub("sub-1", Ask(kClassB).Count(2))})},
              {},
              {ClaimConfig{{"req-0/sub-0"}, Opaque(kDriverA, "notChosen")},
               ClaimConfig{{"req-0/sub-1"}, Opaque(kDriverB, "chosen")}})},
          .want = {{{Whole("req-0/sub-1", kPool1, "dev-0", kDriverB),
                     Whole("req-0/sub-1", kPool1, "dev-1", kDriverB)},
                    {{"FromClaim", {"req-0/sub-1"}, "chosen"}}}}};
}

// "prioritized-list-class-config": only the chosen subrequest's class
// contributes its config.
TableCase PrioClassConfig() {
  return {.name = "prio_config_of_chosen_class_only",
          .slices = {PlainSlice("s1", kPool1, kDriverB, 2),
                     PlainSlice("s2", kPool2, kDriverA, 1)},
          .classes = {ConfigClass(kClassA, kDriverA, "markerA"),
                      ConfigClass(kClassB, kDriverB, "markerB")},
          .claims = {Claim(
              "c0", {FirstOf("req-0", {Sub("sub-0", Ask(kClassA).Count(2)),
                                       Sub("sub-1", Ask(kClassB).Count(2))})})},
          .want = {{{Whole("req-0/sub-1", kPool1, "dev-0", kDriverB),
                     Whole("req-0/sub-1", kPool1, "dev-1", kDriverB)},
                    {{"FromClass", {"req-0/sub-1"}, "markerB"}}}}};
}

// "prioritized-list-subrequests-with-expressions": req-0 takes the 1Gi
// device, so the 4Gi subrequest fails and the 2x2Gi one succeeds.
TableCase PrioSubrequestsWithSelectors() {
  return {.name = "prio_subrequests_with_selectors",
          .slices = {Slice(
              "s1", kPool1, kDriverA,
              {Dev("dev-1").Memory(2 * kGi), Dev("dev-2").Memory(2 * kGi),
               Dev("dev-3").Memory(kGi)})},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {Claim(
              "c0",
              {Req("req-0", Ask(kClassA).Where(MemoryAtLeast("1Gi"))),
               FirstOf("req-1",
                       {Sub("sub-0", Ask(kClassA).Where(MemoryAtLeast("4Gi"))),
                        Sub("sub-1", Ask(kClassA).Count(2).Where(
                                         MemoryAtLeast("2Gi")))})})},
          // First fit gives req-0 dev-1 first and backtracks to dev-3.
          .want = {{{Whole("req-0", kPool1, "dev-3"),
                     Whole("req-1/sub-1", kPool1, "dev-1"),
                     Whole("req-1/sub-1", kPool1, "dev-2")}}}};
}

// Devices for the constraint-on-subrequest cases: an 8Gi v1 device in
// pool-1, a 2Gi v2 and a 1Gi v1 device in pool-2.
std::vector<ResourceSlice> VersionedDevices(bool with_small_v1) {
  std::vector<Device> pool2 = {Dev("dev-2").Memory(2 * kGi).Attr(
      "driverVersion", DeviceAttribute::Version("2.0.0"))};
  if (with_small_v1) {
    pool2.push_back(Dev("dev-3").Memory(kGi).Attr(
        "driverVersion", DeviceAttribute::Version("1.0.0")));
  }
  return {Slice("s1", kPool1, kDriverA,
                {Dev("dev-1").Memory(8 * kGi).Attr(
                    "driverVersion", DeviceAttribute::Version("1.0.0"))}),
          Slice("s2", kPool2, kDriverA, pool2)};
}

ResourceClaim BigThenEitherSize(std::vector<std::string> constrained) {
  return Claim(
      "c0",
      {Req("req-0", Ask(kClassA).Where(MemoryAtLeast("8Gi"))),
       FirstOf("req-1",
               {Sub("sub-0", Ask(kClassA).Where(MemoryAtLeast("2Gi"))),
                Sub("sub-1", Ask(kClassA).Where(MemoryAtLeast("1Gi")))})},
      {Match(Qualified("driverVersion"), std::move(constrained))});
}

// "prioritized-list-subrequests-with-constraints-ref-parent-request": a
// constraint naming the parent applies to every subrequest.
TableCase PrioConstraintOnParent() {
  return {.name = "prio_constraint_on_parent",
          .slices = VersionedDevices(/*with_small_v1=*/true),
          .classes = {Class(kClassA, kDriverA)},
          .claims = {BigThenEitherSize({"req-0", "req-1"})},
          .want = {{{Whole("req-0", kPool1, "dev-1"),
                     Whole("req-1/sub-1", kPool2, "dev-3")}}}};
}

// "prioritized-list-subrequests-with-constraints-ref-sub-request": a
// constraint naming req-1/sub-0 binds that subrequest only, so sub-1 may
// take the v2 device.
TableCase PrioConstraintOnSubrequest() {
  return {.name = "prio_constraint_on_subrequest",
          .slices = VersionedDevices(/*with_small_v1=*/false),
          .classes = {Class(kClassA, kDriverA)},
          .claims = {BigThenEitherSize({"req-0", "req-1/sub-0"})},
          .want = {{{Whole("req-0", kPool1, "dev-1"),
                     Whole("req-1/sub-1", kPool2, "dev-2")}}}};
}

// "prioritized-list-subrequests-with-allocation-mode-all" and
// "prioritized-list-allocation-mode-all" (also
// "all-devices-some-allocated-prioritized-list"): All fails on a taken
// device, the next subrequest takes the free one.
TableCase PrioAllSomeAllocated() {
  return {.name = "prio_all_some_allocated",
          .slices = {PlainSlice("s1", kPool1, kDriverA, 2)},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {Claim("c0",
                           {FirstOf("req-0", {Sub("sub-0", Ask(kClassA).All()),
                                              Sub("sub-1", Ask(kClassA))})})},
          .held = {Whole("x", kPool1, "dev-0")},
          .want = {{{Whole("req-0/sub-1", kPool1, "dev-1")}}}};
}

// "prioritized-list-allocation-mode-all-multiple-requests": All cannot
// follow req-0, which took one of the two devices.
TableCase PrioAllAfterAnotherRequest() {
  return {.name = "prio_all_after_another_request",
          .slices = {PlainSlice("s1", kPool1, kDriverA, 2)},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {Claim("c0",
                           {Req("req-0", Ask(kClassA)),
                            FirstOf("req-1", {Sub("sub-0", Ask(kClassA).All()),
                                              Sub("sub-1", Ask(kClassA))})})},
          .want = {{{Whole("req-0", kPool1, "dev-0"),
                     Whole("req-1/sub-1", kPool1, "dev-1")}}}};
}

// "all-devices-slice-without-devices-prioritized-list": All over no
// devices fails, the next subrequest uses driver B.
TableCase PrioAllWithoutDevices() {
  return {.name = "prio_all_without_devices",
          .slices = {Slice("s1", kPool1, kDriverA, {}),
                     PlainSlice("s2", kPool2, kDriverB, 1)},
          .classes = {Class(kClassA, kDriverA), Class(kClassB, kDriverB)},
          .claims = {Claim("c0",
                           {FirstOf("req-0", {Sub("sub-0", Ask(kClassA).All()),
                                              Sub("sub-1", Ask(kClassB))})})},
          .want = {{{Whole("req-0/sub-1", kPool2, "dev-0", kDriverB)}}}};
}

std::vector<ResourceSlice> BigAndSmall() {
  return {Slice("s1", kPool1, kDriverA, {Dev("big").Memory(8 * kGi)}),
          Slice("s2", kPool2, kDriverA, {Dev("small").Memory(4 * kGi)})};
}

// "prioritized-list-multi-request": req-1 takes the 8Gi device, so req-0
// falls back to its 4Gi subrequest.
TableCase PrioMultiRequest() {
  return {
      .name = "prio_multi_request",
      .slices = BigAndSmall(),
      .classes = {Class(kClassA, kDriverA)},
      .claims = {Claim(
          "c0",
          {Req("req-1", Ask(kClassA).Where(MemoryAtLeast("8Gi"))),
           FirstOf("req-0",
                   {Sub("sub-0", Ask(kClassA).Where(MemoryAtLeast("8Gi"))),
                    Sub("sub-1", Ask(kClassA).Where(MemoryAtLeast("4Gi")))})})},
      .want = {{{Whole("req-1", kPool1, "big"),
                 Whole("req-0/sub-1", kPool2, "small")}}}};
}

// "prioritized-list-with-backtracking": the same with the firstAvailable
// request first: its first choice must be undone for req-1.
TableCase PrioWithBacktracking() {
  TableCase tc = PrioMultiRequest();
  tc.name = "prio_with_backtracking";
  std::swap(tc.claims[0].spec.requests[0], tc.claims[0].spec.requests[1]);
  std::swap(tc.want[0].devices[0], tc.want[0].devices[1]);
  return tc;
}

// "prioritized-list-too-many-in-first-subrequest": 500 devices can never
// be had, the next subrequest is tried.
TableCase PrioTooManyInFirst() {
  return {.name = "prio_too_many_in_first",
          .slices = {PlainSlice("s1", kPool1, kDriverA, 1)},
          .classes = {Class(kClassA, kDriverA), Class(kClassB, kDriverB)},
          .claims = {Claim(
              "c0", {FirstOf("req-0", {Sub("sub-0", Ask(kClassB).Count(500)),
                                       Sub("sub-1", Ask(kClassA))})})},
          .want = {{{Whole("req-0/sub-1", kPool1, "dev-0")}}}};
}

// "prioritized-list-max-allocation-limit-request": 32 + 32 devices would
// exceed the 32 results of a claim; 16 + 16 do not.
TableCase PrioResultLimit() {
  const auto request = [](std::string name) {
    return FirstOf(std::move(name), {Sub("sub-0", Ask(kClassA).Count(32)),
                                     Sub("sub-1", Ask(kClassA).Count(16))});
  };
  TableCase tc{.name = "prio_result_limit",
               .slices = {PlainSlice("s1", kPool1, kDriverA, 64)},
               .classes = {Class(kClassA, kDriverA)},
               .claims = {Claim("c0", {request("req-0"), request("req-1")})}};
  tc.want.resize(1);
  for (int i = 0; i < 32; ++i) {
    tc.want[0].devices.push_back(Whole(i < 16 ? "req-0/sub-1" : "req-1/sub-1",
                                       kPool1, absl::StrCat("dev-", i)));
  }
  return tc;
}

// "prioritized-list-max-allocation-allocation-mode-all": All of 31 devices
// plus 2 of driver B would be 33 results; the 2-device subrequest fits.
TableCase PrioResultLimitAll() {
  return {.name = "prio_result_limit_all",
          .slices = {PlainSlice("s1", kPool1, kDriverA, 31),
                     PlainSlice("s2", kPool2, kDriverB, 2)},
          .classes = {Class(kClassA, kDriverA), Class(kClassB, kDriverB)},
          .claims = {Claim(
              "c0", {FirstOf("req-0", {Sub("sub-0", Ask(kClassA).All()),
                                       Sub("sub-1", Ask(kClassA).Count(2))}),
                     Req("req-1", Ask(kClassB).Count(2))})},
          .want = {{{Whole("req-0/sub-1", kPool1, "dev-0"),
                     Whole("req-0/sub-1", kPool1, "dev-1"),
                     Whole("req-1", kPool2, "dev-0", kDriverB),
                     Whole("req-1", kPool2, "dev-1", kDriverB)}}}};
}

// 1.35's "with-distinct-constraints-with-subrequests": the distinct
// constraint covers req-0 and req-1 only, so req-2 may share dev-1.
TableCase DistinctWithSubrequests() {
  const std::string flagged =
      absl::StrCat("device.attributes[\"", kDriverA, "\"].flag");
  const auto request = [&](std::string name) {
    return FirstOf(std::move(name), {Sub("sub-0", Ask(kClassA).Where(flagged)),
                                     Sub("sub-1", Ask(kClassA))});
  };
  return {
      .name = "distinct_with_subrequests",
      .slices = {Slice(
          "s1", kPool1, kDriverA,
          {Dev("dev-1").Multi().Attr("flag", DeviceAttribute::Bool(true)),
           Dev("dev-2").Multi().Attr("flag", DeviceAttribute::Bool(false))})},
      .classes = {Class(kClassA, kDriverA)},
      .claims = {Claim("c0",
                       {request("req-0"), request("req-1"), request("req-2")},
                       {Distinct(Qualified("flag"), {"req-0", "req-1"})})},
      .want = {{{Share("req-0/sub-0", kPool1, "dev-1"),
                 Share("req-1/sub-1", kPool1, "dev-2"),
                 Share("req-2/sub-0", kPool1, "dev-1")}}}};
}

// ---------------------------------------------------------------------------
// Partitionable devices: partitions exclude each other through counters.

// "partitionable-devices-single-device".
TableCase PartSingle() {
  return {
      .name = "part_single",
      .slices = {Slice("s1", kPool1, kDriverA,
                       {Dev("dev-1").Consumes("set-1", {{"memory", 4 * kGi}})},
                       {Counters("set-1", {{"memory", 8 * kGi}})})},
      .classes = {Class(kClassA, kDriverA)},
      .claims = {OneDevice("c0", kClassA)},
      .want = {{{Whole("req-0", kPool1, "dev-1")}}}};
}

// Three partitions of one 8Gi GPU: 4Gi, 6Gi, 4Gi.
ResourceSlice ThreePartitions() {
  return Slice("s1", kPool1, kDriverA,
               {Dev("dev-1").Partition("set-1", {{"memory", 4 * kGi}}),
                Dev("dev-2").Partition("set-1", {{"memory", 6 * kGi}}),
                Dev("dev-3").Partition("set-1", {{"memory", 4 * kGi}})},
               {Counters("set-1", {{"memory", 8 * kGi}})});
}

// "partitionable-devices-multiple-devices": 4Gi + 6Gi overlap, 4Gi + 4Gi
// do not.
TableCase PartMultipleDevices() {
  return {.name = "part_multiple_devices",
          .slices = {ThreePartitions()},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {TwoRequests({})},
          .want = {{{Whole("req-0", kPool1, "dev-1"),
                     Whole("req-1", kPool1, "dev-3")}}}};
}

// "partitionable-devices-prioritized-list": the 6Gi subrequest's only
// device overlaps req-0's, the 4Gi one fits.
TableCase PartPrioritizedList() {
  return {
      .name = "part_prioritized_list",
      .slices = {ThreePartitions()},
      .classes = {Class(kClassA, kDriverA)},
      .claims = {Claim(
          "c0",
          {Req("req-0", Ask(kClassA)),
           FirstOf("req-1",
                   {Sub("sub-0", Ask(kClassA).Where(MemoryAtLeast("6Gi"))),
                    Sub("sub-1", Ask(kClassA).Where(MemoryAtLeast("4Gi")))})})},
      .want = {{{Whole("req-0", kPool1, "dev-1"),
                 Whole("req-1/sub-1", kPool1, "dev-3")}}}};
}

// "partitionable-devices-multiple-capacity-pools": two counter sets, the
// second (cpus 8) is the one 4 + 6 overflows.
TableCase PartTwoCounterSets() {
  const auto part = [](std::string name, int64_t gib, int64_t cpus) -> Device {
    return Dev(std::move(name))
        .Partition("set-1", {{"memory", gib * kGi}})
        .Consumes("set-2", {{"cpus", cpus}});
  };
  TableCase tc = PartPrioritizedList();
  tc.name = "part_two_counter_sets";
  tc.slices = {
      Slice("s1", kPool1, kDriverA,
            {part("dev-1", 4, 4), part("dev-2", 6, 6), part("dev-3", 4, 4)},
            {Counters("set-1", {{"memory", 18 * kGi}}),
             Counters("set-2", {{"cpus", 8}})})};
  return tc;
}

// "partitionable-devices-multiple-counters": several counters per set;
// dev-1 with anything overflows set-1's cpus.
TableCase PartMultipleCounters() {
  const auto part = [](std::string name, int64_t gib1, int64_t cpus1,
                       int64_t gib2, int64_t cpus2) -> Device {
    return Dev(std::move(name))
        .Consumes("set-1", {{"memory", gib1 * kGi}, {"cpus", cpus1}})
        .Consumes("set-2", {{"memory", gib2 * kGi}, {"cpus", cpus2}});
  };
  return {.name = "part_multiple_counters",
          .slices = {Slice(
              "s1", kPool1, kDriverA,
              {part("dev-1", 4, 6, 2, 4), part("dev-2", 6, 4, 6, 6),
               part("dev-3", 4, 4, 4, 4)},
              {Counters("set-1", {{"cpus", 8}, {"memory", 18 * kGi}}),
               Counters("set-2", {{"cpus", 12}, {"memory", 18 * kGi}})})},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {TwoRequests({})},
          .want = {{{Whole("req-0", kPool1, "dev-2"),
                     Whole("req-1", kPool1, "dev-3")}}}};
}

// "partitionable-devices-multiple-pools": counters are per pool; allocated
// partitions use up pool-1's cpus, pool-2 has room for two small ones.
TableCase PartMultiplePools() {
  const auto part = [](std::string name, int64_t cpus, int64_t gib) -> Device {
    return Dev(std::move(name))
        .Consumes("set-1", {{"cpus", cpus}, {"memory", gib * kGi}});
  };
  const CounterSet set = Counters("set-1", {{"cpus", 8}, {"memory", 18 * kGi}});
  return {.name = "part_multiple_pools",
          .slices = {Slice("s1", kPool1, kDriverA,
                           {part("dev-1", 6, 4), part("dev-2", 4, 6),
                            part("dev-3", 4, 4)},
                           {set}),
                     Slice("s2", kPool2, kDriverA,
                           {part("dev-1", 6, 4), part("dev-2", 1, 7),
                            part("dev-3", 1, 7)},
                           {set})},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {TwoRequests({})},
          .held = {Whole("x", kPool1, "dev-2"), Whole("x", kPool1, "dev-3"),
                   Whole("x", kPool2, "dev-1")},
          .want = {{{Whole("req-0", kPool2, "dev-2"),
                     Whole("req-1", kPool2, "dev-3")}}}};
}

// "partitionable-devices-unused-counters-in-counter-set": a counter no
// device consumes does not matter.
TableCase PartUnusedCounter() {
  return {.name = "part_unused_counter",
          .slices = {Slice(
              "s1", kPool1, kDriverA,
              {Dev("dev-1").Consumes("set-1", {{"memory", 5 * kGi}}),
               Dev("dev-2").Consumes("set-1", {{"memory", 4 * kGi}}),
               Dev("dev-3").Consumes("set-1", {{"memory", 4 * kGi}})},
              {Counters("set-1", {{"memory", 8 * kGi}, {"unused", kGi}})})},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {Claim("c0", {Req("req-0", Ask(kClassA).Count(2))})},
          .want = {{{Whole("req-0", kPool1, "dev-2"),
                     Whole("req-0", kPool1, "dev-3")}}}};
}

// "partitionable-devices-no-capacity-available": the allocated 16Gi
// partition leaves 2Gi, the 4Gi one does not fit.
TableCase PartNoCountersLeft() {
  return {.name = "part_no_counters_left",
          .slices = {Slice(
              "s1", kPool1, kDriverA,
              {Dev("dev-1").Partition("set-1", {{"memory", 4 * kGi}}),
               Dev("dev-2").Partition("set-1", {{"memory", 16 * kGi}})},
              {Counters("set-1", {{"memory", 18 * kGi}})})},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {OneDevice("c0", kClassA)},
          .held = {Whole("x", kPool1, "dev-2")},
          .outcome = Outcome::kDoesNotFit};
}

// "partitionable-devices-overallocated-capacity-pool": an allocated
// partition larger than its set drives the counter below zero; nothing
// else fits.
TableCase PartOverallocated() {
  TableCase tc = PartNoCountersLeft();
  tc.name = "part_overallocated";
  tc.slices[0].devices[1] =
      Dev("dev-2").Partition("set-1", {{"memory", 20 * kGi}});
  return tc;
}

// "partitionable-devices-with-attribute-selector": req-1 wants the special
// partition; req-0's first choice takes it and must be undone.
TableCase PartAttributeSelector() {
  const auto part = [](std::string name, bool special,
                       const std::string& cpu) -> Device {
    return Dev(std::move(name))
        .Attr("special", DeviceAttribute::Bool(special))
        .Consumes("set-1", {{cpu, 1}})
        .Consumes("set-2", {{"mem", 10 * kGi}});
  };
  return {
      .name = "part_attribute_selector",
      .slices = {Slice(
          "s1", kPool1, kDriverA,
          {part("dev-1", true, "cpu1"), part("dev-2", false, "cpu2"),
           part("dev-3", false, "cpu3")},
          {Counters("set-1", {{"cpu1", 1}, {"cpu2", 1}, {"cpu3", 1}}),
           Counters("set-2", {{"mem", 30 * kGi}})})},
      .classes = {Class(kClassA, kDriverA)},
      .claims = {Claim("c0", {Req("req-0", Ask(kClassA).Count(2)),
                              Req("req-1", Ask(kClassA).Where(absl::StrCat(
                                               "device.attributes[\"", kDriverA,
                                               "\"].special")))})},
      .want = {
          {{Whole("req-0", kPool1, "dev-2"), Whole("req-0", kPool1, "dev-3"),
            Whole("req-1", kPool1, "dev-1")}}}};
}

// 1.35's "all-devices-with-consumed-counters" (in the 1.34 layout, the
// counters in the devices' slice): All takes the partition.
TableCase PartAll() {
  TableCase tc = PartSingle();
  tc.name = "part_all";
  tc.claims = {AllOf("c0", kClassA)};
  return tc;
}

// ---------------------------------------------------------------------------
// Consumable capacity: allowMultipleAllocations with request policies.
// Every share consumes every capacity of its device and has a share id.

ResourceSlice MultiSlice(std::vector<Device> devices) {
  return Slice("s1", kPool1, kDriverA, std::move(devices));
}

ResourceClaim CapacityClaim(std::string name, std::optional<int64_t> amount,
                            const std::string& cls = kClassA) {
  Ask ask(cls);
  if (amount.has_value()) ask.Capacity(kCap, *amount);
  return Claim(std::move(name), {Req("req-0", ask)});
}

// "...-without-policy-without-capacity-request": a capacity without a
// policy, not asked for, is taken whole: two claims, two devices.
TableCase CcNoPolicyNoRequest() {
  return {.name = "cc_no_policy_no_request_takes_all",
          .slices = {MultiSlice({Dev("dev-1").Multi().Capacity(kCap, 1),
                                 Dev("dev-2").Multi().Capacity(kCap, 1)})},
          .classes = {MultiClass(kClassA, kDriverA, true)},
          .claims = {CapacityClaim("c0", std::nullopt),
                     CapacityClaim("c1", std::nullopt)},
          .want = {{{Share("req-0", kPool1, "dev-1", {{kCap, 1}})}},
                   {{Share("req-0", kPool1, "dev-2", {{kCap, 1}})}}}};
}

// "...-without-policy-without-capacity-request-block": so two claims
// cannot share one device.
TableCase CcNoPolicyNoRequestBlocks() {
  return {.name = "cc_no_policy_no_request_blocks",
          .slices = {MultiSlice({Dev("dev-1").Multi().Capacity(kCap, 2)})},
          .classes = {MultiClass(kClassA, kDriverA, true)},
          .claims = {CapacityClaim("c0", std::nullopt),
                     CapacityClaim("c1", std::nullopt)},
          .outcome = Outcome::kDoesNotFit};
}

// "...-without-policy-with-capacity-request": without a policy a request
// takes what it asks, so two fit.
TableCase CcNoPolicyWithRequest() {
  return {.name = "cc_no_policy_with_request",
          .slices = {MultiSlice({Dev("dev-1").Multi().Capacity(kCap, 2)})},
          .classes = {MultiClass(kClassA, kDriverA, true)},
          .claims = {CapacityClaim("c0", 1), CapacityClaim("c1", 1)},
          .want = {{{Share("req-0", kPool1, "dev-1", {{kCap, 1}})}},
                   {{Share("req-0", kPool1, "dev-1", {{kCap, 1}})}}}};
}

// "...-with-policy-without-capacity-request": an omitted capacity takes
// the policy's default.
TableCase CcPolicyDefault() {
  return {.name = "cc_policy_default",
          .slices = {MultiSlice({Dev("dev-1").Multi().SmallRange(kCap, 4)})},
          .classes = {MultiClass(kClassA, kDriverA, true)},
          .claims = {CapacityClaim("c0", std::nullopt),
                     CapacityClaim("c1", std::nullopt)},
          .want = {{{Share("req-0", kPool1, "dev-1", {{kCap, 2}})}},
                   {{Share("req-0", kPool1, "dev-1", {{kCap, 2}})}}}};
}

// "...-with-zero-request-policy": a default of 0 takes nothing.
TableCase CcZeroDefault() {
  return {.name = "cc_zero_default",
          .slices = {MultiSlice(
              {Dev("dev-1").Multi().ValidValues(kCap, 1, 0, {})})},
          .classes = {MultiClass(kClassA, kDriverA, true)},
          .claims = {CapacityClaim("c0", std::nullopt),
                     CapacityClaim("c1", std::nullopt)},
          .want = {{{Share("req-0", kPool1, "dev-1", {{kCap, 0}})}},
                   {{Share("req-0", kPool1, "dev-1", {{kCap, 0}})}}}};
}

// "...-violates-zero-request-policy": 1 is not a valid value.
TableCase CcViolatesValidValues() {
  return {.name = "cc_violates_valid_values",
          .slices = {MultiSlice(
              {Dev("dev-1").Multi().ValidValues(kCap, 1, 0, {})})},
          .classes = {MultiClass(kClassA, kDriverA, true)},
          .claims = {CapacityClaim("c0", 1)},
          .outcome = Outcome::kDoesNotFit};
}

// "...-with-range-policy-with-capacity-request": 1 rounds up to the
// minimum 2; two such shares fill 4.
TableCase CcRangeRoundsUpToMin() {
  return {.name = "cc_range_rounds_up_to_min",
          .slices = {MultiSlice({Dev("dev-1").Multi().SmallRange(kCap, 4)})},
          .classes = {MultiClass(kClassA, kDriverA, true)},
          .claims = {CapacityClaim("c0", 1), CapacityClaim("c1", 1)},
          .want = {{{Share("req-0", kPool1, "dev-1", {{kCap, 2}})}},
                   {{Share("req-0", kPool1, "dev-1", {{kCap, 2}})}}}};
}

// "...-with-range-policy-step": 3 rounds up to min + step = 4.
TableCase CcRangeRoundsUpToStep() {
  return {.name = "cc_range_rounds_up_to_step",
          .slices = {MultiSlice({Dev("dev-1").Multi().SmallRange(kCap, 4)})},
          .classes = {MultiClass(kClassA, kDriverA, true)},
          .claims = {CapacityClaim("c0", 3)},
          .want = {{{Share("req-0", kPool1, "dev-1", {{kCap, 4}})}}}};
}

// "...-with-valid-values-policy": 2 is listed.
TableCase CcValidValues() {
  return {.name = "cc_valid_values",
          .slices = {MultiSlice(
              {Dev("dev-1").Multi().ValidValues(kCap, 4, 1, {2})})},
          .classes = {MultiClass(kClassA, kDriverA, true)},
          .claims = {CapacityClaim("c0", 2)},
          .want = {{{Share("req-0", kPool1, "dev-1", {{kCap, 2}})}}}};
}

// "...-with-valid-values-policy-round-up": 2 rounds up to the listed 3.
TableCase CcValidValuesRoundUp() {
  return {.name = "cc_valid_values_round_up",
          .slices = {MultiSlice(
              {Dev("dev-1").Multi().ValidValues(kCap, 3, 1, {3})})},
          .classes = {MultiClass(kClassA, kDriverA, true)},
          .claims = {CapacityClaim("c0", 2)},
          .want = {{{Share("req-0", kPool1, "dev-1", {{kCap, 3}})}}}};
}

// "...-with-exceeded-consumable-capacity-request": 2 (from 1) + 2 > 2.
TableCase CcExceeded() {
  return {.name = "cc_exceeded",
          .slices = {MultiSlice({Dev("dev-1").Multi().SmallRange(kCap, 2)})},
          .classes = {MultiClass(kClassA, kDriverA, true)},
          .claims = {CapacityClaim("c0", 1), CapacityClaim("c0", 2)},
          .outcome = Outcome::kDoesNotFit};
}

// "...-with-request-over-max-sharing-policy": 6 is above the policy's max
// of 4, though the device has 10.
TableCase CcOverMax() {
  return {.name = "cc_over_max",
          .slices = {MultiSlice({Dev("dev-1").Multi().SmallRange(kCap, 10)})},
          .classes = {MultiClass(kClassA, kDriverA, true)},
          .claims = {CapacityClaim("c0", 6)},
          .outcome = Outcome::kDoesNotFit,
          .reason = "maximum"};
}

// "...-with-some-remaining-consumable-capacity": 2 of 4 held, 2 fit.
TableCase CcSomeRemaining() {
  return {.name = "cc_some_remaining",
          .slices = {MultiSlice({Dev("dev-1").Multi().SmallRange(kCap, 4)})},
          .classes = {MultiClass(kClassA, kDriverA, true)},
          .claims = {CapacityClaim("c0", 2)},
          .held = {Share("x", kPool1, "dev-1", {{kCap, 2}})},
          .want = {{{Share("req-0", kPool1, "dev-1", {{kCap, 2}})}}}};
}

// "...-with-no-available-consumable-capacity": 2 of 2 held.
TableCase CcNoneRemaining() {
  return {.name = "cc_none_remaining",
          .slices = {MultiSlice({Dev("dev-1").Multi().SmallRange(kCap, 2)})},
          .classes = {MultiClass(kClassA, kDriverA, true)},
          .claims = {CapacityClaim("c0", 2)},
          .held = {Share("x", kPool1, "dev-1", {{kCap, 2}})},
          .outcome = Outcome::kDoesNotFit};
}

// "consumable-capacity-with-multi-allocatable-device-backtrack": c0's two
// shares must match on `text`, which only the 4-unit device can hold
// both of; c1 then takes the 2-unit one.
TableCase CcBacktrack() {
  const ResourceClaim c0 = Claim("c0",
                                 {Req("req-0", Ask(kClassA).Capacity(kCap, 2)),
                                  Req("req-1", Ask(kClassA).Capacity(kCap, 2))},
                                 {Match(Qualified("text"))});
  return {.name = "cc_backtrack",
          .slices = {MultiSlice({Dev("dev-2").Multi().SmallRange(kCap, 2).Attr(
                                     "text", DeviceAttribute::String("v1")),
                                 Dev("dev-1").Multi().SmallRange(kCap, 4).Attr(
                                     "text", DeviceAttribute::String("v2"))})},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {c0, CapacityClaim("c1", 2)},
          .want = {{{Share("req-0", kPool1, "dev-1", {{kCap, 2}}),
                     Share("req-1", kPool1, "dev-1", {{kCap, 2}})}},
                   {{Share("req-0", kPool1, "dev-2", {{kCap, 2}})}}}};
}

// The same under best fit gives the same answer: the 2-unit device is
// the tighter fit for c0's first share, and backtracking moves it.
TableCase CcBacktrackBestFit() {
  TableCase tc = CcBacktrack();
  tc.name = "cc_backtrack_best_fit";
  tc.order = DeviceOrder::kBestFit;
  return tc;
}

// "...-with-subrequest": 4 does not fit the 2-unit device, 2 does.
TableCase CcSubrequest() {
  return {
      .name = "cc_subrequest",
      .slices = {MultiSlice({Dev("dev-1").Multi().SmallRange(kCap, 2)})},
      .classes = {MultiClass(kClassA, kDriverA, true)},
      .claims = {Claim(
          "c0", {FirstOf("req-0", {Sub("sub-0", Ask(kClassA).Capacity(kCap, 4)),
                                   Sub("sub-1", Ask(kClassA).Capacity(kCap, 2)),
                                   Sub("sub-2", Ask(kClassA))})})},
      .want = {{{Share("req-0/sub-1", kPool1, "dev-1", {{kCap, 2}})}}}};
}

// "...-allocation-mode-all-filter-out-no-capacity": All skips a device
// without the capacity asked for.
TableCase CcAllSkipsMissingCapacity() {
  return {.name = "cc_all_skips_missing_capacity",
          .slices = {MultiSlice(
              {Dev("dev-1").Multi().Capacity(kCap, 2), Dev("dev-2").Multi()})},
          .classes = {MultiClass(kClassA, kDriverA, true)},
          .claims = {Claim(
              "c0", {Req("req-0", Ask(kClassA).All().Capacity(kCap, 2))})},
          .want = {{{Share("req-0", kPool1, "dev-1", {{kCap, 2}})}}}};
}

// "...-allocation-mode-all-filter-out-insufficient-capacity": All skips a
// device too small for the request.
TableCase CcAllSkipsTooSmall() {
  TableCase tc = CcAllSkipsMissingCapacity();
  tc.name = "cc_all_skips_too_small";
  tc.slices[0].devices[1] = Dev("dev-2").Multi().Capacity(kCap, 1);
  return tc;
}

// Two devices without policies, of 2 and 1 units.
ResourceSlice TwoAndOne() {
  return MultiSlice({Dev("dev-1").Multi().Capacity(kCap, 2),
                     Dev("dev-2").Multi().Capacity(kCap, 1)});
}

ResourceClaim OneThenAll(int64_t amount) {
  return Claim("c0", {Req("req-0", Ask(kClassA).Capacity(kCap, amount)),
                      Req("req-1", Ask(kClassA).All().Capacity(kCap, amount))});
}

// "...-allocation-mode-all-allocating-sufficient": All shares dev-1 with
// req-0 of the same claim.
TableCase CcAllAfterShareFits() {
  return {.name = "cc_all_after_share_fits",
          .slices = {TwoAndOne()},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {OneThenAll(1)},
          .want = {{{Share("req-0", kPool1, "dev-1", {{kCap, 1}}),
                     Share("req-1", kPool1, "dev-1", {{kCap, 1}}),
                     Share("req-1", kPool1, "dev-2", {{kCap, 1}})}}}};
}

// "...-allocation-mode-all-in-use-sufficient": 1 of dev-1's 2 held.
TableCase CcAllInUseFits() {
  return {.name = "cc_all_in_use_fits",
          .slices = {TwoAndOne()},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {Claim(
              "c0", {Req("req-0", Ask(kClassA).All().Capacity(kCap, 1))})},
          .held = {Share("x", kPool1, "dev-1", {{kCap, 1}})},
          .want = {{{Share("req-0", kPool1, "dev-1", {{kCap, 1}}),
                     Share("req-0", kPool1, "dev-2", {{kCap, 1}})}}}};
}

// "...-allocation-mode-all-allocating-insufficient": whichever device
// req-0 takes, All then finds it full.
TableCase CcAllAfterShareDoesNotFit() {
  return {.name = "cc_all_after_share_does_not_fit",
          .slices = {MultiSlice({Dev("dev-1").Multi().Capacity(kCap, 1),
                                 Dev("dev-2").Multi().Capacity(kCap, 1)})},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {OneThenAll(1)},
          .outcome = Outcome::kDoesNotFit};
}

// "...-allocation-mode-all-in-use-insufficient": dev-1 is full from an
// earlier claim, so All leaves it out and takes dev-2. 1.34 answers "does
// not fit" here only through #133705 (it checks slice device 0, dev-1,
// for All's device 0, dev-2); 1.35's table expects dev-2, as we do.
TableCase CcAllSkipsFullDevice() {
  return {.name = "cc_all_skips_full_device",
          .slices = {MultiSlice({Dev("dev-1").Multi().Capacity(kCap, 1),
                                 Dev("dev-2").Multi().Capacity(kCap, 1)})},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {Claim(
              "c0", {Req("req-0", Ask(kClassA).All().Capacity(kCap, 1))})},
          .held = {Share("x", kPool1, "dev-1", {{kCap, 1}})},
          .want = {{{Share("req-0", kPool1, "dev-2", {{kCap, 1}})}}}};
}

// "consumable-capacity-dedicated-device-with-consumable-capacity-request":
// on a dedicated device a capacity request is a filter only: no share id,
// nothing consumed.
TableCase CcDedicatedRequestIsFilter() {
  return {.name = "cc_dedicated_request_is_filter",
          .slices = {MultiSlice({Dev("dev-1").Capacity(kCap, 1)})},
          .classes = {MultiClass(kClassA, kDriverA, false)},
          .claims = {CapacityClaim("c0", 1)},
          .want = {{{Whole("req-0", kPool1, "dev-1")}}}};
}

// "...-dedicated-device-with-multiple-consumable-capacity-request": a
// dedicated device is not shared, whatever its capacities.
TableCase CcDedicatedNotShared() {
  return {.name = "cc_dedicated_not_shared",
          .slices = {MultiSlice({Dev("dev-1").SmallRange(kCap, 2)})},
          .classes = {MultiClass(kClassA, kDriverA, false)},
          .claims = {CapacityClaim("c0", 1), CapacityClaim("c1", 1)},
          .outcome = Outcome::kDoesNotFit};
}

// "allow-multiple-allocations-exclude-multi-allocatable-device-by-class-
// selector": the class wants dedicated devices only.
TableCase MultiExcludedByClass() {
  return {.name = "multi_excluded_by_class",
          .slices = {MultiSlice({Dev("dev-1").Multi().Capacity(kCap, 1)})},
          .classes = {MultiClass(kClassA, kDriverA, false)},
          .claims = {CapacityClaim("c0", 1)},
          .outcome = Outcome::kDoesNotFit};
}

// "allow-multiple-allocations-not-allocate-multi-allocatable-device-which-
// already-dedicated": the device was allocated whole (no share id) before
// its slice made it multi-allocatable; it is not shared until freed.
TableCase MultiHeldWhole() {
  return {.name = "multi_held_whole",
          .slices = {MultiSlice({Dev("dev-1").Multi().SmallRange(kCap, 2)})},
          .classes = {MultiClass(kClassA, kDriverA, true)},
          .claims = {CapacityClaim("c0", 1)},
          .held = {Whole("x", kPool1, "dev-1")},
          .outcome = Outcome::kDoesNotFit};
}

// "allow-multiple-allocations-not-allocate-dedicated-device-which-change-
// from-multi-allocatable": the reverse, a share held on a device that is
// now dedicated.
TableCase DedicatedHeldAsShare() {
  return {.name = "dedicated_held_as_share",
          .slices = {MultiSlice({Dev("dev-1").SmallRange(kCap, 2)})},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {CapacityClaim("c0", 1)},
          .held = {Share("x", kPool1, "dev-1", {{kCap, 1}})},
          .outcome = Outcome::kDoesNotFit};
}

// "allow-multiple-allocations-with-partitionable-device": shares of a
// multi-allocatable device that consumes counters; no capacities, so
// nothing in consumedCapacity, but share ids.
TableCase MultiWithCounters() {
  return {.name = "multi_with_counters",
          .slices = {Slice(
              "s1", kPool1, kDriverA,
              {Dev("dev-1").Multi().Consumes("set-1", {{"memory", 4 * kGi}})},
              {Counters("set-1", {{"memory", 8 * kGi}})})},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {OneDevice("c0", kClassA), OneDevice("c1", kClassA)},
          .want = {{{Share("req-0", kPool1, "dev-1")}},
                   {{Share("req-0", kPool1, "dev-1")}}}};
}

// "distinct-constraint-one-multi-allocatable-device-with-distinct-
// constraint": two shares of one device have equal attributes.
TableCase DistinctOneMultiDevice() {
  return {.name = "distinct_one_multi_device",
          .slices = {MultiSlice({Dev("dev-1").Multi().SmallRange(kCap, 2).Attr(
              "text", DeviceAttribute::String("v"))})},
          .classes = {MultiClass(kClassA, kDriverA, true)},
          .claims = {Claim("c0",
                           {Req("req-0", Ask(kClassA).Capacity(kCap, 1)),
                            Req("req-1", Ask(kClassA).Capacity(kCap, 1))},
                           {Distinct(Qualified("text"))})},
          .outcome = Outcome::kDoesNotFit};
}

// "distinct-constraint-two-multi-allocatable-devices-with-distinct-
// constraint": one share on each device (the upstream case puts them in
// two slices of one pool, which makes the pool incomplete; ours says 2).
TableCase DistinctTwoMultiDevices() {
  ResourceSlice first =
      MultiSlice({Dev("dev-1").Multi().SmallRange(kCap, 4).Attr(
          "text", DeviceAttribute::String("v1"))});
  ResourceSlice second = first;
  second.name = "s2";
  second.devices[0].name = "dev-2";
  second.devices[0].attributes["text"] = DeviceAttribute::String("v2");
  first.pool.resource_slice_count = second.pool.resource_slice_count = 2;
  return {.name = "distinct_two_multi_devices",
          .slices = {first, second},
          .classes = {MultiClass(kClassA, kDriverA, true)},
          .claims = {Claim("c0",
                           {Req("req-0", Ask(kClassA).Capacity(kCap, 2)),
                            Req("req-1", Ask(kClassA).Capacity(kCap, 2))},
                           {Distinct(Qualified("text"))})},
          .want = {{{Share("req-0", kPool1, "dev-1", {{kCap, 2}}),
                     Share("req-1", kPool1, "dev-2", {{kCap, 2}})}}}};
}

// ---------------------------------------------------------------------------
// Regressions: 1.34 bugs, done right.

// #133705: with count > 1, 1.34 checked the capacity of slice device
// <index within the request> instead of the candidate, so a full device
// at slice index 0 blocked every first share. Two 4-unit shares fit on
// dev-1 and dev-2.
TableCase Bug133705CountAboveOne() {
  const auto gpu = [](std::string name) -> Device {
    return Dev(std::move(name)).Multi().Capacity(kCap, 4);
  };
  return {.name = "bug_133705_count_above_one",
          .slices = {MultiSlice({gpu("dev-0"), gpu("dev-1"), gpu("dev-2")})},
          .classes = {MultiClass(kClassA, kDriverA, true)},
          .claims = {Claim(
              "c0", {Req("req-0", Ask(kClassA).Count(2).Capacity(kCap, 4))})},
          .held = {Share("x", kPool1, "dev-0", {{kCap, 4}})},
          .want = {{{Share("req-0", kPool1, "dev-1", {{kCap, 4}}),
                     Share("req-0", kPool1, "dev-2", {{kCap, 4}})}}}};
}

// 1.35's "consumable-capacity-multi-allocatable-device-with-allocated-
// capacity-next-device" (#133705 with count 1): dev-1 is full, dev-2 is
// checked as itself and fits.
TableCase Bug133705NextDevice() {
  return {.name = "bug_133705_next_device",
          .slices = {MultiSlice({Dev("dev-1").Multi().SmallRange(kCap, 2),
                                 Dev("dev-2").Multi().SmallRange(kCap, 2)})},
          .classes = {MultiClass(kClassA, kDriverA, true)},
          .claims = {CapacityClaim("c0", 2)},
          .held = {Share("x", kPool1, "dev-1", {{kCap, 2}})},
          .want = {{{Share("req-0", kPool1, "dev-2", {{kCap, 2}})}}}};
}

// distinctAttribute by value: 1.34 compared string pointers, so two
// devices publishing the same uuid passed as distinct. Here dev-1 and
// dev-2 carry the same value: the claim must take dev-3 with one of them.
TableCase BugDistinctComparesValues() {
  const auto gpu = [](std::string name, std::string uuid) -> Device {
    return Dev(std::move(name)).Attr("uuid", DeviceAttribute::String(uuid));
  };
  return {.name = "bug_distinct_compares_values",
          .slices = {Slice("s1", kPool1, kDriverA,
                           {gpu("dev-1", "GPU-same"), gpu("dev-2", "GPU-same"),
                            gpu("dev-3", "GPU-other")})},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {Claim("c0", {Req("req-0", Ask(kClassA).Count(2))},
                           {Distinct(Qualified("uuid"))})},
          .want = {{{Whole("req-0", kPool1, "dev-1"),
                     Whole("req-0", kPool1, "dev-3")}}}};
}

// The same without a third value: no two devices are distinct.
TableCase BugDistinctEqualValuesDoNotFit() {
  TableCase tc = BugDistinctComparesValues();
  tc.name = "bug_distinct_equal_values_do_not_fit";
  tc.slices[0].devices.pop_back();
  tc.outcome = Outcome::kDoesNotFit;
  tc.want.clear();
  return tc;
}

// #139034: a multi-allocatable device that consumes counters takes them
// once, not per share: three shares of a 4-unit device fit a set of 6
// (1.34 charged 12).
TableCase Bug139034CountersOncePerDevice() {
  return {
      .name = "bug_139034_counters_once_per_device",
      .slices = {Slice("s1", kPool1, kDriverA,
                       {Dev("dev-1").Multi().Consumes("set-1", {{"mem", 4}})},
                       {Counters("set-1", {{"mem", 6}})})},
      .classes = {Class(kClassA, kDriverA)},
      .claims = {OneDevice("c0", kClassA), OneDevice("c1", kClassA),
                 OneDevice("c2", kClassA)},
      .want = {{{Share("req-0", kPool1, "dev-1")}},
               {{Share("req-0", kPool1, "dev-1")}},
               {{Share("req-0", kPool1, "dev-1")}}}};
}

// #139034, rollback: req-0's first choice, a share of dev-1 (4 of 8
// counters), leaves too little for req-1's whole-GPU dev-2; undoing that
// share must give the counters back, so req-0 on dev-3 and req-1 on dev-2
// fit (1.34 kept the 4 charged and failed).
TableCase Bug139034RollsBackCounters() {
  const std::string not_whole =
      absl::StrCat("device.attributes[\"", kDriverA, "\"].kind != \"whole\"");
  const std::string whole =
      absl::StrCat("device.attributes[\"", kDriverA, "\"].kind == \"whole\"");
  return {.name = "bug_139034_rolls_back_counters",
          .slices = {Slice(
              "s1", kPool1, kDriverA,
              {Dev("dev-1")
                   .Multi()
                   .Attr("kind", DeviceAttribute::String("share"))
                   .Consumes("set-1", {{"mem", 4}}),
               Dev("dev-2")
                   .Attr("kind", DeviceAttribute::String("whole"))
                   .Consumes("set-1", {{"mem", 8}}),
               Dev("dev-3").Attr("kind", DeviceAttribute::String("plain"))},
              {Counters("set-1", {{"mem", 8}})})},
          .classes = {Class(kClassA, kDriverA)},
          .claims = {Claim("c0", {Req("req-0", Ask(kClassA).Where(not_whole)),
                                  Req("req-1", Ask(kClassA).Where(whole))})},
          .want = {{{Whole("req-0", kPool1, "dev-3"),
                     Whole("req-1", kPool1, "dev-2")}}}};
}

// 1.35's "allow-multiple-allocations-with-shared-device-counter-cross-
// cycle" (#139034/#139040): a share held from an earlier cycle charges
// its device's counters, so the other device of the set does not fit.
TableCase Bug139034HeldShareChargesCounters() {
  const auto part = [](std::string name, std::string mode) -> Device {
    return Dev(std::move(name))
        .Multi()
        .Capacity(kCap, 1)
        .Attr("mode", DeviceAttribute::String(std::move(mode)))
        .Consumes("set-1", {{kCap, 1}});
  };
  return {
      .name = "bug_139034_held_share_charges_counters",
      .slices = {Slice("s1", kPool1, kDriverA,
                       {part("dev-1", "a"), part("dev-2", "b")},
                       {Counters("set-1", {{kCap, 1}})})},
      .classes = {MultiClass(kClassA, kDriverA, true)},
      .claims = {Claim(
          "c0", {Req("req-0", Ask(kClassA).Capacity(kCap, 1).Where(
                                  absl::StrCat("device.attributes[\"", kDriverA,
                                               "\"].mode == \"b\"")))})},
      .held = {Share("x", kPool1, "dev-1", {{kCap, 1}})},
      .outcome = Outcome::kDoesNotFit,
      .reason = "set-1"};
}

std::vector<TableCase> BasicCases() {
  return {Simple(),
          OtherNode(),
          SmallAndLarge(),
          SmallAndLargeBacktrackRequests(),
          SmallAndLargeBestFit(),
          SmallAndLargeBacktrackClaims(),
          SplitAcrossPools(),
          ObsoleteGeneration(),
          DuplicateDeviceInvalidatesPool(),
          InvalidPoolOtherPoolUsable(),
          NoSlices(),
          NotEnoughDevices(),
          UnknownClass(),
          EmptyClassName(),
          NoClaims(),
          SeveralDrivers(),
          AlreadyAllocated(),
          MaxNumberOfDevices(),
          TooManyDevicesTotal(),
          InvalidCelInRequest(),
          InvalidCelInClass(),
          InvalidCelAllDevices()};
}

std::vector<TableCase> AllModeCases() {
  return {AllSingle(),
          AllMany(),
          AllIncompletePool(),
          AllPlusAnother(),
          AllPlusAnotherReversed(),
          AllManyPlusAnother(),
          AllManyPlusAnotherReversed(),
          AllNoSolution(),
          AllNoSolutionReversed(),
          AllWithoutDevices(),
          AllSomeAllocated()};
}

std::vector<TableCase> AdminCases() {
  return {AdminAllSomeAllocated(),   AdminAllSomeAllocating(),
          AdminCountSomeAllocated(), AdminSeparateClaimsShare(),
          AdminAfterNonAdmin(),      AdminOnAllocatedDevice()};
}

std::vector<TableCase> ConstraintCases() {
  return {MatchEveryKind(),
          MatchMissingAttribute(),
          MatchDiffers("numa"),
          MatchDiffers("text"),
          MatchDiffers("flag"),
          MatchDiffers("driverVersion"),
          MatchDiffersAllDevices(),
          MatchForOneRequest(),
          MatchRetry(),
          DistinctEveryKind()};
}

std::vector<TableCase> ConfigCases() {
  return {ConfigFromClass(), ConfigFromClaim(), ClassConfigPerClass()};
}

std::vector<TableCase> PrioritizedListCases() {
  return {PrioFirstUnavailable(),
          PrioNoneAvailable(),
          PrioClaimConfig(),
          PrioClassConfig(),
          PrioSubrequestsWithSelectors(),
          PrioConstraintOnParent(),
          PrioConstraintOnSubrequest(),
          PrioAllSomeAllocated(),
          PrioAllAfterAnotherRequest(),
          PrioAllWithoutDevices(),
          PrioMultiRequest(),
          PrioWithBacktracking(),
          PrioTooManyInFirst(),
          PrioResultLimit(),
          PrioResultLimitAll(),
          DistinctWithSubrequests()};
}

std::vector<TableCase> PartitionableCases() {
  return {PartSingle(),
          PartMultipleDevices(),
          PartPrioritizedList(),
          PartTwoCounterSets(),
          PartMultipleCounters(),
          PartMultiplePools(),
          PartUnusedCounter(),
          PartNoCountersLeft(),
          PartOverallocated(),
          PartAttributeSelector(),
          PartAll()};
}

std::vector<TableCase> ConsumableCapacityCases() {
  return {CcNoPolicyNoRequest(),
          CcNoPolicyNoRequestBlocks(),
          CcNoPolicyWithRequest(),
          CcPolicyDefault(),
          CcZeroDefault(),
          CcViolatesValidValues(),
          CcRangeRoundsUpToMin(),
          CcRangeRoundsUpToStep(),
          CcValidValues(),
          CcValidValuesRoundUp(),
          CcExceeded(),
          CcOverMax(),
          CcSomeRemaining(),
          CcNoneRemaining(),
          CcBacktrack(),
          CcBacktrackBestFit(),
          CcSubrequest(),
          CcAllSkipsMissingCapacity(),
          CcAllSkipsTooSmall(),
          CcAllAfterShareFits(),
          CcAllInUseFits(),
          CcAllAfterShareDoesNotFit(),
          CcAllSkipsFullDevice(),
          CcDedicatedRequestIsFilter(),
          CcDedicatedNotShared(),
          MultiExcludedByClass(),
          MultiHeldWhole(),
          DedicatedHeldAsShare(),
          MultiWithCounters(),
          DistinctOneMultiDevice(),
          DistinctTwoMultiDevices()};
}

std::vector<TableCase> RegressionCases() {
  return {Bug133705CountAboveOne(),           Bug133705NextDevice(),
          BugDistinctComparesValues(),        BugDistinctEqualValuesDoNotFit(),
          Bug139034CountersOncePerDevice(),   Bug139034RollsBackCounters(),
          Bug139034HeldShareChargesCounters()};
}

std::vector<TableCase> AllCases() {
  std::vector<TableCase> all;
  for (auto group : {BasicCases, AllModeCases, AdminCases, ConstraintCases,
                     ConfigCases, PrioritizedListCases, PartitionableCases,
                     ConsumableCapacityCases, RegressionCases}) {
    for (TableCase& tc : group()) all.push_back(std::move(tc));
  }
  return all;
}

// ---------------------------------------------------------------------------
// The runner.

class DraAllocatorTableTest : public ::testing::TestWithParam<TableCase> {
 protected:
  std::unique_ptr<NodeAllocator> Make(const TableCase& tc) {
    for (const DeviceClass& cls : tc.classes) classes_[cls.name] = cls;
    std::vector<const ResourceSlice*> slices;
    for (const ResourceSlice& slice : tc.slices) slices.push_back(&slice);
    AllocatorOptions options;
    options.order = tc.order;
    options.new_share_id = [this] { return absl::StrCat("share-", ++ids_); };
    auto made =
        NodeAllocator::Create(tc.node, slices, &classes_, &cel_, options);
    EXPECT_THAT(made.status(), IsOk());
    return made.ok() ? *std::move(made) : nullptr;
  }

  // Charges the allocations of claims allocated before the call.
  void Hold(NodeAllocator& allocator, const std::vector<Got>& held) {
    for (const Got& got : held) {
      DeviceResult result{got.request,
                          got.driver,
                          got.pool,
                          got.device,
                          got.has_share_id ? absl::StrCat("held-", ++ids_) : "",
                          {},
                          got.admin};
      for (const auto& [name, amount] : got.consumed) {
        result.consumed[name] = CapacityAmount{amount, QuantityFormat::kBinary};
      }
      AllocationResult allocation;
      allocation.results.push_back(std::move(result));
      allocation.node_name = GetParam().node;
      ASSERT_THAT(allocator.Charge(allocation), IsOk());
    }
  }

  std::map<std::string, DeviceClass> classes_;
  CelCache cel_;
  int ids_ = 0;
};

void ExpectAllocations(const TableCase& tc, const ClaimsVerdict& verdict) {
  ASSERT_EQ(verdict.allocations.size(), tc.want.size());
  std::set<std::string> share_ids;
  for (size_t c = 0; c < tc.want.size(); ++c) {
    SCOPED_TRACE(absl::StrCat("claim #", c));
    const AllocationResult& allocation = verdict.allocations[c];
    EXPECT_THAT(Flatten(allocation),
                UnorderedElementsAreArray(tc.want[c].devices));
    EXPECT_THAT(Configs(allocation),
                UnorderedElementsAreArray(tc.want[c].configs));
    EXPECT_EQ(allocation.node_name, tc.node);
    for (const DeviceResult& result : allocation.results) {
      if (result.share_id.empty()) continue;
      EXPECT_TRUE(share_ids.insert(result.share_id).second)
          << "share id " << result.share_id << " given twice";
    }
  }
}

// Committing the allocations and giving them back leaves the node as it
// was: the same claims get the same answer again.
void ExpectReleaseRestores(NodeAllocator& allocator,
                           const std::vector<const ResourceClaim*>& claims,
                           const ClaimsVerdict& first) {
  absl::StatusOr<ClaimsVerdict> committed =
      allocator.Allocate(claims, /*commit=*/true);
  ASSERT_TRUE(committed.ok() && committed->fits);
  for (const AllocationResult& allocation : committed->allocations) {
    allocator.Release(allocation);
  }
  absl::StatusOr<ClaimsVerdict> again =
      allocator.Allocate(claims, /*commit=*/false);
  ASSERT_TRUE(again.ok() && again->fits) << "after release";
  ASSERT_EQ(again->allocations.size(), first.allocations.size());
  for (size_t c = 0; c < first.allocations.size(); ++c) {
    EXPECT_EQ(Flatten(again->allocations[c]), Flatten(first.allocations[c]))
        << "claim #" << c << " after release";
  }
}

TEST_P(DraAllocatorTableTest, AllocatesAsKubernetes134Should) {
  const TableCase& tc = GetParam();
  std::unique_ptr<NodeAllocator> allocator = Make(tc);
  ASSERT_NE(allocator, nullptr);
  EXPECT_EQ(allocator->pools().invalid.size(), tc.invalid_pools);
  ASSERT_NO_FATAL_FAILURE(Hold(*allocator, tc.held));
  std::vector<const ResourceClaim*> claims;
  for (const ResourceClaim& claim : tc.claims) claims.push_back(&claim);

  absl::StatusOr<ClaimsVerdict> verdict =
      allocator->Allocate(claims, /*commit=*/false);
  if (tc.outcome == Outcome::kError) {
    ASSERT_FALSE(verdict.ok()) << "fits: " << verdict->fits;
    EXPECT_THAT(verdict.status().message(), HasSubstr(tc.reason));
    return;
  }
  ASSERT_THAT(verdict.status(), IsOk());
  if (tc.outcome == Outcome::kDoesNotFit) {
    EXPECT_FALSE(verdict->fits);
    EXPECT_THAT(verdict->reason, HasSubstr(tc.reason));
    return;
  }
  ASSERT_TRUE(verdict->fits) << verdict->reason;
  ExpectAllocations(tc, *verdict);
  ExpectReleaseRestores(*allocator, claims, *verdict);
}

INSTANTIATE_TEST_SUITE_P(DraAllocatorTable, DraAllocatorTableTest,
                         ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<TableCase>& info) {
                           return info.param.name;
                         });

}  // namespace
}  // namespace deviceshare::dra
