// File: config/config_parser.h
//
// Reads deviceshare's configuration from YAML. One file may hold:
//
//   scheduler:                 # deviceshare's own settings
//     nodePolicy: binpack      # binpack | spread
//     gpuPolicy: spread        # binpack | spread
//     dialect: hami            # hami | volcano
//     modes: [hami-core]       # hami-core | mig | mps
//   nvidia:                    # the device config map section, as in
//     deviceSplitCount: 10     # Volcano's and HAMi's config maps
//     ...
//
// The `nvidia:` section may also be given on its own (the content of a
// config map's `device-config.yaml`), or as a whole Kubernetes ConfigMap
// object whose data holds `device-config.yaml`.
//
// Every known key is honoured; an unknown key in a section deviceshare owns
// is an InvalidArgument error that names the key path, e.g.
// `nvidia.deviceSplitCout: unknown key`. A bad value names the key and the
// value. Sections that belong to other vendors in a shared HAMi config map
// are reported in Config::notices, never silently dropped; a known nvidia or
// scheduler key found at the top level (a missing `nvidia:` line) is an
// error. A null value keeps the default.
//
// A ConfigMap object is read from data["device-config.yaml"] (the device
// config body; a `scheduler:` section there is an error) and
// data["deviceshare.yaml"] (this whole file); at most one may hold
// `nvidia:`. Errors inside them are prefixed with the data key.
#ifndef DEVICESHARE_CONFIG_CONFIG_PARSER_H_
#define DEVICESHARE_CONFIG_CONFIG_PARSER_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "deviceshare/config/config_extension.h"
#include "deviceshare/config/scheduler_config.h"

namespace deviceshare {

// Parses a whole configuration file (see above). Empty text gives defaults.
// `extensions`: the keys backends own (config/config_extension.h), usually
// BackendRegistry::ConfigExtensions(); without them such a key is unknown.
absl::StatusOr<Config> ParseConfigYaml(
    absl::string_view yaml_text,
    absl::Span<const ConfigExtension> extensions = {});

// Parses only a device config map body (`nvidia:` at the top level); the
// values of owned keys are accepted and dropped.
absl::StatusOr<DeviceConfig> ParseDeviceConfigYaml(
    absl::string_view yaml_text,
    absl::Span<const ConfigExtension> extensions = {});

}  // namespace deviceshare

#endif  // DEVICESHARE_CONFIG_CONFIG_PARSER_H_
