#include "deviceshare/codec/yaml_stream.h"

#include <cstdint>
#include <exception>
#include <istream>
#include <optional>
#include <streambuf>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "codec/json_stream.h"
#include "codec/yaml_convert.h"
#include "deviceshare/codec/yaml_json_builder.h"
#include "yaml-cpp/eventhandler.h"
#include "yaml-cpp/exceptions.h"
#include "yaml-cpp/parser.h"

namespace deviceshare {
namespace {

// yaml-cpp's callbacks return nothing: the builder's error leaves them by
// exception, caught around the parser.
struct StopStream {
  absl::Status status;
};

void Check(absl::Status status) {
  if (!status.ok()) throw StopStream{std::move(status)};
}

// yaml-cpp reads a std::istream; this one reads the caller's text in
// place, where an istringstream would copy up to 1 GiB of it.
class TextBuffer final : public std::streambuf {
 public:
  explicit TextBuffer(absl::string_view text) {
    char* begin = const_cast<char*>(text.data());  // only ever read
    setg(begin, begin, begin + text.size());
  }
};

// yaml-cpp's anchors are numbers, counted afresh in each document.
std::string AnchorName(YAML::anchor_t anchor) {
  return anchor == YAML::NullAnchor ? std::string() : absl::StrCat(anchor);
}

class Events final : public YAML::EventHandler {
 public:
  explicit Events(YamlJsonBuilder& builder) : builder_(builder) {}

  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override { Check(builder_.DocumentEnd()); }
  void OnNull(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Check(builder_.Null(ToYamlMark(mark), AnchorName(anchor)));
  }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t anchor) override {
    Check(builder_.Alias(ToYamlMark(mark), AnchorName(anchor)));
  }
  void OnScalar(const YAML::Mark& mark, const std::string& tag,
                YAML::anchor_t anchor, const std::string& value) override {
    Check(builder_.Scalar(ToYamlMark(mark), tag, AnchorName(anchor), value));
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&,
                       YAML::anchor_t anchor,
                       YAML::EmitterStyle::value) override {
    Check(builder_.SequenceStart(ToYamlMark(mark), AnchorName(anchor)));
  }
  void OnSequenceEnd() override { Check(builder_.SequenceEnd()); }
  void OnMapStart(const YAML::Mark& mark, const std::string&,
                  YAML::anchor_t anchor, YAML::EmitterStyle::value) override {
    Check(builder_.MapStart(ToYamlMark(mark), AnchorName(anchor)));
  }
  void OnMapEnd() override { Check(builder_.MapEnd()); }

 private:
  YamlJsonBuilder& builder_;
};

absl::Status StreamYamlCpp(absl::string_view text, YamlDocumentVisitor& visitor,
                           bool split_items) {
  TextBuffer buffer(text);
  std::istream input(&buffer);
  YamlJsonBuilder builder(visitor, split_items);
  Events events(builder);
  // yaml-cpp 0.7 never ends a stream whose top level holds a token no node
  // starts with, e.g. a stray ',' (jbeder/yaml-cpp#1040): each next
  // document consumes nothing and comes back empty. A stream of n bytes
  // holds at most n/3 + 1 documents (each after the first starts with
  // "---"), so counting past that has found the loop.
  const int64_t most = static_cast<int64_t>(text.size()) / 3 + 1;
  int64_t documents = 0;
  try {
    YAML::Parser parser(input);
    while (parser.HandleNextDocument(events)) {
      if (++documents > most) {
        return absl::InvalidArgumentError(
            "YAML: a token no document can start with at the top level (a "
            "stray ',')");
      }
    }
  } catch (const StopStream& stop) {
    return stop.status;
  } catch (const YAML::Exception& e) {
    return ErrorAt(e.mark, e.msg);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrFormat("YAML: %s", e.what()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status StreamYamlDocuments(absl::string_view text,
                                 YamlDocumentVisitor& visitor, bool split_items,
                                 YamlEventParser first_parser) {
  if (std::optional<absl::Status> json =
          StreamJsonDocument(text, visitor, split_items)) {
    return *json;
  }
  if (first_parser != nullptr) {
    YamlJsonBuilder builder(visitor, split_items);
    absl::Status first = first_parser(text, builder);
    if (first.ok() || builder.failed()) return first;
    visitor.OnRestart();
  }
  return StreamYamlCpp(text, visitor, split_items);
}

}  // namespace deviceshare
