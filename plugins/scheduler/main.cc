// deviceshare-scheduler: the scheduler's command line.
//
//   deviceshare-scheduler simulate [flags]   (see --help)
//   deviceshare-scheduler serve [flags]
//
// Flags are absl flags; they are written with dashes (--trace-nodes) or
// underscores (--trace_nodes), as `--flag=value` or `--flag value`. Invalid
// input (flags or files) exits 2 with one line naming the file, the
// document or line and the field.
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <new>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "deviceshare/cli/command_flags.h"
#include "deviceshare/config/policy_name.h"
#include "deviceshare/extender/serve.h"
#include "deviceshare/json_text.h"
#include "deviceshare/policy/policy_registry.h"
#include "deviceshare/simulate/defrag_command.h"
#include "deviceshare/simulate/fgd_replay_report.h"
#include "deviceshare/simulate/json_report.h"
#include "deviceshare/simulate/progress_bar.h"
#include "deviceshare/simulate/replay_command.h"
#include "deviceshare/simulate/simulate.h"
#include "deviceshare/simulate/table_report.h"
#include "deviceshare/simulate/trace_loader.h"

ABSL_FLAG(std::string, cluster, "", "cluster YAML (Node objects or nodes:)");
ABSL_FLAG(std::string, pods, "", "multi-document YAML of Pod manifests");
ABSL_FLAG(std::string, trace_nodes, "", "Alibaba trace node CSV");
ABSL_FLAG(std::string, trace_pods, "", "Alibaba trace pod CSV");
ABSL_FLAG(int64_t, synthetic_nodes, 0, "generated nodes");
ABSL_FLAG(int64_t, gpus_per_node, 0, "GPUs per generated node");
ABSL_FLAG(int64_t, synthetic_pods, 0, "generated pods");
ABSL_FLAG(std::string, config, "", "deviceshare config YAML");
ABSL_FLAG(std::string, node_policy, "",
          "binpack | spread | topology-aware | fgd | fragaware | bestfit | "
          "packing");
ABSL_FLAG(
    std::string, gpu_policy, "",
    "binpack | spread | mutex | numa | topology-aware | fgd | fragaware | "
    "bestfit | packing");
ABSL_FLAG(std::string, output, "table", "table | json");
ABSL_FLAG(uint64_t, seed, 0, "shuffle / generator seed");
ABSL_FLAG(int64_t, limit_pods, 0, "schedule only the first N pods");
ABSL_FLAG(bool, reason_counts, true,
          "count every node's reason code for unschedulable pods");
ABSL_FLAG(int64_t, max_reason_examples, 10,
          "example node reasons per unschedulable pod");
ABSL_FLAG(bool, summary_only, false, "table: only summary and notes");
ABSL_FLAG(bool, dra, false, "simulate: run the workload through DRA");
ABSL_FLAG(bool, preemption, false,
          "simulate: a pod that fits nowhere preempts lower-priority pods");
ABSL_FLAG(std::string, replay, "", "simulate: fgd = FGD's replay protocol");
ABSL_FLAG(std::string, policies, "binpack,fgd",
          "replay: policies side by side");
ABSL_FLAG(std::string, seeds, "42-51", "replay: seeds (range, count, list)");
ABSL_FLAG(double, inflate, 1.3, "replay: arrivals as a share of the GPUs");
ABSL_FLAG(std::string, points, "90,94,100,110,120",
          "replay: arrived % columns of the table");
ABSL_FLAG(std::string, plot, "", "replay: SVG plot file");
ABSL_FLAG(std::string, budgets, "",
          "defrag: PodDisruptionBudget YAML for --cluster/--pods");
ABSL_FLAG(int64_t, free_whole_gpus, 0,
          "defrag: targets are N whole GPUs, not the pending pods");
ABSL_FLAG(int64_t, max_moves, 8, "defrag: the longest plan");
ABSL_FLAG(bool, apply, false, "defrag: evict the plan's pods (live only)");
ABSL_FLAG(std::string, kubeconfig, "", "serve: kubeconfig file");
ABSL_FLAG(std::string, address, "0.0.0.0:8888", "serve: HOST:PORT");
ABSL_FLAG(std::string, tls_cert, "", "serve: PEM certificate chain");
ABSL_FLAG(std::string, tls_key, "", "serve: PEM private key");
ABSL_FLAG(std::string, tls_client_ca, "",
          "serve: require client certificates signed by these CAs");
ABSL_FLAG(int64_t, max_connections, 4096,
          "serve: connections open at once, per listener");
ABSL_FLAG(int64_t, body_budget_bytes, 32 << 20,
          "serve: large request bodies admitted at once, in bytes");
ABSL_FLAG(int64_t, webhook_port, 0,
          "serve: admission webhook HTTPS port (0: no webhook)");
ABSL_FLAG(std::string, webhook_tls_cert, "",
          "serve: the webhook's PEM certificate chain");
ABSL_FLAG(std::string, webhook_tls_key, "", "serve: the webhook's PEM key");
ABSL_FLAG(std::string, scheduler_name, "deviceshare-scheduler",
          "serve: the schedulerName the webhook writes");
ABSL_FLAG(absl::Duration, reservation_ttl, absl::Seconds(30),
          "serve: how long a filter reservation waits for its bind");
ABSL_FLAG(absl::Duration, in_flight_timeout, absl::Seconds(60),
          "serve: how long a pod whose node agent has not handed out its "
          "GPUs keeps confusable pods off its node");
ABSL_FLAG(std::string, log_level, "info", "serve: log level");
ABSL_FLAG(int64_t, max_body_bytes, 16 << 20, "serve: request body cap");
ABSL_FLAG(bool, leader_elect, false, "serve: lead by a Lease (replicas)");
ABSL_FLAG(std::string, record_key_file, "",
          "serve: keys that sign allocation records");
