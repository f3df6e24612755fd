// Parsing of FAKE_CUDA_DEVICES and CUDA_VISIBLE_DEVICES (see device_env.h).
#include "device_env.h"

#include <algorithm>
#include <cctype>
#include <charconv>

#include "fake_cuda_state.h"

namespace fake_cuda {
namespace {

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t begin = 0;
  while (true) {
    const size_t end = text.find(separator, begin);
    parts.push_back(text.substr(begin, end - begin));
    if (end == std::string_view::npos) return parts;
    begin = end + 1;
  }
}

std::string_view Trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text[0]))) {
    text.remove_prefix(1);
  }
  while (!text.empty() &&
         std::isspace(static_cast<unsigned char>(text.back()))) {
    text.remove_suffix(1);
  }
  return text;
}

bool ParseUnsigned(std::string_view text, uint64_t* value) {
  if (text.empty()) return false;
  const auto [end, ec] =
      std::from_chars(text.data(), text.data() + text.size(), *value);
  return ec == std::errc() && end == text.data() + text.size();
}

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// "GPU-" then 8-4-4-4-12 hex digits, the form nvidia-smi prints.
bool ParseUuid(std::string_view text, CUuuid* bytes) {
  if (text.size() != 40 || text.substr(0, 4) != "GPU-") return false;
  text.remove_prefix(4);
  int nibble = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (text[i] != '-') return false;
      continue;
    }
    const int digit = HexDigit(text[i]);
    if (digit < 0) return false;
    char& byte = bytes->bytes[nibble / 2];
    byte = static_cast<char>(nibble % 2 == 0 ? digit << 4 : byte | digit);
    ++nibble;
  }
  return nibble == 32;
}

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

// The physical index an entry names, or -1.
int Resolve(std::string_view entry, const std::vector<PhysicalGpu>& gpus) {
  if (entry.empty()) return -1;
  if (std::all_of(entry.begin(), entry.end(), [](char c) {
        return std::isdigit(static_cast<unsigned char>(c));
      })) {
    uint64_t index = 0;
    if (!ParseUnsigned(entry, &index) || index >= gpus.size()) return -1;
    return static_cast<int>(index);
  }
  if (entry.size() <= 4 || !EqualsIgnoringCase(entry.substr(0, 4), "GPU-")) {
    return -1;
  }
  int found = -1;
  for (size_t i = 0; i < gpus.size(); ++i) {
    const std::string_view uuid = gpus[i].uuid;
    if (uuid.size() >= entry.size() &&
        EqualsIgnoringCase(uuid.substr(0, entry.size()), entry)) {
      if (found >= 0) return -1;  // ambiguous prefix
      found = static_cast<int>(i);
    }
  }
  return found;
}

}  // namespace

bool ParseDevices(std::string_view text, std::vector<PhysicalGpu>* gpus,
                  std::string* error) {
  gpus->clear();
  for (std::string_view raw : Split(text, ',')) {
    const std::string_view entry = Trim(raw);
    const std::vector<std::string_view> fields = Split(entry, ':');
    PhysicalGpu gpu;
    uint64_t mib = 0;
    uint64_t sm = 0;
    if (fields.size() != 3 || !ParseUuid(fields[0], &gpu.bytes) ||
        !ParseUnsigned(fields[1], &mib) || mib == 0 || mib > (1u << 30) ||
        !ParseUnsigned(fields[2], &sm) || sm == 0 || sm > 100000) {
      *error = "FAKE_CUDA_DEVICES: bad entry \"" + std::string(entry) +
               "\" (want GPU-<uuid>:<total_mib>:<sm_count>)";
      return false;
    }
    gpu.uuid = std::string(fields[0]);
    gpu.total_bytes = mib << 20;
    gpu.sm_count = static_cast<int>(sm);
    for (const PhysicalGpu& other : *gpus) {
      if (EqualsIgnoringCase(other.uuid, gpu.uuid)) {
        *error = "FAKE_CUDA_DEVICES: entry \"" + std::string(entry) +
                 "\" repeats a uuid";
        return false;
      }
    }
    gpus->push_back(gpu);
  }
  if (gpus->size() > kMaxDevices) {
    *error = "FAKE_CUDA_DEVICES: more than " + std::to_string(kMaxDevices) +
             " devices";
    return false;
  }
  return true;
}

std::vector<int> VisibleOrder(const char* value,
                              const std::vector<PhysicalGpu>& gpus) {
  std::vector<int> order;
  if (value == nullptr) {
    for (size_t i = 0; i < gpus.size(); ++i) {
      order.push_back(static_cast<int>(i));
    }
    return order;
  }
  for (std::string_view raw : Split(value, ',')) {
    const int index = Resolve(Trim(raw), gpus);
    if (index < 0 ||
        std::find(order.begin(), order.end(), index) != order.end()) {
      break;
    }
    order.push_back(index);
  }
  return order;
}

}  // namespace fake_cuda
