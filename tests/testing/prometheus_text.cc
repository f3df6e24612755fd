#include "testing/prometheus_text.h"

#include <cstdlib>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace deviceshare::testing {
namespace {

bool IsNameChar(char c) {
  return absl::ascii_isalnum(c) || c == '_' || c == ':';
}

// `text` with \\, \" and \n undone; `quoted` says whether \" is an escape
// (label values) or two characters (HELP).
std::string Unescape(absl::string_view text, bool quoted) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\\' && i + 1 < text.size()) {
      const char next = text[i + 1];
      if (next == '\\' || next == 'n' || (quoted && next == '"')) {
        out.push_back(next == 'n' ? '\n' : next);
        ++i;
        continue;
      }
    }
    out.push_back(text[i]);
  }
  return out;
}

absl::Status LineError(int line_number, absl::string_view line,
                       absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("line ", line_number, " \"", line, "\": ", why));
}

// Reads `{a="x",b="y"}` from the front of `rest`; leaves what follows.
absl::StatusOr<std::map<std::string, std::string>> ReadLabels(
    absl::string_view& rest) {
  std::map<std::string, std::string> labels;
  rest.remove_prefix(1);  // '{'
  while (true) {
    if (absl::ConsumePrefix(&rest, "}")) return labels;
    size_t end = 0;
    while (end < rest.size() && IsNameChar(rest[end])) ++end;
    if (end == 0 || end >= rest.size() || rest[end] != '=' ||
        end + 1 >= rest.size() || rest[end + 1] != '"') {
      return absl::InvalidArgumentError("a label is not name=\"value\"");
    }
    const std::string name(rest.substr(0, end));
    rest.remove_prefix(end + 2);
    size_t close = 0;
    while (close < rest.size() && rest[close] != '"') {
      close += rest[close] == '\\' ? 2 : 1;
    }
    if (close >= rest.size()) {
      return absl::InvalidArgumentError("a label value is not closed");
    }
    if (!labels.emplace(name, Unescape(rest.substr(0, close), true)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("label ", name, " is repeated"));
    }
    rest.remove_prefix(close + 1);
    absl::ConsumePrefix(&rest, ",");
  }
}

// strtod reads NaN and Inf in any case, as Go's ParseFloat does.
absl::StatusOr<double> ReadValue(absl::string_view text) {
  const std::string value(text);
  char* end = nullptr;
  const double parsed = std::strtod(value.c_str(), &end);
  if (value.empty() || end != value.c_str() + value.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("value \"", text, "\" is not a number"));
  }
  return parsed;
}

absl::StatusOr<SampleText> ReadSample(absl::string_view line) {
  SampleText sample;
  size_t end = 0;
  while (end < line.size() && IsNameChar(line[end])) ++end;
  if (end == 0) return absl::InvalidArgumentError("no metric name");
  sample.name = std::string(line.substr(0, end));
  absl::string_view rest = line.substr(end);
  if (absl::StartsWith(rest, "{")) {
    absl::StatusOr<std::map<std::string, std::string>> labels =
        ReadLabels(rest);
    if (!labels.ok()) return labels.status();
    sample.labels = *std::move(labels);
  }
  // The value, then an optional timestamp.
  std::vector<absl::string_view> fields =
      absl::StrSplit(rest, ' ', absl::SkipEmpty());
  if (fields.empty() || fields.size() > 2) {
    return absl::InvalidArgumentError("not `name{labels} value [timestamp]`");
  }
  absl::StatusOr<double> value = ReadValue(fields[0]);
  if (!value.ok()) return value.status();
  sample.value = *value;
  return sample;
}

bool BelongsTo(const MetricFamilyText& family, absl::string_view sample) {
  if (sample == family.name) return true;
  if (family.type != "histogram" && family.type != "summary") return false;
  for (absl::string_view suffix : {"_bucket", "_sum", "_count"}) {
    if (sample == absl::StrCat(family.name, suffix)) {
      return suffix != "_bucket" || family.type == "histogram";
    }
  }
  return false;
}

}  // namespace

std::set<std::string> MetricFamilyText::LabelNames() const {
  std::set<std::string> names;
  for (const SampleText& sample : samples) {
    for (const auto& [name, value] : sample.labels) {
      if (!(type == "histogram" && name == "le")) names.insert(name);
    }
  }
  return names;
}

const MetricFamilyText* PrometheusText::Find(absl::string_view name) const {
  for (const MetricFamilyText& family : families) {
    if (family.name == name) return &family;
  }
  return nullptr;
}

absl::StatusOr<PrometheusText> ParsePrometheusText(absl::string_view text) {
  PrometheusText out;
  std::map<std::string, size_t> index;  // family name -> families[i]
  std::map<std::string, bool> typed;
  MetricFamilyText* current = nullptr;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    if (line.empty()) continue;
    if (absl::StartsWith(line, "#")) {
      std::vector<absl::string_view> parts =
          absl::StrSplit(line, absl::MaxSplits(' ', 3));
      const bool help = parts.size() >= 3 && parts[1] == "HELP";
      const bool type = parts.size() == 4 && parts[1] == "TYPE";
      if (!help && !type) {
        out.comments.emplace_back(line);
        continue;
      }
      const std::string name(parts[2]);
      auto [it, inserted] = index.try_emplace(name, out.families.size());
      if (inserted) out.families.push_back({.name = name, .type = "untyped"});
      current = &out.families[it->second];
      if (help) {
        current->help = parts.size() == 4 ? Unescape(parts[3], false) : "";
      } else if (typed[name]) {
        return LineError(line_number, line, "a second TYPE for the name");
      } else {
        typed[name] = true;
        current->type = std::string(parts[3]);
      }
      continue;
    }
    absl::StatusOr<SampleText> sample = ReadSample(line);
    if (!sample.ok()) {
      return LineError(line_number, line, sample.status().message());
    }
    if (current == nullptr || !BelongsTo(*current, sample->name)) {
      return LineError(line_number, line,
                       "a sample outside its family's HELP/TYPE");
    }
    current->samples.push_back(*std::move(sample));
  }
  return out;
}

}  // namespace deviceshare::testing