ABSL_FLAG(bool, accept_unsigned_records, false,
          "serve: charge unsigned allocation records");
ABSL_FLAG(std::string, leader_elect_resource_name, "deviceshare-scheduler",
          "serve: the Lease's name");
ABSL_FLAG(std::string, leader_elect_resource_namespace, "",
          "serve: the Lease's namespace");
ABSL_FLAG(std::string, leader_elect_identity, "",
          "serve: this replica's holderIdentity");
ABSL_FLAG(absl::Duration, leader_elect_lease_duration, absl::Seconds(15),
          "serve: how long a lease lasts unrenewed");
ABSL_FLAG(absl::Duration, leader_elect_renew_deadline, absl::Seconds(10),
          "serve: how long a leader tries to renew before it stops leading");
ABSL_FLAG(absl::Duration, leader_elect_retry_period, absl::Seconds(2),
          "serve: time between attempts");

namespace {

constexpr char kProgram[] = "deviceshare-scheduler";

// The synopsis of both commands.
constexpr char kUsageHelp[] = R"(Usage:
  deviceshare-scheduler serve [--kubeconfig FILE] [--address HOST:PORT]
                              [--config FILE] [options]
  deviceshare-scheduler simulate --cluster FILE --pods FILE [options]
  deviceshare-scheduler simulate --trace-nodes CSV --trace-pods CSV [options]
  deviceshare-scheduler simulate --replay fgd --trace-nodes CSV
                                 --trace-pods CSV[,CSV...] [replay options]
  deviceshare-scheduler simulate --synthetic-nodes N --gpus-per-node G
                                 --synthetic-pods P [--seed S] [options]
  deviceshare-scheduler defrag --cluster FILE --pods FILE [--budgets FILE]
                               [options]
  deviceshare-scheduler defrag --kubeconfig FILE [--apply] [options]

)";

// What serve does, its flags and its exit status.
constexpr char kServeHelp[] =
    R"(serve: a kube-scheduler extender (HTTP/JSON). kube-scheduler calls
POST /filter, /prioritize, /preempt and /bind (see deploy/); GET /healthz,
/readyz (200 after the first full list of every watched collection) and
/metrics (Prometheus text). State comes from list+watch of Nodes and Pods:
nodes register with hami.io/node-nvidia-register or
volcano.sh/node-vgpu-register, pods carry their allocation records; and of
DeviceClasses, ResourceSlices and ResourceClaims (resource.k8s.io/v1) for
the DRA claims it allocates (kube-scheduler's DynamicResources disabled).
/filter reserves the pod on its best node, claims included (the
reservation expires unless a bind follows); /bind writes the allocation
record in the pod's dialect (hami.io/... or volcano.sh/..., with
bind-phase, node and time keys) and each claim's status.allocation and
status.reservedFor, then creates the Binding, and undoes all of it on
failure. /bind refuses (kube-scheduler retries) while another pod
on the node is still being handed its GPUs by the node agent (bind-phase
allocating) and a container of each asks the same number of GPUs with a
different share: kubelet's Allocate does not say which pod it is for.
/preempt answers, for each node kube-scheduler would preempt on, the
fewest lower-priority pods there whose eviction lets the pod's GPUs fit
(a node where none does is left out); it releases nothing itself.
Logs go to stderr, one key=value line per record.

  --kubeconfig FILE     credentials (current context); default: in-cluster
                        (service account, KUBERNETES_SERVICE_HOST/PORT)
  --address HOST:PORT   listen address (default 0.0.0.0:8888; port 0 picks
                        a free port, logged as "serving address=...")
  --config FILE         deviceshare config YAML, as for simulate
  --tls-cert FILE       serve HTTPS with this PEM certificate chain
  --tls-key FILE        and this PEM key (both or neither); read again
                        when the files change
  --tls-client-ca FILE  with --tls-cert: answer filter, prioritize, bind
                        and preempt only for a client presenting a
                        certificate signed by a CA in this PEM bundle
                        (kube-scheduler's, set in its extender tlsConfig):
                        403 without one, a failed handshake with another;
                        /healthz, /readyz and /metrics need none
  --max-connections N   connections open at once per listener (default
                        4096, at most the open-file limit less 256); one
                        more closes the connection that has waited longest
                        for a request
  --body-budget-bytes N request bodies over 1 MiB are read and handled only
                        while those admitted sum to at most N (default
                        33554432; one alone always is), so memory stays
                        bounded; the others wait, unread
  --webhook-port N      also serve the mutating admission webhook, POST
                        /webhook (and GET /healthz), over HTTPS on this port
                        of --address's host (default 0: no webhook; the
                        deploy kit uses 9443). It sends GPU pods of either
                        dialect to --scheduler-name, applies HAMi's
                        defaults and refuses what could never be placed
  --webhook-tls-cert FILE  the webhook's PEM certificate chain and
  --webhook-tls-key FILE   PEM key (both required with --webhook-port);
                        read again when the files change (checked at most
                        once a second, on a new connection); a pair that
                        does not load keeps the previous one
  --scheduler-name NAME the spec.schedulerName the webhook writes
                        (default deviceshare-scheduler)
  --reservation-ttl D   how long a filter reservation (or an unbound
                        allocation record) holds room without a bind
                        (default 30s; e.g. 45s, 2m)
  --in-flight-timeout D how long such a pod keeps confusable pods off its
                        node if its node agent never reports (default 60s;
                        0 turns the rule off)
  --max-body-bytes N    larger request bodies get 413 (default 16777216)
  --log-level L         trace | debug | info (default) | warn | error | off
  --leader-elect        run as one of several replicas: only the one that
                        holds a coordination.k8s.io/v1 Lease is ready and
                        answers filter, prioritize, preempt and bind; the
                        others keep their watches (a failover needs no
                        relist) and answer that they do not lead
  --leader-elect-resource-name N       the Lease (default
                        deviceshare-scheduler)
  --leader-elect-resource-namespace NS its namespace (default: $POD_NAMESPACE,
                        else kube-system)
  --leader-elect-identity ID  this replica's holderIdentity (default
                        <hostname>_<random>)
  --leader-elect-lease-duration D   how long others wait before taking an
                        unrenewed lease (default 15s)
  --leader-elect-renew-deadline D   a leader that could not renew for this
                        long stops answering, before anyone else may take
                        over (default 10s; below the lease duration)
  --leader-elect-retry-period D     time between attempts (default 2s)
  --record-key-file FILE  sign every allocation record /bind writes
                        (deviceshare.io/record-signature: HMAC-SHA256 over
                        the record, the pod uid and the node) with the first
                        key of FILE (lines `<id>: <base64 secret>`, from a
                        Secret; re-read when it changes), and charge records
                        read back only when a key of FILE signed them (or the
                        pod is already Running). Without it nothing is signed
                        or checked
  --accept-unsigned-records  charge unsigned records too (a cluster
                        migrating from HAMi's or Volcano's scheduler); forged
                        ones never

