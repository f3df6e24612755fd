// Structured log lines of the extender: every line about a pod carries
// `pod=<namespace/name>` and `node=<name or ->`, so one grep follows a pod.
#ifndef DEVICESHARE_EXTENDER_EXTENDER_LOG_H_
#define DEVICESHARE_EXTENDER_EXTENDER_LOG_H_

#include <string>

#include "absl/strings/string_view.h"

namespace deviceshare::extender {

enum class LogLevel { kDebug, kInfo, kWarn, kError };

// Whether lines of `level` are written: a caller whose message costs
// something to build asks first.
bool Logs(LogLevel level);
// `message` first, then the pod and node fields.
void LogPod(LogLevel level, absl::string_view pod, absl::string_view node,
            absl::string_view message);
// Lines about a node only, or about the process (node "-").
void LogNode(LogLevel level, absl::string_view node, absl::string_view message);
// Lines about another API object: `kind=ResourceSlice object=<name>` (a
// namespaced object's name is "namespace/name").
void LogObject(LogLevel level, absl::string_view kind, absl::string_view name,
               absl::string_view message);

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_EXTENDER_LOG_H_
