// File: extender/serve.h
//
// `deviceshare-scheduler serve`: wires the pieces together and runs until
// SIGTERM or SIGINT. Config file -> Scheduler; kubeconfig (or in-cluster
// credentials) -> API client; list+watch of Nodes, Pods, DeviceClasses,
// ResourceSlices and ResourceClaims -> Extender; Extender -> HTTP(S)
// server; with a webhook, the admission webhook's HTTPS listener beside it
// (extender/webhook_server.h). Reservations are swept every second. /readyz
// waits for the first list of each collection, except the resource.k8s.io/v1
// ones when the API server does not serve them (404: a cluster without DRA) or
// does not let the extender read them (403).
//
// With leader election (several replicas), every replica watches and keeps
// its ledgers current, but only the one holding the Lease
// (kube/leader_elector.h) is ready and answers the verbs; the others answer
// that they do not lead. So a failover needs no relist: the new leader's
// state is already warm. The webhook is served by every replica (it keeps
// no state).
#ifndef DEVICESHARE_EXTENDER_SERVE_H_
#define DEVICESHARE_EXTENDER_SERVE_H_

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "deviceshare/admission/pod_admission.h"
#include "deviceshare/extender/extender_server.h"
#include "deviceshare/extender/webhook_server.h"
#include "deviceshare/kube/leader_elector.h"

namespace deviceshare::extender {

struct ServeOptions {
  std::string kubeconfig;   // empty: in-cluster credentials
  std::string config_path;  // empty: defaults
  ServerOptions server;
  absl::Duration reservation_ttl = absl::Seconds(30);
  absl::Duration in_flight_timeout = absl::Seconds(60);  // ExtenderOptions
  std::string log_level = "info";  // trace|debug|info|warn|error|off
  // Set: serve the mutating admission webhook too (--webhook-port).
  std::optional<WebhookOptions> webhook;
  // The schedulerName the webhook writes (--scheduler-name).
  std::string scheduler_name = admission::kDefaultSchedulerName;
  // Set: run as one of several replicas, leading by this Lease
  // (--leader-elect and its flags).
  std::optional<kube::LeaderElectionOptions> leader_election;
  // Set: sign the allocation records /bind writes with the first key of
  // this file and check those read back (--record-key-file).
  std::string record_key_file;
  // Charge unsigned records read back (--accept-unsigned-records).
  bool accept_unsigned_records = false;
};

// Sets the level of the extender's log (stderr, one line per record):
// trace | debug | info | warn | error | off; InvalidArgument naming the
// flag otherwise.
absl::Status SetLogLevel(const std::string& level);

// Runs the extender; returns when a signal asks it to stop (OK) or when it
// cannot start (the error names the flag or file at fault).
absl::Status Serve(const ServeOptions& options);

}  // namespace deviceshare::extender

#endif  // DEVICESHARE_EXTENDER_SERVE_H_