Exit status of serve: 0 after SIGTERM/SIGINT (requests in flight finish);
2 invalid flags or config; 1 cannot start (credentials, address).

)";

// What simulate does and its inputs, up to the trace GPU memory table
// (TraceGpuMemoryHelp) that the trace flags end with.
constexpr char kSimulateInputsHelp[] = R"(simulate:
Replays a cluster and a workload through the deviceshare Scheduler (the
code path the kube-scheduler extender uses): every node is registered, then
each pod is scheduled once, in order, with no departures. Prints where every
pod went (node, GPUs, share, the environment the node agent injects), why
the others fit nowhere, and the packing and speed figures.

Inputs (exactly one kind):
  --cluster FILE        YAML: Kubernetes Node objects with a registration
                        annotation (hami.io/node-nvidia-register or
                        volcano.sh/node-vgpu-register; several documents
                        and/or kind: List), or the short form:
                          nodes:
                          - name: gpu-a
                            cpu_milli: 64000        # optional
                            memory_mib: 262144      # optional
                            dra: false              # optional
                            gpus:
                            - {model: "NVIDIA A100-SXM4-80GB", memory_mib: 81920,
                               count: 8, split: 10, numa: 0, mode: hami-core}
                        GPU keys: model, memory_mib (required), count (1),
                        split (nvidia.deviceSplitCount), numa (0), mode
                        (hami-core | mig | mps; each is served unless the
                        config's scheduler.modes leaves it off), uuid (count
                        1 only; default generated
                        GPU-<hash of node>-<hash>-4000-8000-<index>), healthy
                        (true), cores (core capacity %, 100 x
                        deviceCoreScaling). memory_mib is scaled by
                        deviceMemoryScaling. Unknown keys are errors.
                        dra: true publishes the node's GPUs as the node
                        agent's DRA ResourceSlices (`serve --dra`) instead
                        of a registration annotation. Object files may
                        also hold ResourceSlice and DeviceClass objects;
                        without DeviceClasses, those of
                        deploy/dra are used.
  --pods FILE           multi-document YAML of Pod manifests (Volcano or
                        HAMi dialect; also kind: List / PodList, e.g.
                        kubectl get pods -o json|yaml, read an item at a
                        time: any size), scheduled in file order, and the
                        ResourceClaims and ResourceClaimTemplates
                        (resource.k8s.io/v1) their spec.resourceClaims
                        name; a template's claim is made per pod as
                        <pod>-<claim>. A pod without metadata.uid gets
                        namespace/name. A pod with an allocation record
                        (hami.io/vgpu-devices-allocated,
                        volcano.sh/vgpu-ids-new) is charged as it stands
                        before the others are scheduled. Pods' priorities
                        (--preemption): spec.priority, else
                        spec.priorityClassName from the PriorityClass
                        objects (scheduling.k8s.io/v1) of this file (an
                        unknown name is an error), else the globalDefault
                        class, else 0.
  --trace-nodes CSV     Alibaba cluster-trace-gpu-v2023 node list
  --trace-pods CSV      and pod list (columns found by header name). Pods
                        run in creation_time order. num_gpu=1 with
                        0<gpu_milli<1000 asks one GPU with
                        cores=ceil(gpu_milli/10)% and memory=ceil(gpu_milli/10)%
                        of the card (exact: the files' gpu_milli are
                        multiples of 10); other num_gpu>=1 ask whole GPUs
                        (cores 100); num_gpu=0 asks CPU and memory only.
                        Node CPU and memory are enforced. GPU models
                        register as Alibaba[<model>]; gpu_spec A|B is an
                        exact model filter. GPU memory in MiB (* = not
                        published, assumed; unknown models 32768):
                        )";

// The rest of the inputs, after the trace GPU memory table.
constexpr char kSyntheticInputsHelp[] = R"(.
  --synthetic-nodes N   generated cluster: nodes node-00000.. with
  --gpus-per-node G     G x A100-SXM4-80GB (two NUMA halves), 128 CPUs,
  --synthetic-pods P    1 TiB; P pods: 70% a share of one GPU (memory
                        2..40 GiB step 2, cores 0..60% step 10), 20% one
                        whole GPU, 10% 2/4/8 whole GPUs (at most G).
                        Deterministic for --seed (default 1).

)";

