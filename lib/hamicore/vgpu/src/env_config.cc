#include "env_config.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace deviceshare::vgpu {
namespace {

std::vector<std::string> SplitList(const char* text) {
  std::vector<std::string> out;
  if (text == nullptr) return out;
  std::string current;
  for (const char* p = text;; ++p) {
    if (*p == ',' || *p == '\0') {
      size_t begin = current.find_first_not_of(" \t");
      size_t end = current.find_last_not_of(" \t");
      out.push_back(begin == std::string::npos
                        ? std::string()
                        : current.substr(begin, end - begin + 1));
      current.clear();
      if (*p == '\0') break;
    } else {
      current.push_back(*p);
    }
  }
  return out;
}

std::string Describe(const char* name, const char* value, const char* why) {
  std::string message = name;
  message += "=\"";
  message += value;
  message += "\": ";
  message += why;
  return message;
}

bool ParsePercent(const char* text, int* out) {
  if (text == nullptr || *text == '\0') return false;
  errno = 0;
  char* end = nullptr;
  long value = std::strtol(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || value < 0) return false;
  *out = value >= 100 ? 0 : static_cast<int>(value);
  return true;
}

}  // namespace

std::optional<uint64_t> ParseByteSize(const char* text) {
  if (text == nullptr) return std::nullopt;
  size_t length = std::strlen(text);
  if (length == 0 || length > 32) return std::nullopt;
  char digits[40];
  std::memcpy(digits, text, length + 1);
  int shift = 0;
  switch (digits[length - 1]) {
    case 'k':
    case 'K':
      shift = 10;
      break;
    case 'm':
    case 'M':
      shift = 20;
      break;
    case 'g':
    case 'G':
      shift = 30;
      break;
    default:
      break;
  }
  if (shift != 0) digits[--length] = '\0';
  if (length == 0 || digits[0] == '-' || digits[0] == '+') return std::nullopt;
  errno = 0;
  char* end = nullptr;
  unsigned long long value = std::strtoull(digits, &end, 0);
  if (errno != 0 || end == digits || *end != '\0') return std::nullopt;
  if (shift != 0 && value > (~0ULL >> shift)) return std::nullopt;
  return static_cast<uint64_t>(value) << shift;
}

bool VgpuConfig::AnyMemoryLimit() const {
  for (uint64_t limit : memory_limit_bytes) {
    if (limit != 0) return true;
  }
  return false;
}

bool VgpuConfig::AnySmLimit() const {
  if (core_policy == CorePolicy::kDisable) return false;
  for (int percent : sm_limit_percent) {
    if (percent != 0) return true;
  }
  return false;
}

VgpuConfig ReadConfig(EnvLookup lookup) {
  VgpuConfig config;
  char name[64];

  uint64_t global_memory = 0;
  if (const char* text = lookup("CUDA_DEVICE_MEMORY_LIMIT")) {
    if (auto bytes = ParseByteSize(text)) {
      global_memory = *bytes;
    } else {
      config.errors.push_back(Describe("CUDA_DEVICE_MEMORY_LIMIT", text,
                                       "not a size (want e.g. 4g, 1024m)"));
    }
  }
  int global_sm = 0;
  if (const char* text = lookup("CUDA_DEVICE_SM_LIMIT")) {
    if (!ParsePercent(text, &global_sm)) {
      config.errors.push_back(
          Describe("CUDA_DEVICE_SM_LIMIT", text, "not a percent"));
    }
  }
  for (int i = 0; i < kMaxDevices; ++i) {
    config.memory_limit_bytes[i] = global_memory;
    std::snprintf(name, sizeof(name), "CUDA_DEVICE_MEMORY_LIMIT_%d", i);
    if (const char* text = lookup(name)) {
      if (auto bytes = ParseByteSize(text)) {
        config.memory_limit_bytes[i] = *bytes;
      } else {
        config.errors.push_back(
            Describe(name, text, "not a size (want e.g. 4g, 1024m)"));
      }
    }
    config.sm_limit_percent[i] = global_sm;
    std::snprintf(name, sizeof(name), "CUDA_DEVICE_SM_LIMIT_%d", i);
    if (const char* text = lookup(name)) {
      int percent = 0;
      if (ParsePercent(text, &percent)) {
        config.sm_limit_percent[i] = percent;
      } else {
        config.errors.push_back(Describe(name, text, "not a percent"));
      }
    }
  }

  if (const char* text = lookup("GPU_CORE_UTILIZATION_POLICY")) {
    if (strcasecmp(text, "force") == 0) {
      config.core_policy = CorePolicy::kForce;
    } else if (strcasecmp(text, "disable") == 0) {
      config.core_policy = CorePolicy::kDisable;
    }
  }
  if (const char* text = lookup("CUDA_DISABLE_CONTROL")) {
    config.disable_control =
        strcasecmp(text, "true") == 0 || std::strcmp(text, "1") == 0;
  }
  if (const char* text = lookup("LIBCUDA_LOG_LEVEL")) {
    int level = 0;
    if (ParsePercent(text, &level) && level <= 4) {
      config.log_level = level;
    } else {
      config.errors.push_back(
          Describe("LIBCUDA_LOG_LEVEL", text, "not a level 0..4"));
    }
  }
  if (const char* text = lookup("CUDA_DEVICE_MEMORY_SHARED_CACHE")) {
    if (*text != '\0') config.region_path = text;
  }
  std::vector<std::string> nvidia_visible =
      SplitList(lookup("NVIDIA_VISIBLE_DEVICES"));
  bool all_uuids = !nvidia_visible.empty();
  for (const std::string& entry : nvidia_visible) {
    if (entry.rfind("GPU-", 0) != 0 && entry.rfind("MIG-", 0) != 0) {
      all_uuids = false;
    }
  }
  if (all_uuids) config.container_uuids = nvidia_visible;
  config.cuda_visible = SplitList(lookup("CUDA_VISIBLE_DEVICES"));
  return config;
}

}  // namespace deviceshare::vgpu
