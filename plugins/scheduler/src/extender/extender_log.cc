#include "extender_log.h"

#include <algorithm>

#include "absl/strings/str_format.h"
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

bool IsControl(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte < 0x20 || byte == 0x7f;
}

// A control character as an escape, so that a name holding a newline
// cannot start a line of its own (and forge one).
void AppendEscaped(char c, std::string& out) {
  switch (c) {
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default:
      out += absl::StrFormat("\\x%02x", static_cast<unsigned char>(c));
  }
}

// `text` with its control characters escaped.
std::string Escaped(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (IsControl(c)) {
      AppendEscaped(c, out);
    } else {
      out += c;
    }
  }
  return out;
}

// Values with spaces, quotes or control characters are quoted (and those
// escaped) so that a line stays key=value.
std::string Field(absl::string_view value) {
  if (value.empty()) return "-";
  if (value.find_first_of(" \"=") == absl::string_view::npos &&
      std::none_of(value.begin(), value.end(), IsControl)) {
    return std::string(value);
  }
  std::string quoted = "\"";
  for (char c : value) {
    if (IsControl(c)) {
      AppendEscaped(c, quoted);
      continue;
    }
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
  spdlog::log(spd, "{} pod={} node={}", Escaped(message), Field(pod),
              Field(node));
}

void LogNode(LogLevel level, absl::string_view node,
             absl::string_view message) {
  const auto spd = ToSpdlog(level);
  if (!spdlog::should_log(spd)) return;
  spdlog::log(spd, "{} node={}", Escaped(message), Field(node));
}

void LogObject(LogLevel level, absl::string_view kind, absl::string_view name,
               absl::string_view message) {
  const auto spd = ToSpdlog(level);
  if (!spdlog::should_log(spd)) return;
  spdlog::log(spd, "{} kind={} object={}", Escaped(message), Field(kind),
              Field(name));
}

}  // namespace deviceshare::extender