// simulate's options.
constexpr char kSimulateOptionsHelp[] = R"(Options:
  --config FILE         deviceshare config YAML (scheduler: and nvidia:
                        sections, or a ConfigMap); defaults otherwise
  --node-policy P       binpack | spread | topology-aware | fgd |
                        fragaware | bestfit | packing: overrides
                        scheduler.nodePolicy
  --gpu-policy P        binpack | spread | mutex | numa | topology-aware |
                        fgd | fragaware | bestfit | packing: overrides
                        scheduler.gpuPolicy. fgd, bestfit and packing are
                        FGD's policy and two of its baselines (fgd weighs
                        the typical workload, which only --replay fgd gives
                        it; without one every node scores 50); fragaware
                        learns it from the pods it sees (or takes
                        scheduler.typicalWorkload)
  --output F            table (default) | json
  --seed N              cluster/trace: shuffle the pod order with
                        std::mt19937_64(N) (Fisher-Yates); synthetic: the
                        generator's seed
  --limit-pods N        schedule only the first N pods (after ordering);
                        without --seed, --pods' pending pods past the
                        first N are counted but not read (nor checked),
                        while its running pods, quotas and classes are
                        all read
  --max-reason-examples N
                        example node reasons kept per unschedulable pod
                        (default 10: each reason code once, then by node
                        name)
  --reason-counts=false do not count every node's reason code for
                        unschedulable pods (reason_counts is then empty;
                        counting makes a failed decision O(nodes x GPUs))
  --summary-only        table: print only the summary and the notes
  --dra                 run the workload through DRA: every node's GPUs
                        are published as DRA devices and each container's
                        GPU request becomes a ResourceClaim (memory in
                        MiB and cores as capacity requests; several GPUs
                        on distinct devices). A memory percentage below
                        100 has no DRA form and is an error
  --preemption          a pod that fits nowhere preempts pods of lower
                        priority, as kube-scheduler would: on each node
                        the fewest victims (then the lowest highest
                        priority, then the least share freed beyond the
                        need); of the nodes, kube-scheduler's pick (fewest
                        broken budgets, lowest highest victim priority,
                        smallest priority sum, fewest victims, latest
                        placed, node name). Victims
                        are deleted, not re-queued (listed under Evicted /
                        "evictions"); preemptionPolicy Never opts out;
                        PodDisruptionBudgets of the pods file are kept
                        where some node's victims allow it
  --help                this text

)";

// simulate --replay fgd.
constexpr char kReplayHelp[] =
    R"(Replay (--replay fgd): FGD's trace replay protocol (ATC'23; see
docs/reference/fgd.md), through the same scheduler: per seed the trace's
pods sorted by name and shuffled, then samples of the trace appended up to
--inflate x the cluster's GPUs, the nodes renamed in a seeded order (score
ties go to the smaller name), each pod scheduled once. After each pod:
arrived = GPU milli of the pods tried so far, allocated = of those placed,
as % of the GPUs. Prints unallocated % (100 - allocated) at the --points,
mean ± sd over the seeds, per trace and policy.
  --trace-pods CSV,...  one or more pod lists (each a trace, named after
                        its file: openb_pod_list_default.csv -> default)
  --policies P,...      policies side by side, each at both levels
                        (default binpack,fgd); fgd weighs the trace's
                        typical pods, as FGD does; fragaware learns its
                        own; the runs use every core
  --seeds S             42-51 (default), a count from 42, or a list
  --inflate X           arrivals up to X x the GPUs (default 1.3)
  --points A,...        arrived % columns (default 90,94,100,110,120)
  --output F            table (default) | csv (every run's whole curve:
                        trace,policy,seed,arrived_pct,allocated_pct,
                        unallocated_pct)
  --plot FILE           also write an SVG plot of unallocated % against
                        arrived % (mean over seeds), one panel per trace
  --config FILE         the base config of every policy

)";

// simulate's output formats and exit status.
constexpr char kSimulateOutputHelp[] = R"(Output:
  table   one line per placed container with GPUs (pod, node, score,
          container, GPUs, memory and cores per GPU, mode, uuids), one
          line per device allocated to a pod's DRA claims, the
          unschedulable pods with their reasons, the summary and notes. A
          progress bar is drawn on stderr when it is a terminal and the run
          lasts more than a second.
  json    {"placements": [{"pod", "node", "containers": [{"name",
          "devices": [{"uuid", "mode", "memory_mib", "cores", mig:
          "mig_profile", "mig_start", "mig_slices", "mig_action",
          configmap: "mig_group", "mig_position"}], "env"}], "claims"
          (DRA): [{"name", "claim", "results": [{"request", "driver",
          "pool", "device", "consumedCapacity", "shareID"}]}], "score",
          "mode_choice" (pod named no mode, several backends asked)}],
          "unschedulable": [{"pod", "reasons": {node: reason},
          "reason_counts": {code: nodes}, "nodes_rejecting"}], "summary":
          {"pods", "placed", "unschedulable", "gpu_memory_allocated_pct",
          "gpu_cores_allocated_pct", "gpus_fully_idle",
          "decisions_per_second", "p99_decision_us", "nodes", "gpus",
          "gpus_unhealthy", "gpu_memory_capacity_mib",
          "gpu_memory_allocated_mib", "gpu_core_capacity",
          "gpu_cores_allocated", "decision_seconds_total",
          "p50_decision_us", "max_decision_us", "evicted"
          (--preemption)}, "evictions" (--preemption): [{"pod", "node",
          "for"}], "notes": [...]}
  Reasons start with a stable code (InsufficientMemory, SplitExhausted,
  ExclusiveConflict, TypeMismatch, UuidMismatch, InsufficientCpu,
  MigNoSlot, MigNoProfile, MigUnknownModel, MpsClientsExhausted, ...).
  gpu_*_allocated_pct: used / capacity over all GPUs; decisions_per_second:
  pods / time spent in Schedule (only that call is timed, steady_clock);
  p99_decision_us: nearest-rank 99th percentile of one Schedule call.

