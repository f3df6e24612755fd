#include "feed_sets.h"

#include "absl/strings/str_cat.h"
#include "extender_log.h"

namespace deviceshare::extender {

void ForgetUnlisted(std::set<std::string>& known,
                    const absl::flat_hash_set<std::string>& listed,
                    const std::function<void(const std::string&)>& remove) {
  for (auto it = known.begin(); it != known.end();) {
    if (listed.contains(*it)) {
      ++it;
      continue;
    }
    remove(*it);
    it = known.erase(it);
  }
}

void LogIgnored(absl::string_view kind, absl::string_view name,
                const absl::Status& status) {
  LogObject(LogLevel::kError, kind, name,
            absl::StrCat("ignored (the scheduler keeps what it had of it): ",
                         status.message()));
}

}  // namespace deviceshare::extender
