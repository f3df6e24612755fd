// File: dra/resource_slice.h
//
// The parts of Kubernetes' resource.k8s.io/v1 ResourceSlice (1.35 and
// later) that a GPU-sharing driver publishes, as value types: devices with
// typed attributes, consumable capacities with their request policies, and
// the shared counters that keep partitions (MIG placements) from
// overlapping.
// dra/slice_json.h writes them as the API's JSON; dra/slice_limits.h checks
// them against the API's validation limits.
//
// Units are integers: a capacity or counter value is a count of its unit
// (bytes for memory, percent for cores, one for slices and shares); the
// JSON writer picks the quantity suffix.
//
// Thread safety: value types.
#ifndef DEVICESHARE_DRA_RESOURCE_SLICE_H_
#define DEVICESHARE_DRA_RESOURCE_SLICE_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace deviceshare::dra {

// A device attribute: exactly one of int, bool, string or version (semver).
struct DeviceAttribute {
  enum class Kind { kInt, kBool, kString, kVersion };
  Kind kind = Kind::kString;
  int64_t int_value = 0;
  bool bool_value = false;
  std::string text;  // kString and kVersion

  static DeviceAttribute Int(int64_t value);
  static DeviceAttribute Bool(bool value);
  static DeviceAttribute String(std::string value);
  static DeviceAttribute Version(std::string semver);

  bool operator==(const DeviceAttribute& other) const = default;
};

// How the allocator rounds a claim's request for a capacity of a device
// that allows multiple allocations: `default_value` when the request omits
// it, else max(request, min) rounded up to min + n * step, at most max.
// Either a range (min/max/step) or a list of valid values.
struct RequestPolicy {
  int64_t default_value = 0;
  int64_t min = 0;
  int64_t max = 0;
  int64_t step = 0;                   // 0: no step
  std::vector<int64_t> valid_values;  // when set, min/max/step are unused

  bool operator==(const RequestPolicy& other) const = default;
};

// How a capacity's value is written as a Kubernetes quantity.
enum class QuantityFormat {
  kDecimal,  // "100"
  kBinary,   // bytes: "80Gi", "9984Mi"
};

struct DeviceCapacity {
  int64_t value = 0;
  QuantityFormat format = QuantityFormat::kDecimal;
  std::optional<RequestPolicy> policy;

  bool operator==(const DeviceCapacity& other) const = default;
};

struct Counter {
  int64_t value = 0;
  QuantityFormat format = QuantityFormat::kDecimal;

  bool operator==(const Counter& other) const = default;
};

// A set of counters shared by the devices of one physical GPU.
struct CounterSet {
  std::string name;  // DNS label, unique in the pool
  std::map<std::string, Counter> counters;

  bool operator==(const CounterSet& other) const = default;
};

// What one device takes from a counter set when it is allocated.
struct CounterConsumption {
  std::string counter_set;  // a set of this pool, in any of its slices
  std::map<std::string, Counter> counters;

  bool operator==(const CounterConsumption& other) const = default;
};

struct Device {
  std::string name;  // DNS label, unique in the pool
  // Keys are qualified names: "uuid" (the driver's domain) or
  // "resource.kubernetes.io/pcieRoot".
  std::map<std::string, DeviceAttribute> attributes;
  std::map<std::string, DeviceCapacity> capacity;
  std::vector<CounterConsumption> consumes_counters;
  bool allow_multiple_allocations = false;

  bool operator==(const Device& other) const = default;
};

struct ResourcePool {
  std::string name;
  int64_t generation = 0;
  int64_t resource_slice_count = 1;

  bool operator==(const ResourcePool& other) const = default;
};

struct ResourceSlice {
  std::string name;  // metadata.name
  std::string driver;
  std::string node_name;
  ResourcePool pool;
  // At most one of the two is non-empty (1.35+): counter sets and the
  // devices consuming them are published in different slices of a pool.
  std::vector<CounterSet> shared_counters;
  std::vector<Device> devices;

  bool operator==(const ResourceSlice& other) const = default;
};

// The devices one GPU contributes to a pool, with the counter set they
// consume (none for a GPU that is not partitioned). The node agent puts
// the counter sets and the devices into different slices of the pool, as
// 1.35 and later require.
struct GpuDevices {
  std::vector<CounterSet> counter_sets;
  std::vector<Device> devices;

  bool operator==(const GpuDevices& other) const = default;
};

// How a backend names and shapes a GPU's devices.
struct DeviceNaming {
  // The name of the GPU's own device, e.g. "gpu-0"; partitions are named
  // after it ("gpu-0-mig-1g10gb-3", counter set "gpu-0-counters").
  std::string gpu_device;
  // HAMi's DRA driver shape (hami-core-gpu.project-hami.io): its capacity
  // names, ranges and defaults exactly, nothing of ours added.
  bool hami_compatible = false;
};

}  // namespace deviceshare::dra

#endif  // DEVICESHARE_DRA_RESOURCE_SLICE_H_