Exit status: 0 done (unschedulable pods are results, not errors); 2 invalid
flags or input (one line naming the file, document or line, and field;
an input file holds at most 1 GiB, a node at most 1024 GPUs); 1 internal
error, out of memory included.
)";

// The trace GPU memory table, four models per help line.
std::string TraceGpuMemoryHelp() {
  std::string models;
  int in_line = 0;
  for (const auto& entry : deviceshare::simulate::kTraceGpuMemory) {
    if (in_line == 4) {
      absl::StrAppend(&models, ",\n                        ");
      in_line = 0;
    } else if (!models.empty()) {
      absl::StrAppend(&models, ", ");
    }
    absl::StrAppend(&models, entry.model, " ", entry.memory_mib,
                    entry.disclosed ? "" : "*");
    ++in_line;
  }
  return models;
}

// Printed for --help anywhere on the command line, whatever the command.
std::string HelpText() {
  return absl::StrCat(kUsageHelp, kServeHelp, kSimulateInputsHelp,
                      TraceGpuMemoryHelp(), kSyntheticInputsHelp,
                      kSimulateOptionsHelp, kReplayHelp, kSimulateOutputHelp,
                      deviceshare::simulate::kDefragHelp);
}

using ::deviceshare::cli::FlagSpec;
using ::deviceshare::cli::IsHelp;

constexpr FlagSpec kSimulateFlags[] = {
    {"cluster", false},
    {"pods", false},
    {"trace_nodes", false},
    {"trace_pods", false},
    {"synthetic_nodes", false},
    {"gpus_per_node", false},
    {"synthetic_pods", false},
    {"config", false},
    {"node_policy", false},
    {"gpu_policy", false},
    {"output", false},
    {"seed", false},
    {"limit_pods", false},
    {"max_reason_examples", false},
    {"summary_only", true},
    {"reason_counts", true},
    {"dra", true},
    {"preemption", true},
    {"replay", false},
    {"policies", false},
    {"seeds", false},
    {"inflate", false},
    {"points", false},
    {"plot", false},
};

constexpr FlagSpec kServeFlags[] = {
    {"kubeconfig", false},
    {"address", false},
    {"config", false},
    {"tls_cert", false},
    {"tls_key", false},
    {"tls_client_ca", false},
    {"max_connections", false},
    {"body_budget_bytes", false},
    {"reservation_ttl", false},
    {"log_level", false},
    {"max_body_bytes", false},
    {"in_flight_timeout", false},
    {"webhook_port", false},
    {"webhook_tls_cert", false},
    {"webhook_tls_key", false},
    {"scheduler_name", false},
    {"leader_elect", true},
    {"record_key_file", false},
    {"accept_unsigned_records", true},
    {"leader_elect_resource_name", false},
    {"leader_elect_resource_namespace", false},
    {"leader_elect_identity", false},
    {"leader_elect_lease_duration", false},
    {"leader_elect_renew_deadline", false},
    {"leader_elect_retry_period", false},
};

int Fail(absl::string_view command, absl::string_view message) {
  std::cerr << kProgram << " " << command << ": "
            << absl::StrReplaceAll(message, {{"\n", " "}}) << "\n";
  return 2;
}

int Fail(absl::string_view message) { return Fail("simulate", message); }

std::optional<std::string> ParseFlags(int argc, char** argv,
                                      absl::Span<const FlagSpec> flags,
                                      std::set<std::string>& given) {
  return ::deviceshare::cli::ParseCommandFlags(argc, argv, flags, given);
}

// Sets `policy` from a --*-policy flag's text unless it is empty; returns
// the error message for an unknown policy.
std::optional<std::string> ParsePolicy(absl::string_view flag,
                                       const std::string& text,
                                       std::optional<std::string>& policy) {
  if (text.empty()) return std::nullopt;
  auto parsed = deviceshare::ParsePolicyName(text, flag);
  if (!parsed.ok()) return std::string(parsed.status().message());
  const deviceshare::PolicyRegistry& registry = deviceshare::BuiltinPolicies();
  if (!registry.Contains(*parsed)) {
    return absl::StrCat(flag, ": \"", text,
                        "\" is not a registered policy (registered: ",
                        absl::StrJoin(registry.RegisteredNames(), ", "), ")");
  }
  policy = *parsed;
  return std::nullopt;
}

// HOST:PORT, [IPv6]:PORT or :PORT (all interfaces).
std::optional<std::string> ParseAddress(
    const std::string& address, deviceshare::extender::ServerOptions& server) {
  const size_t colon = address.rfind(':');
  int port = -1;
  if (colon == std::string::npos ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 0 ||
      port > 65535) {
    return absl::StrCat("--address: \"", address,
                        "\" is not HOST:PORT with a port in 0..65535");
  }
  std::string host = address.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  server.host = host.empty() ? "0.0.0.0" : host;
  server.port = port;
  return std::nullopt;
}

// The webhook flags: none, or a port with both certificate files.
std::optional<std::string> ParseWebhookFlags(
    deviceshare::extender::ServeOptions& options) {
  options.scheduler_name = absl::GetFlag(FLAGS_scheduler_name);
  if (options.scheduler_name.empty()) return "--scheduler-name: is empty";
  const int64_t port = absl::GetFlag(FLAGS_webhook_port);
  const std::string cert = absl::GetFlag(FLAGS_webhook_tls_cert);
  const std::string key = absl::GetFlag(FLAGS_webhook_tls_key);
  if (port < 0 || port > 65535) {
    return absl::StrCat("--webhook-port: ", port, " is not in 0..65535");
  }
  if (port == 0) {
    if (!cert.empty()) return "--webhook-tls-cert: needs --webhook-port";
    if (!key.empty()) return "--webhook-tls-key: needs --webhook-port";
    return std::nullopt;
  }
  if (cert.empty()) {
    return "--webhook-tls-cert: required with --webhook-port (the API "
           "server calls webhooks over HTTPS only)";
  }
  if (key.empty()) return "--webhook-tls-key: required with --webhook-port";
  deviceshare::extender::WebhookOptions webhook;
  webhook.host = options.server.host;
  webhook.port = static_cast<int>(port);
  webhook.tls_cert_file = cert;
  webhook.tls_key_file = key;
  webhook.max_body_bytes = options.server.max_body_bytes;
  webhook.max_connections = options.server.max_connections;
  options.webhook = webhook;
  return std::nullopt;
}

