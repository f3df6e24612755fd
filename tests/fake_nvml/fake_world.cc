// The fake NVML's world: inventory and MIG state files (see fake_world.h).
#include "fake_world.h"

#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace fake_nvml {
namespace {

using Json = nlohmann::json;

// Tags of the handle kinds in bits 24..31; the rest index into the world.
constexpr uintptr_t kDeviceTag = 0x11;
constexpr uintptr_t kMigTag = 0x12;
constexpr uintptr_t kGpuInstanceTag = 0x13;
constexpr uintptr_t kComputeInstanceTag = 0x14;

struct FileStamp {
  std::string path;
  long long mtime_ns = -1;
  long long size = -1;
  unsigned long long inode = 0;
  bool operator==(const FileStamp& other) const = default;
};

FileStamp Stamp(const std::string& path) {
  FileStamp stamp;
  stamp.path = path;
  struct stat st;
  if (!path.empty() && stat(path.c_str(), &st) == 0) {
    stamp.mtime_ns = static_cast<long long>(st.st_mtim.tv_sec) * 1000000000 +
                     st.st_mtim.tv_nsec;
    stamp.size = st.st_size;
    stamp.inode = st.st_ino;
  }
  return stamp;
}

bool ReadFile(const std::string& path, std::string& text) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return false;
  std::ostringstream out;
  out << file.rdbuf();
  text = out.str();
  return true;
}

struct World {
  FileStamp inventory_stamp;
  bool inventory_loaded = false;
  std::vector<Gpu> gpus;
  std::map<std::string, std::deque<unsigned long long>> xids;

  FileStamp state_stamp;
  std::map<std::string, std::vector<GpuInstance>> instances;
};

World& TheWorld() {
  static World* world = new World();
  return *world;
}

std::string EnvOrEmpty(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? value : "";
}

void LoadState(World& world, const FileStamp& stamp) {
  world.state_stamp = stamp;
  world.instances.clear();
  std::string text;
  if (stamp.path.empty() || !ReadFile(stamp.path, text)) return;
  Json document = Json::parse(text, nullptr, false);
  if (document.is_discarded() || !document.is_object()) {
    std::fprintf(stderr, "fake NVML: state file %s is not JSON; ignored\n",
                 stamp.path.c_str());
    return;
  }
  try {
    const Json gpus = document.value("gpus", Json::object());
    for (const auto& [uuid, list] : gpus.items()) {
      std::vector<GpuInstance>& instances = world.instances[uuid];
      for (const Json& entry : list) {
        GpuInstance gi;
        gi.id = entry.at("id").get<unsigned>();
        gi.profile_id = entry.at("profile_id").get<unsigned>();
        gi.start = entry.at("start").get<unsigned>();
        gi.size = entry.at("size").get<unsigned>();
        for (const Json& c : entry.value("compute_instances", Json::array())) {
          gi.cis.push_back(
              {c.at("id").get<unsigned>(), c.at("profile_id").get<unsigned>(),
               c.at("start").get<unsigned>(), c.at("size").get<unsigned>()});
        }
        instances.push_back(std::move(gi));
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "fake NVML: state file %s: %s; ignored\n",
                 stamp.path.c_str(), e.what());
    world.instances.clear();
  }
}

}  // namespace

std::mutex& WorldMutex() {
  static std::mutex* mu = new std::mutex();
  return *mu;
}

int& InitCount() {
  static int count = 0;
  return count;
}

bool Refresh(std::string* error) {
  World& world = TheWorld();
  const FileStamp inventory = Stamp(EnvOrEmpty("FAKE_NVML_INVENTORY"));
  if (!world.inventory_loaded || !(inventory == world.inventory_stamp)) {
    std::string text;
    std::string why;
    std::vector<Gpu> gpus;
    if (inventory.path.empty()) {
      why = "FAKE_NVML_INVENTORY is not set";
    } else if (!ReadFile(inventory.path, text)) {
      why = "cannot read " + inventory.path;
    } else if (!ParseInventory(text, gpus, why)) {
      why = inventory.path + ": " + why;
    }
    if (!why.empty()) {
      std::fprintf(stderr, "fake NVML: %s\n", why.c_str());
      if (error != nullptr) *error = why;
      return false;
    }
    world.inventory_stamp = inventory;
    world.inventory_loaded = true;
    world.gpus = std::move(gpus);
    world.xids.clear();
    for (const Gpu& gpu : world.gpus) {
      world.xids[gpu.uuid].assign(gpu.xids.begin(), gpu.xids.end());
    }
  }
  const FileStamp state = Stamp(EnvOrEmpty("FAKE_NVML_STATE"));
  if (!(state == world.state_stamp)) LoadState(world, state);
  return true;
}

const std::vector<Gpu>& Gpus() { return TheWorld().gpus; }

std::vector<GpuInstance>& Instances(const std::string& uuid) {
  return TheWorld().instances[uuid];
}

