#include "deviceshare/kube/eviction.h"

#include "absl/strings/str_cat.h"
#include "deviceshare/kube/object_paths.h"

namespace deviceshare::kube {

std::string PodEvictionPath(absl::string_view ns, absl::string_view name) {
  return absl::StrCat(PodPath(ns, name), "/eviction");
}

nlohmann::json EvictionBody(absl::string_view ns, absl::string_view name) {
  return {{"apiVersion", "policy/v1"},
          {"kind", "Eviction"},
          {"metadata", {{"name", name}, {"namespace", ns}}}};
}

absl::Status EvictPod(ApiClient& client, absl::string_view ns,
                      absl::string_view name) {
  return client.Post(PodEvictionPath(ns, name), EvictionBody(ns, name))
      .status();
}

}  // namespace deviceshare::kube