// The --leader-elect flags; nullopt without --leader-elect. The options
// are checked when the elector is made.
std::optional<deviceshare::kube::LeaderElectionOptions>
LeaderElectionFromFlags() {
  if (!absl::GetFlag(FLAGS_leader_elect)) return std::nullopt;
  deviceshare::kube::LeaderElectionOptions election;
  election.name = absl::GetFlag(FLAGS_leader_elect_resource_name);
  election.lease_namespace =
      absl::GetFlag(FLAGS_leader_elect_resource_namespace);
  if (election.lease_namespace.empty()) {
    const char* pod_namespace = std::getenv("POD_NAMESPACE");
    election.lease_namespace =
        pod_namespace != nullptr && *pod_namespace != '\0' ? pod_namespace
                                                           : "kube-system";
  }
  election.identity = absl::GetFlag(FLAGS_leader_elect_identity);
  if (election.identity.empty()) {
    char host[256] = {};
    gethostname(host, sizeof(host) - 1);
    std::random_device random;
    election.identity =
        absl::StrCat(host, "_", absl::Hex(random(), absl::kZeroPad8));
  }
  election.lease_duration = absl::GetFlag(FLAGS_leader_elect_lease_duration);
  election.renew_deadline = absl::GetFlag(FLAGS_leader_elect_renew_deadline);
  election.retry_period = absl::GetFlag(FLAGS_leader_elect_retry_period);
  return election;
}

int Serve(int argc, char** argv) {
  std::set<std::string> given;
  if (std::optional<std::string> error =
          ParseFlags(argc, argv, kServeFlags, given)) {
    return Fail("serve", *error);
  }
  deviceshare::extender::ServeOptions options;
  options.kubeconfig = absl::GetFlag(FLAGS_kubeconfig);
  options.config_path = absl::GetFlag(FLAGS_config);
  if (auto error = ParseAddress(absl::GetFlag(FLAGS_address), options.server)) {
    return Fail("serve", *error);
  }
  options.server.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  options.server.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  const int64_t max_body = absl::GetFlag(FLAGS_max_body_bytes);
  if (max_body < 1024) {
    return Fail("serve", absl::StrCat("--max-body-bytes: ", max_body,
                                      " is below the minimum of 1024"));
  }
  options.server.max_body_bytes = static_cast<size_t>(max_body);
  options.server.tls_client_ca_file = absl::GetFlag(FLAGS_tls_client_ca);
  if (!options.server.tls_client_ca_file.empty() &&
      options.server.tls_cert_file.empty()) {
    return Fail("serve", "--tls-client-ca: needs --tls-cert and --tls-key");
  }
  const int64_t max_connections = absl::GetFlag(FLAGS_max_connections);
  if (max_connections < 1 || max_connections > 1'000'000) {
    return Fail("serve", absl::StrCat("--max-connections: ", max_connections,
                                      " is outside 1 to 1000000"));
  }
  options.server.max_connections = static_cast<int>(max_connections);
  const int64_t budget = absl::GetFlag(FLAGS_body_budget_bytes);
  if (budget < (1 << 20)) {
    return Fail("serve", absl::StrCat("--body-budget-bytes: ", budget,
                                      " is below the minimum of 1048576"));
  }
  options.server.large_body_budget = static_cast<size_t>(budget);
  if (auto error = ParseWebhookFlags(options)) return Fail("serve", *error);
  options.reservation_ttl = absl::GetFlag(FLAGS_reservation_ttl);
  if (options.reservation_ttl <= absl::ZeroDuration()) {
    return Fail("serve", "--reservation-ttl: must be positive");
  }
  options.in_flight_timeout = absl::GetFlag(FLAGS_in_flight_timeout);
  if (options.in_flight_timeout < absl::ZeroDuration()) {
    return Fail("serve", "--in-flight-timeout: must not be negative");
  }
  options.log_level = absl::GetFlag(FLAGS_log_level);
  options.leader_election = LeaderElectionFromFlags();
  options.record_key_file = absl::GetFlag(FLAGS_record_key_file);
  options.accept_unsigned_records =
      absl::GetFlag(FLAGS_accept_unsigned_records);
  absl::Status status = deviceshare::extender::Serve(options);
  if (status.ok()) return 0;
  std::cerr << kProgram << " serve: " << status.message() << "\n";
  return status.code() == absl::StatusCode::kInvalidArgument ||
                 status.code() == absl::StatusCode::kNotFound ||
                 status.code() == absl::StatusCode::kResourceExhausted
             ? 2
             : 1;
}

