package deviceshare

import "encoding/json"

// Decision is where a pod goes (Placed) or why it goes nowhere. The
// fields are the C API's decision JSON (deviceshare/c/deviceshare.h);
// Raw keeps that text as it came.
type Decision struct {
	Placed bool   `json:"placed"`
	Pod    string `json:"pod"` // namespace/name

	// A placed pod: the node, the node policy's score (0..100), the
	// sharing mode and why it was chosen, what each container gets, the
	// annotations to write on the pod (in its dialect) and its DRA claims.
	Node        string            `json:"node,omitempty"`
	Score       int               `json:"score,omitempty"`
	Mode        string            `json:"mode,omitempty"`
	ModeChoice  string            `json:"mode_choice,omitempty"`
	Containers  []Container       `json:"containers,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	Claims      []Claim           `json:"claims,omitempty"`

	// A pod that fits nowhere: the reason per node, and how many nodes
	// gave each reason code.
	Reasons      map[string]string `json:"reasons,omitempty"`
	ReasonCounts map[string]int    `json:"reason_counts,omitempty"`

	Raw json.RawMessage `json:"-"`
}

// Container is what one container of a placed pod gets: its GPUs (empty
// for a container without any) and the environment the node agent
// injects.
type Container struct {
	Name    string            `json:"name"`
	Devices []Device          `json:"devices"`
	Env     map[string]string `json:"env"`
}

// Device is one GPU, or one MIG instance of it, granted to a container.
type Device struct {
	UUID      string `json:"uuid"`
	Mode      string `json:"mode"` // hami-core, mig, mps, ...
	MemoryMiB int64  `json:"memory_mib"`
	Cores     int    `json:"cores"` // percent of the GPU's SMs

	// A MIG instance: its profile, first slice and size in slices, and
	// whether the node agent must create it; an instance of a gang also
	// names its group and position.
	MigProfile  string `json:"mig_profile,omitempty"`
	MigStart    *int   `json:"mig_start,omitempty"`
	MigSlices   int    `json:"mig_slices,omitempty"`
	MigAction   string `json:"mig_action,omitempty"`
	MigGroup    string `json:"mig_group,omitempty"`
	MigPosition *int   `json:"mig_position,omitempty"`
}

// Claim is a DRA ResourceClaim the pod uses and its allocation
// (status.allocation of resource.k8s.io/v1, as JSON). New: allocated by
// this decision rather than before it.
type Claim struct {
	Name       string          `json:"name"`  // the pod's name for it
	Claim      string          `json:"claim"` // namespace/name
	New        bool            `json:"new"`
	Allocation json.RawMessage `json:"allocation"`
}

// Verdict is the filter step's answer for one node.
type Verdict struct {
	Node string `json:"node"`
	Fits bool   `json:"fits"`
	Code string `json:"code"` // reason code, "Fits" when it fits
	// Unresolvable: making room on the node (preempting pods) would not
	// help, e.g. NodeUnknown, NoGpus (kube-scheduler's
	// UnschedulableAndUnresolvable).
	Unresolvable bool   `json:"unresolvable"`
	Reason       string `json:"reason"` // empty when it fits
	Score        int    `json:"score"`  // 0 when it does not fit
}

// ScheduleOptions narrows Schedule: the candidate nodes (nil: every
// node), how many nodes' reasons an unplaced pod explains (0: the
// library's default) and whether reasons are counted per code.
type ScheduleOptions struct {
	Candidates        []string `json:"candidates,omitempty"`
	MaxExplainedNodes int      `json:"max_explained_nodes,omitempty"`
	CountReasons      *bool    `json:"count_reasons,omitempty"`
}

// UpsertResult is what UpsertNodes did: the nodes upserted, the pods
// that no longer fit a node whose inventory changed (namespace/name), and
// notes on objects skipped.
type UpsertResult struct {
	Nodes     []string `json:"nodes"`
	Displaced []string `json:"displaced"`
	Notes     []string `json:"notes"`
}

// Usage is the cluster's GPU usage, annotated and DRA GPUs together.
type Usage struct {
	Nodes             int   `json:"nodes"`
	Pods              int   `json:"pods"`
	GPUs              int   `json:"gpus"`
	GPUsIdle          int   `json:"gpus_idle"`
	MemoryCapacityMiB int64 `json:"memory_capacity_mib"`
	MemoryUsedMiB     int64 `json:"memory_used_mib"`
	CoreCapacity      int64 `json:"core_capacity"`
	CoresUsed         int64 `json:"cores_used"`
}
