// File: dra/claim_desk.h
//
// ClaimDesk: what both DRAPlugin versions do with a call once its claims
// are in C++ types: count it, ask the ClaimPreparer, and shape the answer
// the way kubelet accepts it. Kubelet rejects a whole answer that names a
// uid it did not ask for, and retries a claim that got no entry, so the
// desk drops entries for uids not asked for and gives every claim asked for
// that the preparer left out an error entry naming it.
//
// Thread safety: Prepare and Unprepare may run on several threads at once
// (the preparer allows it).
#ifndef DEVICESHARE_AGENT_DRA_CLAIM_DESK_H_
#define DEVICESHARE_AGENT_DRA_CLAIM_DESK_H_

#include <map>
#include <string>
#include <vector>

#include "deviceshare/agent/claim_preparer.h"
#include "dra/dra_counters.h"

namespace deviceshare::agent::dra {

enum class DraApiVersion { kV1, kV1beta1 };

class ClaimDesk {
 public:
  // `preparer` and `counters` are not owned and must outlive the desk.
  ClaimDesk(std::string driver_name, ClaimPreparer* preparer,
            DraCounters* counters);

  // One entry per distinct uid of `claims`, nothing else.
  std::map<std::string, ClaimPrepareResult> Prepare(
      const std::vector<ClaimRef>& claims, DraApiVersion version);
  std::map<std::string, std::string> Unprepare(
      const std::vector<ClaimRef>& claims, DraApiVersion version);

 private:
  const std::string driver_name_;
  ClaimPreparer* const preparer_;
  DraCounters* const counters_;
};

}  // namespace deviceshare::agent::dra

#endif  // DEVICESHARE_AGENT_DRA_CLAIM_DESK_H_