// Fills `options` from the simulate flags (`given`: those on the command
// line) and checks --output; returns the error message for a bad flag.
std::optional<std::string> SimulateOptionsFromFlags(
    const std::set<std::string>& given,
    deviceshare::simulate::SimulateOptions& options) {
  options.cluster_path = absl::GetFlag(FLAGS_cluster);
  options.pods_path = absl::GetFlag(FLAGS_pods);
  options.trace_nodes_path = absl::GetFlag(FLAGS_trace_nodes);
  options.trace_pods_path = absl::GetFlag(FLAGS_trace_pods);
  options.config_path = absl::GetFlag(FLAGS_config);
  if (given.count("synthetic-nodes")) {
    options.synthetic_nodes = absl::GetFlag(FLAGS_synthetic_nodes);
  }
  if (given.count("gpus-per-node")) {
    options.gpus_per_node = absl::GetFlag(FLAGS_gpus_per_node);
  }
  if (given.count("synthetic-pods")) {
    options.synthetic_pods = absl::GetFlag(FLAGS_synthetic_pods);
  }
  if (given.count("seed")) options.seed = absl::GetFlag(FLAGS_seed);
  if (given.count("limit-pods")) {
    options.limit_pods = absl::GetFlag(FLAGS_limit_pods);
  }
  const int64_t examples = absl::GetFlag(FLAGS_max_reason_examples);
  if (examples < 0) return "--max-reason-examples: must be >= 0";
  options.max_reason_examples = static_cast<size_t>(examples);
  options.reason_counts = absl::GetFlag(FLAGS_reason_counts);
  options.dra = absl::GetFlag(FLAGS_dra);
  options.preemption = absl::GetFlag(FLAGS_preemption);
  if (auto error =
          ParsePolicy("--node-policy", absl::GetFlag(FLAGS_node_policy),
                      options.node_policy)) {
    return error;
  }
  if (auto error = ParsePolicy("--gpu-policy", absl::GetFlag(FLAGS_gpu_policy),
                               options.gpu_policy)) {
    return error;
  }
  const std::string output = absl::GetFlag(FLAGS_output);
  if (output != "table" && output != "json") {
    return absl::StrCat("--output: \"", output, "\" is not one of table, json");
  }
  return std::nullopt;
}

// Runs the simulation with a progress bar and prints its report in the
// --output format; returns the exit status.
int RunSimulation(const deviceshare::simulate::SimulateOptions& options) {
  namespace sim = ::deviceshare::simulate;
  absl::StatusOr<sim::SimulationReport> report;
  {
    sim::ProgressBar progress;
    report = sim::Simulate(options, [&progress](size_t done, size_t total) {
      progress.Update(done, total);
    });
    progress.Finish();
  }
  if (!report.ok()) {
    const absl::StatusCode code = report.status().code();
    if (code == absl::StatusCode::kInternal ||
        code == absl::StatusCode::kUnknown) {
      std::cerr << kProgram
                << " simulate: internal error: " << report.status().message()
                << "\n";
      return 1;
    }
    return Fail(report.status().message());
  }
  if (absl::GetFlag(FLAGS_output) == "json") {
    std::cout << deviceshare::JsonText(sim::ReportJson(*report), 2) << "\n";
  } else {
    sim::TableOptions table;
    table.details = !absl::GetFlag(FLAGS_summary_only);
    std::cout << sim::ReportTable(*report, table);
  }
  return 0;
}

// --points: arrived percents, 0..1000.
std::optional<std::string> ParsePoints(const std::string& text,
                                       std::vector<int>& points) {
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int point = 0;
    if (!absl::SimpleAtoi(part, &point) || point < 0 || point > 1000) {
      return absl::StrCat("--points: \"", part,
                          "\" is not an arrived percent 0..1000");
    }
    points.push_back(point);
  }
  return std::nullopt;
}

// simulate --replay fgd; returns the exit status.
int Replay(const std::set<std::string>& given) {
  namespace sim = ::deviceshare::simulate;
  if (absl::GetFlag(FLAGS_replay) != "fgd") {
    return Fail(absl::StrCat("--replay: \"", absl::GetFlag(FLAGS_replay),
                             "\" is not a replay protocol (fgd)"));
  }
  for (const char* other :
       {"cluster", "pods", "synthetic-nodes", "seed", "limit-pods", "dra",
        "preemption", "node-policy", "gpu-policy"}) {
    if (given.count(other)) {
      return Fail(absl::StrCat("--", other, " does not go with --replay"));
    }
  }
  sim::ReplayCommandOptions options;
  options.trace_nodes_path = absl::GetFlag(FLAGS_trace_nodes);
  options.trace_pods_paths =
      absl::StrSplit(absl::GetFlag(FLAGS_trace_pods), ',', absl::SkipEmpty());
  options.config_path = absl::GetFlag(FLAGS_config);
  options.policies =
      absl::StrSplit(absl::GetFlag(FLAGS_policies), ',', absl::SkipEmpty());
  options.inflate = absl::GetFlag(FLAGS_inflate);
  absl::StatusOr<std::vector<uint64_t>> seeds =
      sim::ParseSeeds("--seeds", absl::GetFlag(FLAGS_seeds));
  if (!seeds.ok()) return Fail(seeds.status().message());
  options.seeds = *std::move(seeds);
  std::vector<int> points;
  if (auto error = ParsePoints(absl::GetFlag(FLAGS_points), points)) {
    return Fail(*error);
  }
  const std::string output = absl::GetFlag(FLAGS_output);
  if (output != "table" && output != "csv") {
    return Fail(
        absl::StrCat("--output: \"", output, "\" is not one of table, csv"));
  }
  absl::StatusOr<sim::ReplayResult> result;
  {
    sim::ProgressBar progress;
    result = sim::RunReplayCommand(options, [&](size_t done, size_t total) {
      progress.Update(done, total);
    });
  }
  if (!result.ok()) return Fail(result.status().message());
  const std::string plot = absl::GetFlag(FLAGS_plot);
  if (!plot.empty()) {
    std::ofstream out(plot);
    out << sim::ReplaySvg(*result);
    if (!out.good())
      return Fail(absl::StrCat("--plot ", plot, ": cannot write"));
  }
  if (output == "csv") {
    std::cout << sim::ReplayCsv(*result);
  } else {
    std::cout << sim::ReplayTable(*result, points)
              << absl::StrFormat("%d runs in %.1f s\n",
                                 result->series.size() * options.seeds.size(),
                                 result->wall_seconds);
  }
  return 0;
}

