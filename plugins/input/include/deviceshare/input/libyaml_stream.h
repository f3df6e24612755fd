// File: input/libyaml_stream.h
//
// libyaml's parser as the streaming reader's first parser (codec/
// yaml_stream.h's YamlEventParser): it reads YAML four to five times
// faster than yaml-cpp (a file of 200,000 pods: 4.6 s against 21.8 s for
// the events alone; bench/README.md, "Big pods files"). Its events convert
// as yaml-cpp's do (codec/yaml_json_builder.h). Where it refuses a text
// (libyaml wants UTF-8; yaml-cpp takes any byte in a scalar), and for a
// text with a lone CR (a line break to libyaml, not to yaml-cpp), yaml-cpp
// reads it, so inputs read as before.
//
// Thread safety: the parser is a pure function.
#ifndef DEVICESHARE_INPUT_LIBYAML_STREAM_H_
#define DEVICESHARE_INPUT_LIBYAML_STREAM_H_

#include "deviceshare/codec/yaml_stream.h"

namespace deviceshare::input {

// The parser; nullptr in a build without libyaml (yaml-cpp alone reads).
YamlEventParser LibyamlParser();

}  // namespace deviceshare::input

#endif  // DEVICESHARE_INPUT_LIBYAML_STREAM_H_
