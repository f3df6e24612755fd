#include "deviceshare/config/scheduler_config.h"

namespace deviceshare {

absl::string_view MigSearchName(MigSearch search) {
  return search == MigSearch::kConfigMap ? "configmap" : "placement";
}

}  // namespace deviceshare
