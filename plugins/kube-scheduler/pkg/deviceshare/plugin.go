// Package deviceshare is the DeviceShare plugin of kube-scheduler's
// framework: deviceshare's library (through the Go binding, in-process)
// decides which GPUs, and which share of each, a pod gets on each node.
//
//   - PreFilter parses the pod once (a PreparedPod); a pod that asks no GPU
//     and no ResourceClaim is skipped by every later step. For the others
//     it takes the library's verdict of every node in one call: a call
//     into C per node cost 14 times more at 500 nodes (bindings/go's
//     BenchmarkFilter500Nodes*), its locks contended by the framework's
//     parallel Filter.
//   - Filter and Score read that: the node's verdict (with the reason code
//     in the status) and its policy's score (0..100); PreScore skips Score
//     for a pod PreFilter skipped.
//   - PreFilterExtensions (RemovePod, AddPod) let kube-scheduler's own
//     preemption see a victim's GPUs freed: its victims are chosen by its
//     rules (priorities, PodDisruptionBudgets), its fit test is ours.
//   - Reserve places the pod on the chosen node in the library's ledger;
//     Unreserve releases it (and undoes what PreBind wrote).
//   - PreBind writes the DRA claims' status.allocation and reservedFor;
//     Bind binds the pod with its allocation record on the Binding (the
//     annotations of its dialect, which the node agent and HAMi's or
//     Volcano's device plugin read): one write, as Volcano binds.
//   - EnqueueExtensions: a pod this plugin rejected is retried only by an
//     event that can give it room (queueing_hints.go).
//
// The library is fed from the scheduler's own informers (feed.go): no
// second watch. Pods with claims are allocated here, so a profile that
// enables DeviceShare disables DynamicResources (two allocators must never
// serve one claim).
package deviceshare

import (
	"context"
	"encoding/json"
	"fmt"
	"os"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"

	ds "github.com/deviceshare/deviceshare/bindings/go"
)

// Name is the plugin's name in the registry and in profiles.
const Name = "DeviceShare"

// Args are the plugin's arguments (pluginConfig's args).
type Args struct {
	// ConfigFile is deviceshare's config: the `scheduler:` and `nvidia:`
	// sections, or the ConfigMap holding them (deploy/configmap.yaml,
	// mounted). Empty: the library's defaults.
	ConfigFile string `json:"configFile,omitempty"`
}

// DeviceShare is the plugin. Its methods may run on many goroutines at
// once, as the framework calls them; the library is safe for that.
type DeviceShare struct {
	lib    *ds.Scheduler
	client kubernetes.Interface
	feed   *feed
}

var (
	_ fwk.PreFilterPlugin     = &DeviceShare{}
	_ fwk.PreFilterExtensions = &DeviceShare{}
	_ fwk.FilterPlugin        = &DeviceShare{}
	_ fwk.PreScorePlugin      = &DeviceShare{}
	_ fwk.ScorePlugin         = &DeviceShare{}
	_ fwk.ReservePlugin       = &DeviceShare{}
	_ fwk.PreBindPlugin       = &DeviceShare{}
	_ fwk.EnqueueExtensions   = &DeviceShare{}
)

// New is the plugin's factory (app.WithPlugin(Name, New)).
func New(ctx context.Context, configuration runtime.Object, handle fwk.Handle) (fwk.Plugin, error) {
	var args Args
	if err := frameworkruntime.DecodeInto(configuration, &args); err != nil {
		return nil, fmt.Errorf("%s args: %w", Name, err)
	}
	config := ""
	if args.ConfigFile != "" {
		text, err := os.ReadFile(args.ConfigFile)
		if err != nil {
			return nil, fmt.Errorf("%s args: configFile %q: %w", Name, args.ConfigFile, err)
		}
		config = string(text)
	}
	lib, err := ds.NewScheduler(config)
	if err != nil {
		return nil, fmt.Errorf("%s args: configFile %q: %w", Name, args.ConfigFile, err)
	}
	return newPlugin(klog.FromContext(ctx), lib, handle.ClientSet(), handle.SharedInformerFactory())
}

// newPlugin wires a plugin to a library and the scheduler's informers
// (tests pass a fake client's).
func newPlugin(logger klog.Logger, lib *ds.Scheduler, client kubernetes.Interface, factory informers.SharedInformerFactory) (*DeviceShare, error) {
	f, err := startFeed(logger, lib, factory)
	if err != nil {
		return nil, err
	}
	return &DeviceShare{lib: lib, client: client, feed: f}, nil
}

// Name is the plugin's name.
func (pl *DeviceShare) Name() string { return Name }

// stateKey is where PreFilter leaves the pod's cycleState.
const stateKey fwk.StateKey = Name

