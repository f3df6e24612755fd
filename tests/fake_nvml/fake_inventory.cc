// Parses the fake NVML's inventory file (see fake_world.h).
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>

#include "fake_world.h"

namespace fake_nvml {
namespace {

using Json = nlohmann::json;

Json FromYaml(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      Json object = Json::object();
      for (const auto& item : node) {
        object[item.first.as<std::string>()] = FromYaml(item.second);
      }
      return object;
    }
    case YAML::NodeType::Sequence: {
      Json array = Json::array();
      for (const auto& item : node) array.push_back(FromYaml(item));
      return array;
    }
    case YAML::NodeType::Scalar: {
      const std::string text = node.Scalar();
      if (node.Tag() == "!") return text;  // quoted
      if (text == "true" || text == "True") return true;
      if (text == "false" || text == "False") return false;
      if (text == "null" || text == "~") return nullptr;
      try {
        size_t used = 0;
        const long long value = std::stoll(text, &used, 0);
        if (used == text.size()) return value;
      } catch (...) {
      }
      return text;
    }
    default:
      return nullptr;
  }
}

// The H100-80GB table of docs/reference/mig-mps-nvml.md §1.2/§1.3.
std::vector<Profile> H100Profiles() {
  return {
      {0, 19, "1g.10gb", 1, 7, 16, 9984, 1, {0, 1, 2, 3, 4, 5, 6}},
      {1, 14, "2g.20gb", 2, 3, 32, 20096, 2, {0, 2, 4}},
      {2, 9, "3g.40gb", 3, 2, 60, 40448, 4, {0, 4}},
      {3, 5, "4g.40gb", 4, 1, 64, 40448, 4, {0}},
      {4, 0, "7g.80gb", 7, 1, 132, 81152, 8, {0}},
      {7, 20, "1g.10gb+me", 1, 1, 16, 9984, 1, {0, 1, 2, 3, 4, 5, 6}},
      {9, 15, "1g.20gb", 1, 4, 26, 20096, 2, {0, 2, 4, 6}},
  };
}

bool EightSlicePart(unsigned device_id) {
  static const std::set<unsigned> kParts = {
      0x20B0, 0x20B1, 0x20F1, 0x20F6, 0x20B2, 0x20B5, 0x20F3, 0x20F5, 0x2330,
      0x2331, 0x2322, 0x2324, 0x2321, 0x233A, 0x2342, 0x233D, 0x20B6, 0x2329,
      0x2348, 0x2335, 0x233B, 0x2901, 0x2941, 0x3182, 0x31C2};
  return kParts.count(device_id) > 0;
}

struct Reader {
  std::string& error;

  bool Fail(const std::string& path, const std::string& what) {
    error = path + ": " + what;
    return false;
  }
  bool Unsigned(const Json& value, const std::string& path,
                unsigned long long& out) {
    if (value.is_number_unsigned()) {
      out = value.get<unsigned long long>();
      return true;
    }
    if (value.is_number_integer() && value.get<long long>() >= 0) {
      out = static_cast<unsigned long long>(value.get<long long>());
      return true;
    }
    if (value.is_string()) {
      try {
        size_t used = 0;
        const std::string text = value.get<std::string>();
        out = std::stoull(text, &used, 0);
        if (used == text.size()) return true;
      } catch (...) {
      }
    }
    return Fail(path, "expected a non-negative integer, got " + value.dump());
  }
  bool Bool(const Json& value, const std::string& path, bool& out) {
    if (!value.is_boolean()) return Fail(path, "expected true or false");
    out = value.get<bool>();
    return true;
  }
  bool String(const Json& value, const std::string& path, std::string& out) {
    if (!value.is_string()) return Fail(path, "expected a string");
    out = value.get<std::string>();
    return true;
  }

  bool ParseProfile(const Json& entry, const std::string& path,
                    unsigned position, Profile& profile) {
    if (!entry.is_object()) return Fail(path, "expected a mapping");
    profile.index = position;
    for (const auto& [key, value] : entry.items()) {
      const std::string at = path + "." + key;
      unsigned long long n = 0;
      if (key == "name") {
        if (!String(value, at, profile.name)) return false;
        if (profile.name.rfind("MIG ", 0) == 0) profile.name.erase(0, 4);
        continue;
      }
      if (key == "starts") {
        if (!value.is_array()) return Fail(at, "expected a list");
        for (size_t i = 0; i < value.size(); ++i) {
          if (!Unsigned(value[i], at + "[" + std::to_string(i) + "]", n)) {
            return false;
          }
          profile.starts.push_back(static_cast<unsigned>(n));
        }
        continue;
      }
      if (!Unsigned(value, at, n)) return false;
      if (key == "id") {
        profile.id = static_cast<unsigned>(n);
      } else if (key == "index") {
        profile.index = static_cast<unsigned>(n);
      } else if (key == "slices") {
        profile.slices = static_cast<unsigned>(n);
      } else if (key == "instances") {
        profile.instances = static_cast<unsigned>(n);
      } else if (key == "sm") {
        profile.sm = static_cast<unsigned>(n);
      } else if (key == "memory_mib") {
        profile.memory_mib = n;
      } else if (key == "memory_slices") {
        profile.memory_slices = static_cast<unsigned>(n);
      } else {
        return Fail(at, "unknown key");
      }
    }
    return true;
  }

