#include "deviceshare/dra/node_pools.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"

namespace deviceshare::dra {

NodePools GatherPools(const std::vector<const ResourceSlice*>& slices) {
  std::map<std::pair<std::string, std::string>, NodePool> by_key;
  for (const ResourceSlice* slice : slices) {
    NodePool& pool = by_key[{slice->driver, slice->pool.name}];
    if (pool.slices.empty() || slice->pool.generation > pool.generation) {
      pool.driver = slice->driver;
      pool.name = slice->pool.name;
      pool.generation = slice->pool.generation;
      pool.slices.clear();
    }
    if (slice->pool.generation == pool.generation) {
      pool.slices.push_back(slice);
    }
  }
  NodePools out;
  for (auto& [key, pool] : by_key) {
    std::sort(pool.slices.begin(), pool.slices.end(),
              [](const ResourceSlice* a, const ResourceSlice* b) {
                return a->name < b->name;
              });
    const int64_t expected = pool.slices.front()->pool.resource_slice_count;
    pool.complete = static_cast<int64_t>(pool.slices.size()) == expected;
    std::set<std::string> names;
    std::string duplicate;
    for (const ResourceSlice* slice : pool.slices) {
      for (const Device& device : slice->devices) {
        if (!names.insert(device.name).second) duplicate = device.name;
        pool.devices.push_back(PoolDevice{slice, &device});
      }
    }
    if (!duplicate.empty()) {
      out.invalid.push_back(absl::StrCat(pool.driver, "/", pool.name,
                                         ": device ", duplicate,
                                         " is published twice"));
      continue;
    }
    out.pools.push_back(std::move(pool));
  }
  return out;
}

}  // namespace deviceshare::dra
