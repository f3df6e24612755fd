// Output lines, argument parsing and small shared helpers of the probe.
#include <cstdio>
#include <ctime>
#include <optional>

#include "env_config.h"
#include "probe.h"

namespace vgpu_probe {
namespace {

std::string Quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

struct PathEntry {
  Path path;
  const char* name;
};
constexpr PathEntry kPaths[] = {
    {Path::kMemAlloc, "memalloc"}, {Path::kPitch, "pitch"},
    {Path::kManaged, "managed"},   {Path::kArray, "array"},
    {Path::kArray3D, "array3d"},   {Path::kMipmapped, "mipmapped"},
    {Path::kVmm, "vmm"},           {Path::kAsync, "async"},
    {Path::kFromPool, "frompool"}, {Path::kGraph, "graph"},
};

}  // namespace

bool g_timing = true;

Line::Line(const std::string& op) : text_("{\"op\":" + Quoted(op)) {}

Line& Line::Int(const std::string& key, long long value) {
  text_ += "," + Quoted(key) + ":" + std::to_string(value);
  return *this;
}

Line& Line::Str(const std::string& key, const std::string& value) {
  text_ += "," + Quoted(key) + ":" + Quoted(value);
  return *this;
}

Line& Line::StrList(const std::string& key,
                    const std::vector<std::string>& list) {
  text_ += "," + Quoted(key) + ":[";
  for (size_t i = 0; i < list.size(); ++i) {
    text_ += (i ? "," : "") + Quoted(list[i]);
  }
  text_ += "]";
  return *this;
}

Line& Line::Us(long long microseconds) {
  return g_timing ? Int("us", microseconds) : *this;
}

void Line::Emit() {
  std::fputs((text_ + "}\n").c_str(), stdout);
  std::fflush(stdout);
}

std::optional<Path> ParsePath(const std::string& name) {
  for (const PathEntry& entry : kPaths) {
    if (name == entry.name) return entry.path;
  }
  return std::nullopt;
}

const char* PathName(Path path) {
  for (const PathEntry& entry : kPaths) {
    if (path == entry.path) return entry.name;
  }
  return "?";
}

bool ParseInt(const std::string& text, long long& out) {
  if (text.empty()) return false;
  size_t used = 0;
  try {
    out = std::stoll(text, &used, 10);
  } catch (...) {
    return false;
  }
  return used == text.size();
}

bool ParseBytes(const std::string& text, unsigned long long& out) {
  // The interposer's own reading of "4g", "1024m", so the tests speak its
  // units exactly.
  std::optional<uint64_t> bytes =
      deviceshare::vgpu::ParseByteSize(text.c_str());
  if (!bytes) return false;
  out = *bytes;
  return true;
}

long long NowUs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return now.tv_sec * 1000000LL + now.tv_nsec / 1000;
}

std::string UuidText(const CUuuid& uuid) {
  std::string out = "GPU-";
  char hex[3];
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    std::snprintf(hex, sizeof(hex), "%02x",
                  static_cast<unsigned char>(uuid.bytes[i]));
    out += hex;
  }
  return out;
}

CUresult Probe::Stream(CUstream& out) {
  if (!stream_created) {
    const CUresult code = cu.cuStreamCreate(&stream, CU_STREAM_DEFAULT);
    if (code != CUDA_SUCCESS) return code;
    stream_created = true;
  }
  out = stream;
  return CUDA_SUCCESS;
}

}  // namespace vgpu_probe