  bool ParseGpu(const Json& entry, const std::string& path, unsigned position,
                Gpu& gpu) {
    if (!entry.is_object()) return Fail(path, "expected a mapping");
    gpu.index = position;
    bool mig_profiles_given = false;
    for (const auto& [key, value] : entry.items()) {
      const std::string at = path + "." + key;
      unsigned long long n = 0;
      if (key == "uuid") {
        if (!String(value, at, gpu.uuid)) return false;
      } else if (key == "model") {
        if (!String(value, at, gpu.name)) return false;
      } else if (key == "pci_bus_id") {
        if (!String(value, at, gpu.bus_id)) return false;
      } else if (key == "index" || key == "memory_mib" || key == "sm_count" ||
                 key == "pci_device_id" || key == "numa") {
        if (!Unsigned(value, at, n)) return false;
        if (key == "index") gpu.index = static_cast<unsigned>(n);
        if (key == "memory_mib") gpu.memory_mib = n;
        if (key == "sm_count") gpu.sm_count = static_cast<unsigned>(n);
        if (key == "pci_device_id")
          gpu.pci_device_id = static_cast<unsigned>(n);
        if (key == "numa") gpu.numa = static_cast<int>(n);
      } else if (key == "cc") {
        if (!value.is_array() || value.size() != 2 ||
            !value[0].is_number_integer() || !value[1].is_number_integer()) {
          return Fail(at, "expected [major, minor]");
        }
        gpu.cc = {value[0].get<int>(), value[1].get<int>()};
      } else if (key == "compute_capability") {
        std::string text;
        if (!String(value, at, text)) return false;
        int major = 0;
        int minor = 0;
        if (std::sscanf(text.c_str(), "%d.%d", &major, &minor) == 2 &&
            major > 0) {
          gpu.cc = {major, minor};
        }
      } else if (key == "mig_capable") {
        if (!Bool(value, at, gpu.mig_capable)) return false;
      } else if (key == "mig_mode" || key == "mig_enabled") {
        if (!Bool(value, at, gpu.mig_mode)) return false;
      } else if (key == "lost") {
        if (!Bool(value, at, gpu.lost)) return false;
      } else if (key == "mig_profiles") {
        if (!value.is_array()) return Fail(at, "expected a list");
        mig_profiles_given = true;
        for (size_t i = 0; i < value.size(); ++i) {
          Profile profile;
          if (!ParseProfile(value[i], at + "[" + std::to_string(i) + "]",
                            static_cast<unsigned>(i), profile)) {
            return false;
          }
          gpu.profiles.push_back(std::move(profile));
        }
      } else if (key == "nvlinks") {
        if (!value.is_object()) return Fail(at, "expected {peer_index: lanes}");
        for (const auto& [peer, lanes] : value.items()) {
          unsigned long long peer_index = 0;
          if (!Unsigned(Json(peer), at + "." + peer, peer_index) ||
              !Unsigned(lanes, at + "." + peer, n)) {
            return false;
          }
          gpu.nvlinks[static_cast<unsigned>(peer_index)] =
              static_cast<unsigned>(n);
        }
      } else if (key == "xid") {
        if (!value.is_array()) return Fail(at, "expected a list of xids");
        for (size_t i = 0; i < value.size(); ++i) {
          if (!Unsigned(value[i], at + "[" + std::to_string(i) + "]", n)) {
            return false;
          }
          gpu.xids.push_back(n);
        }
      } else if (key == "health" || key == "health_reason" || key == "links" ||
                 key == "mig_instances") {
        // What `discover --output json` adds; not NVML's to know.
      } else {
        return Fail(at, "unknown key");
      }
    }
    if (gpu.uuid.empty()) return Fail(path + ".uuid", "is missing");
    if (gpu.bus_id.empty()) {
      char bus[32];
      std::snprintf(bus, sizeof(bus), "00000000:%02X:00.0",
                    0x10 + gpu.index % 0xE0);
      gpu.bus_id = bus;
    }
    if (gpu.mig_capable && !mig_profiles_given &&
        EightSlicePart(gpu.pci_device_id)) {
      gpu.profiles = H100Profiles();
    }
    return true;
  }
};

}  // namespace

bool ParseInventory(const std::string& text, std::vector<Gpu>& gpus,
                    std::string& error) {
  Json document = Json::parse(text, nullptr, false);
  if (document.is_discarded()) {
    try {
      document = FromYaml(YAML::Load(text));
    } catch (const std::exception& e) {
      error = std::string("not JSON or YAML: ") + e.what();
      return false;
    }
  }
  if (!document.is_object() || !document.contains("gpus") ||
      !document["gpus"].is_array()) {
    error = "expected a mapping with a list `gpus`";
    return false;
  }
  Reader reader{error};
  gpus.clear();
  const Json& list = document["gpus"];
  for (size_t i = 0; i < list.size(); ++i) {
    Gpu gpu;
    if (!reader.ParseGpu(list[i], "gpus[" + std::to_string(i) + "]",
                         static_cast<unsigned>(i), gpu)) {
      return false;
    }
    gpus.push_back(std::move(gpu));
  }
  std::sort(gpus.begin(), gpus.end(),
            [](const Gpu& a, const Gpu& b) { return a.index < b.index; });
  for (size_t i = 0; i < gpus.size(); ++i) {
    if (gpus[i].index != i) {
      error = "gpus: indexes must be 0.." + std::to_string(gpus.size() - 1) +
              ", each once";
      return false;
    }
  }
  return true;
}

}  // namespace fake_nvml
