// NodeAllocator (lib/deviceshare/dra) micro benchmarks: one share on an
// 8-GPU node, and the two unsatisfiable cases the 1.34 allocator searches
// exhaustively (kubernetes #131730): 32 requests for 31 devices, and a
// matchAttribute no two of 128 devices satisfy, on 8 nodes.
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "deviceshare/dra/node_allocator.h"

namespace {

using namespace ::deviceshare::dra;  // NOLINT: a benchmark file

constexpr int64_t kGiB = int64_t{1} << 30;

Device Gpu(int index, bool shared, std::string root) {
  Device gpu;
  gpu.name = absl::StrCat("gpu-", index);
  gpu.allow_multiple_allocations = shared;
  gpu.attributes["uuid"] = DeviceAttribute::String(absl::StrCat("GPU-", index));
  gpu.attributes["resource.kubernetes.io/pcieRoot"] =
      DeviceAttribute::String(std::move(root));
  if (shared) {
    gpu.capacity["memory"] = {
        80 * kGiB, QuantityFormat::kBinary,
        RequestPolicy{80 * kGiB, 1 << 20, 80 * kGiB, 1 << 20, {}}};
    gpu.capacity["cores"] = {100, QuantityFormat::kDecimal,
                             RequestPolicy{100, 1, 100, 1, {}}};
  }
  return gpu;
}

ResourceSlice Slice(std::vector<Device> devices) {
  ResourceSlice slice;
  slice.name = "s";
  slice.driver = "gpu.deviceshare.io";
  slice.node_name = "n";
  slice.pool = {"n", 1, 1};
  slice.devices = std::move(devices);
  return slice;
}

struct Fixture {
  std::map<std::string, DeviceClass> classes{
      {"gpu", DeviceClass{
                  "gpu", {"device.driver == \"gpu.deviceshare.io\""}, {}, ""}}};
  CelCache cel;
  int ids = 0;

  std::unique_ptr<NodeAllocator> Make(const ResourceSlice& slice) {
    AllocatorOptions options;
    options.new_share_id = [this] { return absl::StrCat("s-", ++ids); };
    return *NodeAllocator::Create("n", {&slice}, &classes, &cel, options);
  }
};

ResourceClaim Claim(int requests, int64_t count, ExactRequest base,
                    std::vector<DeviceConstraint> constraints = {}) {
  ResourceClaim claim;
  for (int i = 0; i < requests; ++i) {
    DeviceRequest r;
    r.name = absl::StrCat("r", i);
    r.exactly = base;
    r.exactly->count = count;
    claim.spec.requests.push_back(r);
  }
  claim.spec.constraints = std::move(constraints);
  return claim;
}

void BM_OneShareOnEightGpus(benchmark::State& state) {
  Fixture f;
  std::vector<Device> devices;
  for (int i = 0; i < 8; ++i) devices.push_back(Gpu(i, true, "pci0000:00"));
  const ResourceSlice slice = Slice(devices);
  auto allocator = f.Make(slice);
  ExactRequest share;
  share.device_class = "gpu";
  share.capacity = {{"memory", 4 * kGiB}, {"cores", 30}};
  const ResourceClaim claim = Claim(1, 1, share);
  for (auto _ : state) {
    benchmark::DoNotOptimize(allocator->Allocate({&claim}, false));
  }
}
BENCHMARK(BM_OneShareOnEightGpus);

void BM_ThirtyTwoRequestsForThirtyOneDevices(benchmark::State& state) {
  Fixture f;
  std::vector<Device> devices;
  for (int i = 0; i < 31; ++i) devices.push_back(Gpu(i, false, "pci0000:00"));
  const ResourceSlice slice = Slice(devices);
  auto allocator = f.Make(slice);
  ExactRequest whole;
  whole.device_class = "gpu";
  const ResourceClaim claim = Claim(32, 1, whole);
  for (auto _ : state) {
    benchmark::DoNotOptimize(allocator->Allocate({&claim}, false));
  }
}
BENCHMARK(BM_ThirtyTwoRequestsForThirtyOneDevices);

// Eight nodes, each 128 devices on distinct PCIe roots, a claim for two
// devices on one root: no node fits.
void BM_ImpossibleMatchOnEightNodes(benchmark::State& state) {
  Fixture f;
  std::vector<ResourceSlice> slices;
  for (int n = 0; n < 8; ++n) {
    std::vector<Device> devices;
    for (int i = 0; i < 128; ++i) {
      devices.push_back(Gpu(i, false, absl::StrCat("pci", n, ":", i)));
    }
    slices.push_back(Slice(devices));
  }
  std::vector<std::unique_ptr<NodeAllocator>> nodes;
  for (const ResourceSlice& slice : slices) nodes.push_back(f.Make(slice));
  ExactRequest two;
  two.device_class = "gpu";
  const ResourceClaim claim =
      Claim(1, 2, two,
            {DeviceConstraint{{"r0"}, "resource.kubernetes.io/pcieRoot", ""}});
  for (auto _ : state) {
    for (auto& node : nodes) {
      benchmark::DoNotOptimize(node->Allocate({&claim}, false));
    }
  }
}
BENCHMARK(BM_ImpossibleMatchOnEightNodes);

}  // namespace