// cycleState is one scheduling cycle of one pod: the pod as the library
// parsed it, the library's verdict for every node it knows, and from
// Reserve on the library's decision.
type cycleState struct {
	pod *ds.PreparedPod
	// verdicts, taken in PreFilter with one call into the library, answer
	// Filter and Score without a call per node (read-only from then on;
	// clones share them). As kube-scheduler's own plugins read the
	// cycle's snapshot, they are the library's state when the cycle began;
	// Reserve checks the chosen node again.
	verdicts map[string]ds.Verdict
	decision *ds.Decision
	// claims PreBind wrote, so Unreserve undoes them.
	claims []claimWrite
	// released: the pods (uids, by node) a preemption simulation has
	// removed from this copy of the state (RemovePod); Filter counts them
	// gone.
	released map[string][]string
}

// Clone is what preemption simulates on, one copy per candidate node: it
// shares the prepared pod (read-only) and copies the released pods. The
// fields Reserve and PreBind set belong to the cycle itself (the
// framework clones only before Reserve).
func (s *cycleState) Clone() fwk.StateData {
	c := *s
	c.released = make(map[string][]string, len(s.released))
	for node, uids := range s.released {
		c.released[node] = append([]string(nil), uids...)
	}
	return &c
}

func stateOf(state fwk.CycleState) (*cycleState, *fwk.Status) {
	data, err := state.Read(stateKey)
	if err != nil {
		return nil, fwk.AsStatus(fmt.Errorf("%s: no PreFilter state: %w", Name, err))
	}
	s, ok := data.(*cycleState)
	if !ok {
		return nil, fwk.AsStatus(fmt.Errorf("%s: PreFilter state is a %T", Name, data))
	}
	return s, nil
}

// PreFilter parses the pod once for the per-node calls; a pod that asks no
// device is skipped by Filter and Score (and has nothing to reserve).
func (pl *DeviceShare) PreFilter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) (*fwk.PreFilterResult, *fwk.Status) {
	if !pl.feed.synced() {
		return nil, fwk.AsStatus(fmt.Errorf("%s: the scheduler's informers have not fed the library yet", Name))
	}
	text, err := objectJSON(pod, podKind)
	if err != nil {
		return nil, fwk.AsStatus(err)
	}
	prepared, err := pl.lib.PreparePod(text)
	if err != nil {
		// The pod's GPU request does not read (a bad annotation or
		// quantity): no node can ever serve it as written.
		return nil, fwk.NewStatus(fwk.UnschedulableAndUnresolvable, err.Error())
	}
	wants, err := prepared.WantsDevices()
	if err != nil {
		prepared.Close()
		return nil, fwk.AsStatus(err)
	}
	if !wants {
		prepared.Close()
		return nil, fwk.NewStatus(fwk.Skip)
	}
	verdicts, err := pl.lib.FilterAllNodes(prepared)
	if err != nil {
		prepared.Close()
		return nil, fwk.AsStatus(err)
	}
	state.Write(stateKey, &cycleState{pod: prepared, verdicts: verdicts})
	return nil, nil
}

// PreFilterExtensions: AddPod and RemovePod, which kube-scheduler's
// preemption (DefaultPreemption) calls on a copy of the cycle state as it
// tries candidate victims, so that Filter sees their GPUs freed.
func (pl *DeviceShare) PreFilterExtensions() fwk.PreFilterExtensions { return pl }

// RemovePod counts a pod on the node gone for this copy of the state.
func (pl *DeviceShare) RemovePod(ctx context.Context, state fwk.CycleState, _ *v1.Pod, victim fwk.PodInfo, nodeInfo fwk.NodeInfo) *fwk.Status {
	s, status := stateOf(state)
	if status != nil {
		return nil // skipped in PreFilter: nothing to simulate
	}
	if s.released == nil {
		s.released = map[string][]string{}
	}
	node := nodeInfo.Node().Name
	s.released[node] = append(s.released[node], podKey(victim.GetPod()))
	return nil
}

// AddPod puts back a pod RemovePod took away (preemption's reprieve). A
// pod the library has not placed (a nominated pod) adds nothing: the
// library charges only the pods it placed or saw bound.
func (pl *DeviceShare) AddPod(ctx context.Context, state fwk.CycleState, _ *v1.Pod, added fwk.PodInfo, nodeInfo fwk.NodeInfo) *fwk.Status {
	s, status := stateOf(state)
	if status != nil || s.released == nil {
		return nil
	}
	node, key := nodeInfo.Node().Name, podKey(added.GetPod())
	kept := s.released[node][:0]
	for _, uid := range s.released[node] {
		if uid != key {
			kept = append(kept, uid)
		}
	}
	s.released[node] = kept
	return nil
}

