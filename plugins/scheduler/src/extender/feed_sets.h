// File: src/extender/feed_sets.h (internal)
//
// What every watch feed of the extender (dra_feed.h, quota_feed.h) does
// with the names it has applied: after a relist, the ones the list no
// longer shows are removed; an object that cannot be read is logged once,
// the same way, and the Scheduler keeps what it had of it.
//
// Thread safety: pure functions; the caller guards `known`.
#ifndef DEVICESHARE_EXTENDER_FEED_SETS_H_
#define DEVICESHARE_EXTENDER_FEED_SETS_H_

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace deviceshare::extender {

// The names `name_of` gives the objects of a list.
template <typename NameOf>
absl::flat_hash_set<std::string> Listed(
    const std::vector<nlohmann::json>& objects, NameOf name_of) {
  absl::flat_hash_set<std::string> names;
  for (const nlohmann::json& object : objects) names.insert(name_of(object));
  return names;
}

// After a relist: forgets every name of `known` the list lacks, removing
// it from the scheduler with `remove`.
void ForgetUnlisted(std::set<std::string>& known,
                    const absl::flat_hash_set<std::string>& listed,
                    const std::function<void(const std::string&)>& remove);

// Logs at error level that the object `kind` `name` was not applied.
void LogIgnored(absl::string_view kind, absl::string_view name,
                const absl::Status& status);

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_FEED_SETS_H_
