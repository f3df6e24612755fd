// File: bench/churn_audit.h
//
// The churn soak's auditor (bench/churn_soak.cc): the per-GPU ledgers that
// `deviceshare-scheduler serve` exports on /metrics, and the same figures
// recomputed from the API server's pods, so that the two can be compared
// and each checked against the GPUs' capacity.
//
// A pod counts in the recomputation when it is bound (spec.nodeName), has
// not ended (phase neither Succeeded nor Failed) and carries HAMi's
// allocation record (hami.io/vgpu-devices-allocated): each grant adds its
// MiB and cores, and one tenant, to the GPU its uuid names. An unbound
// pod's record does not count: serve holds it only for one reservation
// TTL, and a record whose rollback failed may outlive that.
//
// Functions are pure; nothing here is shared between threads.
#ifndef DEVICESHARE_BENCH_CHURN_AUDIT_H_
#define DEVICESHARE_BENCH_CHURN_AUDIT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace deviceshare::bench {

struct GpuUse {
  int64_t memory_mib = 0;
  int64_t cores = 0;
  int64_t tenants = 0;
  bool operator==(const GpuUse& other) const = default;
};

// What /metrics says of one GPU.
struct GpuLedger {
  std::string node;
  GpuUse used;
  int64_t memory_capacity_mib = 0;
};

// What one scrape of serve's /metrics says.
struct ServeView {
  std::map<std::string, GpuLedger> gpus;  // by uuid
  int64_t reservations_in_flight = 0;
  int64_t pods_allocating = 0;
  int64_t unaccounted_pods = 0;
  int64_t binds = 0;
  int64_t reservations_expired = 0;
  std::map<std::string, int64_t> bind_failures;  // by stage
  int64_t watch_relists = 0;                     // summed over collections
  int64_t watch_errors = 0;
  // The pods' and nodes' watches have their first list in.
  bool watches_synced = false;
  std::vector<std::string> unsynced;  // the collections that have not
};

// InvalidArgument when the text does not parse or lacks the GPU families.
absl::StatusOr<ServeView> ReadServeView(absl::string_view metrics_text);

// The recomputation from the API server's pods (see the file comment).
// `unreadable` counts records that did not decode.
std::map<std::string, GpuUse> UsesFromPods(
    const std::vector<std::shared_ptr<const nlohmann::json>>& pods,
    int* unreadable);

// Limits of the rig's GPUs beyond their memory: HamiNodeObject registers
// devcore 100 and split 10.
inline constexpr int64_t kGpuCores = 100;
inline constexpr int64_t kGpuTenants = 10;

// "uuid: what is over" for each GPU over its capacity, `capacity` giving
// each GPU's memory (a GPU absent from it is over by definition).
std::vector<std::string> OverCapacity(
    const std::map<std::string, GpuUse>& uses,
    const std::map<std::string, GpuLedger>& capacity);

// The GPUs whose ledger differs from the recomputation, as
// "uuid: ledger ... != pods ..." lines.
std::vector<std::string> LedgerDiff(
    const std::map<std::string, GpuLedger>& ledgers,
    const std::map<std::string, GpuUse>& from_pods);

std::map<std::string, GpuUse> UsesOf(
    const std::map<std::string, GpuLedger>& ledgers);

}  // namespace deviceshare::bench

#endif  // DEVICESHARE_BENCH_CHURN_AUDIT_H_