int Simulate(int argc, char** argv) {
  std::set<std::string> given;
  if (std::optional<std::string> error =
          ParseFlags(argc, argv, kSimulateFlags, given)) {
    return Fail(*error);
  }
  if (given.count("replay")) return Replay(given);
  for (const char* replay_only :
       {"policies", "seeds", "inflate", "points", "plot"}) {
    if (given.count(replay_only)) {
      return Fail(absl::StrCat("--", replay_only, " needs --replay fgd"));
    }
  }
  deviceshare::simulate::SimulateOptions options;
  if (std::optional<std::string> error =
          SimulateOptionsFromFlags(given, options)) {
    return Fail(*error);
  }
  return RunSimulation(options);
}

constexpr FlagSpec kDefragFlags[] = {
    {"cluster", false},    {"pods", false},   {"budgets", false},
    {"kubeconfig", false}, {"config", false}, {"node_policy", false},
    {"gpu_policy", false}, {"output", false}, {"free_whole_gpus", false},
    {"max_moves", false},  {"apply", true},
};

// Fills the defrag options' inputs from the flags; the error message for a
// bad combination.
std::optional<std::string> DefragInputsFromFlags(
    deviceshare::simulate::DefragOptions& options) {
  deviceshare::simulate::DefragSource& source = options.source;
  source.cluster_path = absl::GetFlag(FLAGS_cluster);
  source.pods_path = absl::GetFlag(FLAGS_pods);
  source.budgets_path = absl::GetFlag(FLAGS_budgets);
  source.config_path = absl::GetFlag(FLAGS_config);
  options.kubeconfig = absl::GetFlag(FLAGS_kubeconfig);
  const bool files = !source.cluster_path.empty() || !source.pods_path.empty();
  if (files == !options.kubeconfig.empty()) {
    return "give --cluster and --pods, or --kubeconfig (one of them)";
  }
  if (files && source.cluster_path.empty()) return "--pods needs --cluster";
  if (files && source.pods_path.empty()) return "--cluster needs --pods";
  if (!files && !source.budgets_path.empty()) {
    return "--budgets goes with --cluster and --pods (a live cluster's "
           "budgets are read from it)";
  }
  options.apply = absl::GetFlag(FLAGS_apply);
  if (options.apply && files) {
    return "--apply needs --kubeconfig: files have no pods to evict";
  }
  if (auto error =
          ParsePolicy("--node-policy", absl::GetFlag(FLAGS_node_policy),
                      source.node_policy)) {
    return error;
  }
  return ParsePolicy("--gpu-policy", absl::GetFlag(FLAGS_gpu_policy),
                     source.gpu_policy);
}

int Defrag(int argc, char** argv) {
  std::set<std::string> given;
  if (auto error = ParseFlags(argc, argv, kDefragFlags, given)) {
    return Fail("defrag", *error);
  }
  deviceshare::simulate::DefragOptions options;
  if (auto error = DefragInputsFromFlags(options)) {
    return Fail("defrag", *error);
  }
  const int64_t whole = absl::GetFlag(FLAGS_free_whole_gpus);
  if (whole < 0 || whole > 100000) {
    return Fail("defrag", absl::StrCat("--free-whole-gpus: ", whole,
                                       " is outside [0, 100000]"));
  }
  options.free_whole_gpus = static_cast<int32_t>(whole);
  const int64_t moves = absl::GetFlag(FLAGS_max_moves);
  if (moves < 0 || moves > 100000) {
    return Fail("defrag", absl::StrCat("--max-moves: ", moves,
                                       " is outside [0, 100000]"));
  }
  options.max_moves = static_cast<int32_t>(moves);
  const std::string output = absl::GetFlag(FLAGS_output);
  if (output != "table" && output != "json") {
    return Fail("defrag", absl::StrCat("--output: \"", output,
                                       "\" is not one of table, json"));
  }
  options.json = output == "json";
  return deviceshare::simulate::RunDefrag(options, std::cout, std::cerr);
}

}  // namespace

// The commands, by the first argument.
int Run(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (IsHelp(argv[i])) {
      std::cout << HelpText();
      return 0;
    }
  }
  if (argc >= 2 && absl::string_view(argv[1]) == "serve")
    return Serve(argc, argv);
  if (argc >= 2 && absl::string_view(argv[1]) == "defrag")
    return Defrag(argc, argv);
  if (argc < 2 || absl::string_view(argv[1]) != "simulate") {
    std::cerr << kProgram << ": "
              << (argc < 2 ? std::string("no command")
                           : absl::StrCat("unknown command \"", argv[1], "\""))
              << "; the commands are `serve`, `simulate` and `defrag` (see "
                 "--help)\n";
    return 2;
  }
  return Simulate(argc, argv);
}

int main(int argc, char** argv) {
  // A peer that closed its end (a kube-apiserver killed mid-request, a
  // client gone) must fail that one write, not end the process: OpenSSL
  // writes to the socket without MSG_NOSIGNAL, and SIGPIPE's default
  // action kills silently, without a log line or a core.
  std::signal(SIGPIPE, SIG_IGN);
  // An input too big for this machine (a count that passed its range but
  // not the memory, a stream without end) is an internal error with a
  // line saying so, exit 1 as --help promises, not an abort.
  try {
    return Run(argc, argv);
  } catch (const std::bad_alloc&) {
    std::cerr << kProgram
              << ": out of memory (an input or a count too large for this "
                 "machine)\n";
    return 1;
  } catch (const std::length_error& error) {
    std::cerr << kProgram << ": input too large: " << error.what() << "\n";
    return 1;
  }
}
