// Helpers shared by the GPU measurement programs: argument parsing, the
// RESULT line that run.sh parses, clocks, percentiles, and the "no GPU here"
// exit. Header-only so each program stays a single nvcc invocation.
#pragma once

#include <cuda_runtime.h>
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace kit {

// Exit status run.sh reads as "skipped" (the automake convention).
constexpr int kExitSkip = 77;
constexpr size_t kMiB = size_t{1} << 20;

// "--key value" and "--flag" pairs; anything else is an error so that a typo
// in run.sh fails loudly instead of silently measuring the default.
class Args {
 public:
  Args(int argc, char** argv) {
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if (a.rfind("--", 0) != 0) {
        std::fprintf(stderr, "unexpected argument '%s'\n", a.c_str());
        std::exit(2);
      }
      a = a.substr(2);
      if (i + 1 < argc && std::strncmp(argv[i + 1], "--", 2) != 0) {
        values_[a] = argv[++i];
      } else {
        values_[a] = "1";
      }
    }
  }
  bool Has(const std::string& k) const { return values_.count(k) != 0; }
  std::string Str(const std::string& k, const std::string& def) const {
    auto it = values_.find(k);
    return it == values_.end() ? def : it->second;
  }
  double Num(const std::string& k, double def) const {
    auto it = values_.find(k);
    if (it == values_.end()) return def;
    char* end = nullptr;
    double v = std::strtod(it->second.c_str(), &end);
    if (end == it->second.c_str() || *end != '\0') {
      std::fprintf(stderr, "--%s: not a number: '%s'\n", k.c_str(),
                   it->second.c_str());
      std::exit(2);
    }
    return v;
  }

 private:
  std::map<std::string, std::string> values_;
};

// One machine-readable line per measurement: "RESULT k=v k=v ...". Values
// never contain spaces (run.sh splits on them).
class Result {
 public:
  template <typename T>
  Result& Add(const std::string& k, const T& v) {
    std::ostringstream s;
    s << v;
    std::string text = s.str();
    for (char& c : text) {
      if (c == ' ' || c == '\n' || c == '\t') c = '_';
    }
    line_ += " " + k + "=" + text;
    return *this;
  }
  Result& Fixed(const std::string& k, double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", digits, v);
    return Add(k, buf);
  }
  void Print() const {
    std::printf("RESULT%s\n", line_.c_str());
    std::fflush(stdout);
  }

 private:
  std::string line_;
};

inline int64_t NowNs() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

inline int64_t RealtimeMs() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return int64_t{ts.tv_sec} * 1000 + ts.tv_nsec / 1000000;
}

// Nearest-rank percentile; q in [0, 1]. Sorts a copy.
inline double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(q * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

// Every program starts here: no device is a skip (77), not a crash, so the
// programs can be run on a build machine to see that they are sane.
inline int RequireDevice() {
  int n = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (e != cudaSuccess || n == 0) {
    std::fprintf(stderr, "no CUDA device: %s (%s)\n",
                 e == cudaSuccess ? "count is 0" : cudaGetErrorName(e),
                 e == cudaSuccess ? "" : cudaGetErrorString(e));
    std::exit(kExitSkip);
  }
  int dev = 0;
  cudaGetDevice(&dev);
  // Creates the primary context now, so its cost is never inside a timing.
  e = cudaFree(nullptr);
  if (e != cudaSuccess) {
    std::fprintf(stderr, "context creation failed: %s\n", cudaGetErrorName(e));
    std::exit(1);
  }
  return dev;
}

// For calls whose failure means the measurement itself is broken.
#define KIT_CHECK(call)                                                        \
  do {                                                                         \
    cudaError_t kit_e = (call);                                                \
    if (kit_e != cudaSuccess) {                                                \
      std::fprintf(stderr, "%s:%d: %s -> %s (%s)\n", __FILE__, __LINE__,       \
                   #call, cudaGetErrorName(kit_e), cudaGetErrorString(kit_e)); \
      std::exit(1);                                                            \
    }                                                                          \
  } while (0)

}  // namespace kit
