// File: dra/node_pools.h
//
// GatherPools: the device pools one node can use, from the ResourceSlices
// that reach it, as the allocator sees them -- in a deterministic order
// (pools by driver then name, slices by name, devices in slice order),
// where the 1.34 allocator walks a Go map and so picks a different device
// from run to run.
//
// Per pool only the slices of the highest generation count (a publisher
// writes a new generation before it deletes the old one). A pool whose
// slice count differs from its resourceSliceCount is incomplete: usable
// for ExactCount, refused for allocationMode All. A pool with two devices
// of one name is invalid and left out with its reason; unlike 1.34, which
// fails the whole allocation, the other pools stay usable.
//
// Thread safety: pure function; the result points into `slices`, which
// must outlive it.
#ifndef DEVICESHARE_DRA_NODE_POOLS_H_
#define DEVICESHARE_DRA_NODE_POOLS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "deviceshare/dra/resource_slice.h"

namespace deviceshare::dra {

struct PoolDevice {
  const ResourceSlice* slice = nullptr;
  const Device* device = nullptr;
};

struct NodePool {
  std::string driver;
  std::string name;
  int64_t generation = 0;
  bool complete = true;
  std::vector<const ResourceSlice*> slices;  // by name
  std::vector<PoolDevice> devices;
};

struct NodePools {
  std::vector<NodePool> pools;       // by (driver, name)
  std::vector<std::string> invalid;  // "driver/pool: why", left out
};

NodePools GatherPools(const std::vector<const ResourceSlice*>& slices);

}  // namespace deviceshare::dra

#endif  // DEVICESHARE_DRA_NODE_POOLS_H_
