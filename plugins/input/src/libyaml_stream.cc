#include "deviceshare/input/libyaml_stream.h"

#ifdef DEVICESHARE_HAVE_LIBYAML
#include <yaml.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "deviceshare/codec/yaml_json_builder.h"
#endif

namespace deviceshare::input {

#ifdef DEVICESHARE_HAVE_LIBYAML
namespace {

YamlMark MarkOf(const yaml_mark_t& mark) {
  return {static_cast<int>(mark.line), static_cast<int>(mark.column)};
}

std::string Text(const yaml_char_t* text) {
  return text == nullptr ? std::string()
                         : std::string(reinterpret_cast<const char*>(text));
}

// yaml-cpp's tags: "?" for a plain scalar, "!" for a quoted or block one
// without a tag; libyaml gives no tag there and the style apart.
std::string ScalarTag(const yaml_event_t& event) {
  if (event.data.scalar.tag != nullptr) return Text(event.data.scalar.tag);
  return event.data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? "?" : "!";
}

absl::Status Feed(const yaml_event_t& event, YamlJsonBuilder& builder) {
  switch (event.type) {
    case YAML_DOCUMENT_END_EVENT:
      return builder.DocumentEnd();
    case YAML_ALIAS_EVENT:
      return builder.Alias(MarkOf(event.start_mark),
                           Text(event.data.alias.anchor));
    case YAML_SCALAR_EVENT:
      return builder.Scalar(
          MarkOf(event.start_mark), ScalarTag(event),
          Text(event.data.scalar.anchor),
          std::string(reinterpret_cast<const char*>(event.data.scalar.value),
                      event.data.scalar.length));
    case YAML_SEQUENCE_START_EVENT:
      return builder.SequenceStart(MarkOf(event.start_mark),
                                   Text(event.data.sequence_start.anchor));
    case YAML_SEQUENCE_END_EVENT:
      return builder.SequenceEnd();
    case YAML_MAPPING_START_EVENT:
      return builder.MapStart(MarkOf(event.start_mark),
                              Text(event.data.mapping_start.anchor));
    case YAML_MAPPING_END_EVENT:
      return builder.MapEnd();
    default:  // stream and document starts: nothing to build
      return absl::OkStatus();
  }
}

absl::Status ParseWithLibyaml(absl::string_view text,
                              YamlJsonBuilder& builder) {
  // YAML (and libyaml) takes a lone CR for a line break, yaml-cpp does
  // not: a comment ending in one would end earlier here. Such a text is
  // left to yaml-cpp, so that it reads as it always has.
  for (size_t cr = text.find('\r'); cr != absl::string_view::npos;
       cr = text.find('\r', cr + 1)) {
    if (cr + 1 == text.size() || text[cr + 1] != '\n') {
      return absl::InvalidArgumentError("a lone CR: read by yaml-cpp");
    }
  }
  yaml_parser_t parser;
  if (yaml_parser_initialize(&parser) == 0) {
    return absl::ResourceExhaustedError("libyaml: out of memory");
  }
  struct ParserGuard {
    yaml_parser_t* parser;
    ~ParserGuard() { yaml_parser_delete(parser); }
  } parser_guard{&parser};
  // Read in place: libyaml copies only a small window of it at a time.
  yaml_parser_set_input_string(
      &parser, reinterpret_cast<const unsigned char*>(text.data()),
      text.size());
  for (;;) {
    yaml_event_t event;
    if (yaml_parser_parse(&parser, &event) == 0) {
      return YamlErrorAt(MarkOf(parser.problem_mark), parser.problem != nullptr
                                                          ? parser.problem
                                                          : "does not parse");
    }
    struct EventGuard {
      yaml_event_t* event;
      ~EventGuard() { yaml_event_delete(event); }
    } event_guard{&event};
    if (event.type == YAML_STREAM_END_EVENT) return absl::OkStatus();
    absl::Status fed = Feed(event, builder);
    if (!fed.ok()) return fed;
  }
}

}  // namespace

YamlEventParser LibyamlParser() { return &ParseWithLibyaml; }
#else
YamlEventParser LibyamlParser() { return nullptr; }
#endif

}  // namespace deviceshare::input
