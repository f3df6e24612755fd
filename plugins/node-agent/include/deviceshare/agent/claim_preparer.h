// File: agent/claim_preparer.h
//
// ClaimPreparer: what the DRA kubelet plugin server (agent/dra_plugin_
// server.h) asks when kubelet calls NodePrepareResources or
// NodeUnprepareResources. The server is gRPC plumbing only (both API
// versions, v1 and v1beta1, map onto these types); reading each claim from
// the API server, checking it against the devices this node published,
// writing its CDI spec and journaling it happen behind this interface.
//
// Contract:
//   - Every claim of a call gets an entry in the answer, keyed by its uid;
//     one bad claim gets its own `error` and never fails the others.
//   - Both calls are idempotent: preparing a prepared claim answers the same
//     devices again; unpreparing an unknown claim succeeds.
//
// Thread safety: every method may be called from several threads at once.
#ifndef DEVICESHARE_AGENT_CLAIM_PREPARER_H_
#define DEVICESHARE_AGENT_CLAIM_PREPARER_H_

#include <map>
#include <string>
#include <vector>

namespace deviceshare::agent {

// A claim as kubelet names it.
struct ClaimRef {
  std::string ns;
  std::string uid;
  std::string name;

  bool operator==(const ClaimRef& other) const = default;
};

// One allocated device of a prepared claim.
struct PreparedDevice {
  std::vector<std::string> request_names;  // "gpu", or "b/share"
  std::string pool;
  std::string device;
  std::vector<std::string> cdi_device_ids;  // "vendor/class=name"
  std::string share_id;  // empty for a device allocated whole

  bool operator==(const PreparedDevice& other) const = default;
};

struct ClaimPrepareResult {
  std::vector<PreparedDevice> devices;
  std::string error;  // empty when prepared

  bool operator==(const ClaimPrepareResult& other) const = default;
};

class ClaimPreparer {
 public:
  virtual ~ClaimPreparer() = default;

  // Keyed by claim uid; one entry per claim of `claims`.
  virtual std::map<std::string, ClaimPrepareResult> Prepare(
      const std::vector<ClaimRef>& claims) = 0;

  // Keyed by claim uid; the value is the error, empty when unprepared.
  virtual std::map<std::string, std::string> Unprepare(
      const std::vector<ClaimRef>& claims) = 0;
};

}  // namespace deviceshare::agent

#endif  // DEVICESHARE_AGENT_CLAIM_PREPARER_H_