void SaveState() {
  World& world = TheWorld();
  const std::string path = EnvOrEmpty("FAKE_NVML_STATE");
  if (path.empty()) return;
  Json gpus = Json::object();
  for (const auto& [uuid, list] : world.instances) {
    if (list.empty()) continue;
    Json entries = Json::array();
    for (const GpuInstance& gi : list) {
      Json cis = Json::array();
      for (const ComputeInstance& ci : gi.cis) {
        cis.push_back({{"id", ci.id},
                       {"profile_id", ci.profile_id},
                       {"start", ci.start},
                       {"size", ci.size}});
      }
      entries.push_back({{"id", gi.id},
                         {"profile_id", gi.profile_id},
                         {"start", gi.start},
                         {"size", gi.size},
                         {"compute_instances", cis}});
    }
    gpus[uuid] = entries;
  }
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << Json{{"gpus", gpus}}.dump(2) << "\n";
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::fprintf(stderr, "fake NVML: cannot write %s\n", path.c_str());
  }
  // Our own write is not a change to reload.
  world.state_stamp = Stamp(path);
}

std::deque<unsigned long long>& PendingXids(const std::string& uuid) {
  return TheWorld().xids[uuid];
}

nvmlDevice_t DeviceHandle(unsigned gpu) {
  return reinterpret_cast<nvmlDevice_t>((kDeviceTag << 24) | gpu << 16);
}
nvmlDevice_t MigDeviceHandle(unsigned gpu, unsigned gi, unsigned ci) {
  return reinterpret_cast<nvmlDevice_t>((kMigTag << 24) | gpu << 16 | gi << 8 |
                                        ci);
}
nvmlGpuInstance_t GpuInstanceHandle(unsigned gpu, unsigned gi) {
  return reinterpret_cast<nvmlGpuInstance_t>((kGpuInstanceTag << 24) |
                                             gpu << 16 | gi << 8);
}
nvmlComputeInstance_t ComputeInstanceHandle(unsigned gpu, unsigned gi,
                                            unsigned ci) {
  return reinterpret_cast<nvmlComputeInstance_t>((kComputeInstanceTag << 24) |
                                                 gpu << 16 | gi << 8 | ci);
}

namespace {

struct Decoded {
  uintptr_t tag = 0;
  unsigned gpu = 0, gi = 0, ci = 0;
};

Decoded Decode(const void* handle) {
  const uintptr_t value = reinterpret_cast<uintptr_t>(handle);
  Decoded d;
  if ((value >> 32) != 0) return d;  // not ours
  d.tag = (value >> 24) & 0xFF;
  d.gpu = (value >> 16) & 0xFF;
  d.gi = (value >> 8) & 0xFF;
  d.ci = value & 0xFF;
  return d;
}

bool Resolve(const Decoded& d, bool want_ci, MigRef& out) {
  const std::vector<Gpu>& gpus = Gpus();
  if (d.gpu >= gpus.size()) return false;
  out.gpu = &gpus[d.gpu];
  for (GpuInstance& gi : Instances(out.gpu->uuid)) {
    if (gi.id != d.gi) continue;
    out.gi = &gi;
    if (!want_ci) return true;
    for (ComputeInstance& ci : gi.cis) {
      if (ci.id == d.ci) {
        out.ci = &ci;
        return true;
      }
    }
    return false;
  }
  return false;
}

}  // namespace

const Gpu* FullGpu(nvmlDevice_t device) {
  const Decoded d = Decode(device);
  if (d.tag != kDeviceTag || d.gi != 0 || d.ci != 0) return nullptr;
  const std::vector<Gpu>& gpus = Gpus();
  return d.gpu < gpus.size() ? &gpus[d.gpu] : nullptr;
}

bool MigDevice(nvmlDevice_t device, MigRef& out) {
  const Decoded d = Decode(device);
  return d.tag == kMigTag && Resolve(d, true, out);
}

bool GpuInstanceOf(nvmlGpuInstance_t handle, MigRef& out) {
  const Decoded d = Decode(handle);
  return d.tag == kGpuInstanceTag && d.ci == 0 && Resolve(d, false, out);
}

bool ComputeInstanceOf(nvmlComputeInstance_t handle, MigRef& out) {
  const Decoded d = Decode(handle);
  return d.tag == kComputeInstanceTag && Resolve(d, true, out);
}

const Profile* ProfileById(const Gpu& gpu, unsigned id) {
  for (const Profile& profile : gpu.profiles) {
    if (profile.id == id) return &profile;
  }
  return nullptr;
}

std::string MigUuid(const std::string& gpu_uuid, unsigned gi, unsigned ci) {
  auto fnv = [](const std::string& text, uint64_t seed) {
    uint64_t hash = seed;
    for (unsigned char c : text) {
      hash ^= c;
      hash *= 1099511628211ull;
    }
    return hash;
  };
  const std::string key =
      gpu_uuid + "/" + std::to_string(gi) + "/" + std::to_string(ci);
  const uint64_t a = fnv(key, 14695981039346656037ull);
  const uint64_t b = fnv(key, a ^ 0x9E3779B97F4A7C15ull);
  char text[64];
  std::snprintf(
      text, sizeof(text), "MIG-%08x-%04x-%04x-%04x-%012llx",
      static_cast<unsigned>(a >> 32), static_cast<unsigned>((a >> 16) & 0xFFFF),
      static_cast<unsigned>(a & 0xFFFF), static_cast<unsigned>(b >> 48),
      static_cast<unsigned long long>(b & 0xFFFFFFFFFFFFull));
  return text;
}

nvmlReturn_t CopyString(const std::string& text, char* buffer,
                        unsigned length) {
  if (buffer == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (length < text.size() + 1) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(buffer, text.c_str(), text.size() + 1);
  return NVML_SUCCESS;
}

}  // namespace fake_nvml
