#include "deviceshare/codec/yaml_json.h"

#include <cstdint>
#include <exception>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "codec/yaml_convert.h"
#include "deviceshare/status_macros.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/yaml.h"

namespace deviceshare {
namespace {

using nlohmann::json;

class Converter {
 public:
  absl::StatusOr<json> Convert(const YAML::Node& node, int depth) {
    if (depth > kMaxDepth) {
      return ErrorAt(node.Mark(),
                     absl::StrFormat("nesting deeper than %d levels (a "
                                     "recursive alias?)",
                                     kMaxDepth));
    }
    if (++nodes_ > kMaxNodes) {
      return ErrorAt(
          node.Mark(),
          absl::StrFormat("document expands to more than %d nodes", kMaxNodes));
    }
    switch (node.Type()) {
      case YAML::NodeType::Undefined:
      case YAML::NodeType::Null:
        return json(nullptr);
      case YAML::NodeType::Scalar:
        DS_RETURN_IF_ERROR(CountText(node, node.Scalar().size()));
        return ConvertYamlScalar(node.Tag(), node.Scalar(),
                                 ToYamlMark(node.Mark()));
      case YAML::NodeType::Sequence: {
        json array = json::array();
        for (const YAML::Node& item : node) {
          DS_ASSIGN_OR_RETURN(json value, Convert(item, depth + 1));
          array.push_back(std::move(value));
        }
        return array;
      }
      case YAML::NodeType::Map: {
        json object = json::object();
        for (auto it = node.begin(); it != node.end(); ++it) {
          // The iterator hands out a temporary pair of handles; copy them
          // (a Node is a shared pointer) rather than refer into it.
          YAML::Node key = it->first;
          YAML::Node item = it->second;
          if (!key.IsScalar()) {
            return ErrorAt(key.Mark(),
                           "a mapping key must be a scalar to become JSON");
          }
          std::string name = key.Scalar();
          DS_RETURN_IF_ERROR(CountText(key, name.size()));
          if (object.contains(name)) {
            return ErrorAt(key.Mark(),
                           absl::StrFormat("duplicate key \"%s\"", name));
          }
          DS_ASSIGN_OR_RETURN(json value, Convert(item, depth + 1));
          object.emplace(name, std::move(value));
        }
        return object;
      }
    }
    return ErrorAt(node.Mark(), "unknown YAML node type");
  }

 private:
  absl::Status CountText(const YAML::Node& node, size_t bytes) {
    text_bytes_ += static_cast<int64_t>(bytes);
    if (text_bytes_ <= kMaxTextBytes) return absl::OkStatus();
    return ErrorAt(node.Mark(),
                   absl::StrFormat("document expands to more than %d MiB of "
                                   "text (an alias bomb?)",
                                   kMaxTextBytes >> 20));
  }

  int64_t nodes_ = 0;
  int64_t text_bytes_ = 0;
};

// The API server sends JSON; nlohmann parses it faster than yaml-cpp and
// with JSON's own number rules. Anything it rejects goes through YAML,
// which also gives the line and column of a real error.
std::optional<json> TryParseJson(absl::string_view text) {
  absl::string_view trimmed = absl::StripLeadingAsciiWhitespace(text);
  if (trimmed.empty() || (trimmed[0] != '{' && trimmed[0] != '[')) {
    return std::nullopt;
  }
  json value = json::parse(text.begin(), text.end(), /*cb=*/nullptr,
                           /*allow_exceptions=*/false);
  if (value.is_discarded()) return std::nullopt;
  return value;
}

// Counts a stream's documents and nothing else.
class DocumentCounter final : public YAML::EventHandler {
 public:
  int64_t documents() const { return documents_; }

  void OnDocumentStart(const YAML::Mark&) override { ++documents_; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

 private:
  int64_t documents_ = 0;
};

// yaml-cpp 0.7's LoadAll never returns on a stream whose top level holds a
// token no node starts with, e.g. a stray ',' (jbeder/yaml-cpp#1040, fixed
// upstream in 2024 by #1318/#1319): each next document consumes nothing
// and comes back empty, and LoadAll keeps them all until memory runs out.
// A stream of n bytes holds at most n/3 + 1 documents (each after the
// first starts with "---"), so an event-only pass that counts them past
// that has found the loop. (YAML::Load reads one document: not affected.)
absl::Status CheckDocumentsEnd(const std::string& text) {
  std::istringstream input(text);
  YAML::Parser parser(input);
  DocumentCounter counter;
  const int64_t most = static_cast<int64_t>(text.size()) / 3 + 1;
  while (parser.HandleNextDocument(counter)) {
    if (counter.documents() > most) {
      return absl::InvalidArgumentError(
          "YAML: a token no document can start with at the top level (a "
          "stray ',')");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<nlohmann::json> ParseJsonOrYaml(absl::string_view text) {
  if (std::optional<json> parsed = TryParseJson(text)) return *parsed;
  try {
    YAML::Node root = YAML::Load(std::string(text));
    return Converter().Convert(root, 0);
  } catch (const YAML::Exception& e) {
    return ErrorAt(e.mark, e.msg);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrFormat("YAML: %s", e.what()));
  }
}

absl::StatusOr<std::vector<nlohmann::json>> ParseYamlDocuments(
    absl::string_view text) {
  try {
    const std::string stream(text);
    DS_RETURN_IF_ERROR(CheckDocumentsEnd(stream));
    std::vector<YAML::Node> documents = YAML::LoadAll(stream);
    std::vector<json> result;
    result.reserve(documents.size());
    for (const YAML::Node& document : documents) {
      if (document.IsNull() || !document.IsDefined()) continue;
      DS_ASSIGN_OR_RETURN(json value, Converter().Convert(document, 0));
      result.push_back(std::move(value));
    }
    return result;
  } catch (const YAML::Exception& e) {
    return ErrorAt(e.mark, e.msg);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrFormat("YAML: %s", e.what()));
  }
}

}  // namespace deviceshare
