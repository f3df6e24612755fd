// The documentation against the code (label `docs`):
//  - docs/annotations.md has a row for every annotation and resource name of
//    deviceshare::keys::kKnownKeys, under its dialect, and kKnownKeys lists
//    every name constant of annotation_keys.h and the device config's
//    default resource names;
//  - deploy/README.md names every flag that `serve --help` and the node
//    agent's `--help` print.
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "deviceshare/codec/annotation_keys.h"
#include "deviceshare/config/device_config.h"
#include "gtest/gtest.h"

namespace deviceshare {
namespace {

std::string ReadSource(const std::string& relative) {
  std::ifstream in(std::string(DEVICESHARE_SOURCE_DIR) + "/" + relative);
  EXPECT_TRUE(in) << "cannot read " << relative;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string DialectWord(keys::KeyDialect dialect) {
  switch (dialect) {
    case keys::KeyDialect::kVolcano:
      return "Volcano";
    case keys::KeyDialect::kHami:
      return "HAMi";
    case keys::KeyDialect::kBoth:
      return "both";
  }
  return "?";
}

// The table's rows: name (inside its backticks) -> dialect cell. A row is
// "| `name` | dialect | ...".
std::map<std::string, std::vector<std::string>> TableRows(
    const std::string& text) {
  std::map<std::string, std::vector<std::string>> rows;
  static const std::regex kRow(R"(^\|\s*`([^`]+)`\s*\|\s*([^|]*?)\s*\|)");
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    std::smatch match;
    if (std::regex_search(line, match, kRow)) {
      rows[match[1].str()].push_back(match[2].str());
    }
  }
  return rows;
}

// A prefix key (`nvidia.com/mig-`) is documented as `<prefix><suffix>`.
const std::vector<std::string>* RowFor(
    const std::map<std::string, std::vector<std::string>>& rows,
    const keys::KnownKey& key) {
  if (key.place != keys::KeyPlace::kPodResourcePrefix) {
    auto it = rows.find(key.name);
    return it == rows.end() ? nullptr : &it->second;
  }
  for (const auto& [name, dialects] : rows) {
    if (name.rfind(key.name, 0) == 0 && name.size() > strlen(key.name) &&
        name[strlen(key.name)] == '<') {
      return &dialects;
    }
  }
  return nullptr;
}

TEST(AnnotationTableTest, EveryKnownKeyHasARowUnderItsDialect) {
  const auto rows = TableRows(ReadSource("docs/annotations.md"));
  ASSERT_FALSE(rows.empty()) << "docs/annotations.md has no table rows";
  for (const keys::KnownKey& key : keys::kKnownKeys) {
    const std::vector<std::string>* dialects = RowFor(rows, key);
    ASSERT_NE(dialects, nullptr)
        << "docs/annotations.md has no row for `" << key.name
        << "` (deviceshare::keys::kKnownKeys); add one under "
        << DialectWord(key.dialect);
    EXPECT_EQ(*dialects, std::vector<std::string>{DialectWord(key.dialect)})
        << "docs/annotations.md lists `" << key.name
        << "` under another dialect (or twice)";
  }
}

TEST(AnnotationTableTest, KnownKeysListEveryNameConstant) {
  // Every `inline constexpr char kX[] = "a/b";` of the header is a name (the
  // values without a '/', such as bind phases, are not).
  const std::string header = ReadSource(
      "lib/deviceshare/include/deviceshare/codec/annotation_keys.h");
  static const std::regex kConstant(
      R"re(inline\s+constexpr\s+char\s+(\w+)\[\]\s*=\s*"([^"]*)")re");
  std::set<std::string> listed;
  for (const keys::KnownKey& key : keys::kKnownKeys) listed.insert(key.name);
  int names = 0;
  for (std::sregex_iterator it(header.begin(), header.end(), kConstant), end;
       it != end; ++it) {
    const std::string value = (*it)[2].str();
    if (value.find('/') == std::string::npos) continue;
    ++names;
    EXPECT_TRUE(listed.count(value))
        << (*it)[1].str() << " = \"" << value
        << "\" is not in keys::kKnownKeys (annotation_keys.h)";
  }
  EXPECT_GT(names, 30);
  EXPECT_EQ(listed.size(), std::size(keys::kKnownKeys)) << "a name listed twice";
}

TEST(AnnotationTableTest, DeviceConfigDefaultsAreKnownKeys) {
  const DeviceConfig config;
  const auto hami = keys::KnownAnnotationKeys(keys::KeyDialect::kHami);
  const std::set<std::string_view> names(hami.begin(), hami.end());
  for (const std::string& name :
       {config.resource_count_name, config.resource_memory_name,
        config.resource_memory_percentage_name, config.resource_core_name,
        config.resource_priority_name}) {
    EXPECT_TRUE(names.count(name)) << name;
  }
}

// ---- Flag lists -------------------------------------------------------------

std::string RunCommand(const std::string& command) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(
      popen((command + " 2>&1").c_str(), "r"), pclose);
  EXPECT_NE(pipe, nullptr) << command;
  std::string out;
  char buffer[4096];
  while (pipe && fgets(buffer, sizeof buffer, pipe.get())) out += buffer;
  return out;
}

// The flags a help text defines: those that start an option line ("  --name
// ARG   what it does"), and those of the usage block (up to the first blank
// line) when `usage` is set. Flags quoted in the prose (kubectl's --type)
// are neither.
std::set<std::string> Flags(const std::string& text, bool usage) {
  std::set<std::string> flags;
  static const std::regex kOptionLine(R"((^|\n)  (--[a-z][a-z0-9-]*))");
  for (std::sregex_iterator it(text.begin(), text.end(), kOptionLine), end;
       it != end; ++it) {
    flags.insert((*it)[2].str());
  }
  if (usage) {
    // Its indented lines: the command lines, not a sentence under them.
    std::istringstream block(text.substr(0, text.find("\n\n")));
    static const std::regex kUsageFlag(R"([\s\[(](--[a-z][a-z0-9-]*))");
    for (std::string line; std::getline(block, line);) {
      if (line.empty() || line[0] != ' ') continue;
      for (std::sregex_iterator it(line.begin(), line.end(), kUsageFlag), end;
           it != end; ++it) {
        flags.insert((*it)[1].str());
      }
    }
  }
  return flags;
}

void ExpectDocumented(const std::set<std::string>& flags,
                      const std::string& doc, const std::string& what) {
  for (const std::string& flag : flags) {
    if (flag == "--help") continue;
    EXPECT_NE(doc.find("`" + flag), std::string::npos)
        << "deploy/README.md does not name " << what << "'s " << flag
        << " (as `" << flag << "...`)";
  }
}

TEST(FlagListTest, DeployReadmeNamesEveryFlagOfServe) {
  const std::string help =
      RunCommand(std::string(DEVICESHARE_SCHEDULER_BIN) + " --help");
  // serve's part: from its heading to simulate's (the whole text if the
  // layout changes, which then asks for simulate's flags too).
  size_t from = help.find("\nserve");
  if (from == std::string::npos) from = 0;
  size_t to = help.find("\nsimulate", from);
  const std::string serve = help.substr(from, to == std::string::npos
                                                  ? std::string::npos
                                                  : to - from);
  std::set<std::string> flags = Flags(serve, /*usage=*/false);
  ASSERT_GT(flags.size(), 5u) << help;
  ExpectDocumented(flags, ReadSource("deploy/README.md"), "serve");
}

TEST(FlagListTest, DeployReadmeNamesEveryFlagOfTheNodeAgent) {
  const std::string help =
      RunCommand(std::string(DEVICESHARE_NODE_AGENT_BIN) + " --help");
  std::set<std::string> flags = Flags(help, /*usage=*/true);
  ASSERT_GT(flags.size(), 15u) << help;
  ExpectDocumented(flags, ReadSource("deploy/README.md"), "the node agent");
}

}  // namespace
}  // namespace deviceshare
