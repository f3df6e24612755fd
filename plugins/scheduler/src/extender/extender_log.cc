#include "extender_log.h"

#include "spdlog/spdlog.h"

namespace deviceshare::extender {
namespace {

spdlog::level::level_enum ToSpdlog(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return spdlog::level::debug;
    case LogLevel::kInfo:
      return spdlog::level::info;
    case LogLevel::kWarn:
      return spdlog::level::warn;
    case LogLevel::kError:
      return spdlog::level::err;
  }
  return spdlog::level::info;
}

// Values with spaces or quotes are quoted so that a line stays key=value.
std::string Field(absl::string_view value) {
  if (value.empty()) return "-";
  if (value.find_first_of(" \"=") == absl::string_view::npos) {
    return std::string(value);
  }
  std::string quoted = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') quoted += '\\';
    quoted += c;
  }
  return quoted + "\"";
}

}  // namespace

bool Logs(LogLevel level) { return spdlog::should_log(ToSpdlog(level)); }

void LogPod(LogLevel level, absl::string_view pod, absl::string_view node,
            absl::string_view message) {
  const auto spd = ToSpdlog(level);
  if (!spdlog::should_log(spd)) return;
  spdlog::log(spd, "{} pod={} node={}", std::string(message), Field(pod),
              Field(node));
}

void LogNode(LogLevel level, absl::string_view node,
             absl::string_view message) {
  const auto spd = ToSpdlog(level);
  if (!spdlog::should_log(spd)) return;
  spdlog::log(spd, "{} node={}", std::string(message), Field(node));
}

void LogObject(LogLevel level, absl::string_view kind, absl::string_view name,
               absl::string_view message) {
  const auto spd = ToSpdlog(level);
  if (!spdlog::should_log(spd)) return;
  spdlog::log(spd, "{} kind={} object={}", std::string(message), Field(kind),
              Field(name));
}

}  // namespace deviceshare::extender