// Filter is the library's verdict for one node; the status carries the
// reason (it starts with the reason code, e.g. "InsufficientMemory ...").
// A node with pods a preemption simulation removed, or one the library
// did not know in PreFilter, is asked of the library.
func (pl *DeviceShare) Filter(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) *fwk.Status {
	s, status := stateOf(state)
	if status != nil {
		return status
	}
	node := nodeInfo.Node().Name
	verdict, known := s.verdicts[node]
	if !known || len(s.released[node]) > 0 {
		var err error
		if verdict, err = pl.lib.FilterNodeWithout(s.pod, node, s.released[node]); err != nil {
			return fwk.AsStatus(err)
		}
	}
	if verdict.Fits {
		return nil
	}
	if verdict.Unresolvable {
		return fwk.NewStatus(fwk.UnschedulableAndUnresolvable, verdict.Reason)
	}
	return fwk.NewStatus(fwk.Unschedulable, verdict.Reason)
}

// PreScore skips Score for a pod PreFilter skipped (the framework skips
// Filter after a PreFilter Skip, but Score only after a PreScore Skip).
func (pl *DeviceShare) PreScore(ctx context.Context, state fwk.CycleState, pod *v1.Pod, _ []fwk.NodeInfo) *fwk.Status {
	if _, err := state.Read(stateKey); err != nil {
		return fwk.NewStatus(fwk.Skip)
	}
	return nil
}

// Score is the library's node policy score, 0..100 as fwk.MaxNodeScore:
// the one PreFilter's verdict for the node carries.
func (pl *DeviceShare) Score(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeInfo fwk.NodeInfo) (int64, *fwk.Status) {
	s, status := stateOf(state)
	if status != nil {
		return 0, status
	}
	if verdict, known := s.verdicts[nodeInfo.Node().Name]; known && verdict.Fits {
		return int64(verdict.Score), nil
	}
	score, err := pl.lib.ScoreNode(s.pod, nodeInfo.Node().Name)
	if err != nil {
		return 0, fwk.AsStatus(err)
	}
	return int64(score), nil
}

// ScoreExtensions: the library's scores are already 0..100.
func (pl *DeviceShare) ScoreExtensions() fwk.ScoreExtensions { return nil }

// Reserve places the pod on the node in the library's ledger, so that the
// next pod's Filter sees its GPUs taken.
func (pl *DeviceShare) Reserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) *fwk.Status {
	if _, err := state.Read(stateKey); err != nil {
		return nil // skipped in PreFilter: asks no device
	}
	s, status := stateOf(state)
	if status != nil {
		return status
	}
	decision, err := pl.lib.AllocatePrepared(s.pod, nodeName)
	// Filter and Score are over for this cycle.
	s.pod.Close()
	if err != nil {
		return fwk.AsStatus(fmt.Errorf("%s: reserving pod %s on node %s: %w", Name, klog.KObj(pod), nodeName, err))
	}
	if !decision.Placed {
		// The node filled between Filter and Reserve (another profile's
		// pod, or an event): a verdict, retried like any misfit.
		return fwk.NewStatus(fwk.Unschedulable, reasonOn(decision, nodeName))
	}
	s.decision = decision
	return nil
}

// Unreserve releases the pod's shares and undoes what PreBind wrote.
// Idempotent; called even without a Reserve.
func (pl *DeviceShare) Unreserve(ctx context.Context, state fwk.CycleState, pod *v1.Pod, nodeName string) {
	logger := klog.FromContext(ctx)
	if s, status := stateOf(state); status == nil {
		pl.undoPreBind(ctx, s, pod)
		s.decision = nil
	}
	if err := pl.lib.Release(podKey(pod)); err != nil {
		logger.Error(err, "Releasing the pod's GPU shares", "pod", klog.KObj(pod), "node", nodeName)
	}
}

// EventsToRegister: queueing_hints.go.

func reasonOn(decision *ds.Decision, node string) string {
	if reason, ok := decision.Reasons[node]; ok {
		return reason
	}
	return fmt.Sprintf("no room on node %s any more", node)
}

// podKey is how the library names a pod: its uid, else namespace/name.
func podKey(pod *v1.Pod) string {
	if pod.UID != "" {
		return string(pod.UID)
	}
	return pod.Namespace + "/" + pod.Name
}

// objectJSON is an informer's object as the library reads it: JSON with
// its kind and apiVersion (informers leave TypeMeta empty), without
// managedFields (large, and read by nobody here).
func objectJSON(object runtime.Object, kind schema.GroupVersionKind) (string, error) {
	copied := object.DeepCopyObject()
	copied.GetObjectKind().SetGroupVersionKind(kind)
	if accessor, err := meta.Accessor(copied); err == nil {
		accessor.SetManagedFields(nil)
	}
	text, err := json.Marshal(copied)
	if err != nil {
		return "", fmt.Errorf("%s: encoding a %s: %w", Name, kind.Kind, err)
	}
	return string(text), nil
}

var (
	podKind  = v1.SchemeGroupVersion.WithKind("Pod")
	nodeKind = v1.SchemeGroupVersion.WithKind("Node")
)
