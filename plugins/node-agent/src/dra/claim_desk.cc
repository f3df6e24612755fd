#include "dra/claim_desk.h"

#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "metrics/agent_metrics.h"
#include "spdlog/spdlog.h"

namespace deviceshare::agent::dra {
namespace {

const char* Name(DraApiVersion version) {
  return version == DraApiVersion::kV1 ? "v1" : "v1beta1";
}

struct Repairs {
  int left_out = 0;
  int unasked = 0;
};

// Makes `answer` hold exactly the uids of `claims`: entries for other uids
// go, a claim without an entry gets `missing(claim)`.
template <typename Value, typename Missing>
Repairs KeepAskedFor(const std::vector<ClaimRef>& claims,
                     std::map<std::string, Value>& answer, Missing missing) {
  Repairs repairs;
  std::set<std::string> asked;
  for (const ClaimRef& claim : claims) asked.insert(claim.uid);
  for (auto it = answer.begin(); it != answer.end();) {
    if (asked.count(it->first) == 0) {
      ++repairs.unasked;
      it = answer.erase(it);
    } else {
      ++it;
    }
  }
  for (const ClaimRef& claim : claims) {
    if (answer.count(claim.uid) == 0) {
      ++repairs.left_out;
      answer.emplace(claim.uid, missing(claim));
    }
  }
  return repairs;
}

std::string LeftOut(absl::string_view what, const ClaimRef& claim) {
  return absl::StrCat("deviceshare node agent: ", what, " ResourceClaim ",
                      claim.ns, "/", claim.name, " (uid ", claim.uid,
                      ") got no answer; kubelet will retry");
}

// Counts one call (`calls`: the prepare or unprepare counter) and logs it,
// warning when the preparer's answer had to be repaired.
void Record(DraCounters& counters, const std::string& driver, const char* rpc,
            int DraPluginStats::*calls, DraApiVersion version,
            const Repairs& repairs, size_t claims, int failed) {
  counters.Count([&](DraPluginStats& stats) {
    ++(stats.*calls);
    stats.v1beta1_calls += version == DraApiVersion::kV1beta1;
    stats.claims_left_out += repairs.left_out;
    stats.claims_unasked += repairs.unasked;
  });
  if (repairs.left_out > 0 || repairs.unasked > 0) {
    spdlog::warn(
        "DRA {}: the claim preparer left out {} claims and answered {} not "
        "asked for; fixed the answer",
        driver, repairs.left_out, repairs.unasked);
  }
  spdlog::info("DRA {}: {} ({}): {} claims, {} failed", driver, rpc,
               Name(version), claims, failed);
}

}  // namespace

ClaimDesk::ClaimDesk(std::string driver_name, ClaimPreparer* preparer,
                     DraCounters* counters)
    : driver_name_(std::move(driver_name)),
      preparer_(preparer),
      counters_(counters) {}

std::map<std::string, ClaimPrepareResult> ClaimDesk::Prepare(
    const std::vector<ClaimRef>& claims, DraApiVersion version) {
  const absl::Time start = absl::Now();
  std::map<std::string, ClaimPrepareResult> answer = preparer_->Prepare(claims);
  const Repairs repairs =
      KeepAskedFor(claims, answer, [](const ClaimRef& claim) {
        return ClaimPrepareResult{.error = LeftOut("preparing", claim)};
      });
  int failed = 0;
  for (const auto& [uid, result] : answer) failed += !result.error.empty();
  Record(*counters_, driver_name_, "NodePrepareResources",
         &DraPluginStats::prepare_calls, version, repairs, answer.size(),
         failed);
  metrics::AgentMetrics::Default().ObservePrepare(metrics::kDraApi,
                                                  absl::Now() - start);
  return answer;
}

std::map<std::string, std::string> ClaimDesk::Unprepare(
    const std::vector<ClaimRef>& claims, DraApiVersion version) {
  std::map<std::string, std::string> answer = preparer_->Unprepare(claims);
  const Repairs repairs = KeepAskedFor(
      claims, answer,
      [](const ClaimRef& claim) { return LeftOut("unpreparing", claim); });
  int failed = 0;
  for (const auto& [uid, error] : answer) failed += !error.empty();
  Record(*counters_, driver_name_, "NodeUnprepareResources",
         &DraPluginStats::unprepare_calls, version, repairs, answer.size(),
         failed);
  return answer;
}

}  // namespace deviceshare::agent::dra
