package deviceshare

import (
	"path/filepath"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
)

// A pod the plugin rejected for GPUs is requeued by an event that can
// free or add room -- a pod holding GPUs deleted, a node added or its
// registration changed -- and not by unrelated ones: a pod without GPUs
// deleted, a node's status or labels updated, DRA objects for a pod
// without claims.
func TestGPURejectedPodIsRequeuedOnlyByHelpfulEvents(t *testing.T) {
	nodes := documents[v1.Node](t, filepath.Join(examples, "nodes.yaml"))
	r := newRig(t, "", nodes, "")
	logger, _ := ktesting.NewTestContext(t)
	pl := r.plugin

	gpuPod := func(name, node string) *v1.Pod {
		return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("u-" + name)},
			Spec: v1.PodSpec{NodeName: node, Containers: []v1.Container{{Name: "main", Resources: v1.ResourceRequirements{
				Limits: v1.ResourceList{"nvidia.com/gpu": resourceQuantity("1"), "nvidia.com/gpumem": resourceQuantity("80000")}}}}}}
	}
	// Rejected: asks more than any free GPU has once the GPUs are full.
	pending := gpuPod("pending", "")
	plainPod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u-web"},
		Spec: v1.PodSpec{NodeName: "gpu-a", Containers: []v1.Container{{Name: "main"}}}}
	unassigned := gpuPod("never-placed", "")

	node := nodes[0]
	heartbeat := node.DeepCopy()
	heartbeat.Status.Conditions = []v1.NodeCondition{{Type: v1.NodeReady, Status: v1.ConditionTrue, LastHeartbeatTime: metav1.Now()}}
	relabelled := node.DeepCopy()
	relabelled.Labels = map[string]string{"team": "b"}
	reregistered := node.DeepCopy()
	reregistered.Annotations = map[string]string{"hami.io/node-nvidia-register": "[]"}

	for _, c := range []struct {
		name      string
		hint      func() (fwk.QueueingHint, error)
		wantQueue bool
	}{
		{"a pod holding GPUs deleted", func() (fwk.QueueingHint, error) {
			return pl.isSchedulableAfterPodDeleted(logger, pending, gpuPod("holder", "gpu-a"), nil)
		}, true},
		{"a pod without GPUs deleted", func() (fwk.QueueingHint, error) {
			return pl.isSchedulableAfterPodDeleted(logger, pending, plainPod, nil)
		}, false},
		{"a GPU pod that was never placed deleted", func() (fwk.QueueingHint, error) {
			return pl.isSchedulableAfterPodDeleted(logger, pending, unassigned, nil)
		}, false},
		{"a node added", func() (fwk.QueueingHint, error) {
			return pl.isSchedulableAfterNodeChange(logger, pending, nil, node)
		}, true},
		{"a node's registration changed", func() (fwk.QueueingHint, error) {
			return pl.isSchedulableAfterNodeChange(logger, pending, node, reregistered)
		}, true},
		{"a node's status updated", func() (fwk.QueueingHint, error) {
			return pl.isSchedulableAfterNodeChange(logger, pending, node, heartbeat)
		}, false},
		{"a node relabelled", func() (fwk.QueueingHint, error) {
			return pl.isSchedulableAfterNodeChange(logger, pending, node, relabelled)
		}, false},
		{"a ResourceSlice changed, pod without claims", func() (fwk.QueueingHint, error) {
			return pl.isSchedulableAfterDRAChange(logger, pending, nil, nil)
		}, false},
	} {
		hint, err := c.hint()
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := hint == fwk.Queue; got != c.wantQueue {
			t.Errorf("%s: hint %v, want Queue=%v", c.name, hint, c.wantQueue)
		}
	}

	withClaim := pending.DeepCopy()
	withClaim.Spec.ResourceClaims = []v1.PodResourceClaim{{Name: "gpu", ResourceClaimName: ptr("shared-gpu")}}
	if hint, _ := pl.isSchedulableAfterDRAChange(logger, withClaim, nil, nil); hint != fwk.Queue {
		t.Errorf("a DRA change for a pod with claims: hint %v, want Queue", hint)
	}

	// The events the hints are registered for: relabelling and status
	// updates are not among them at all.
	events, err := pl.EventsToRegister(r.ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, event := range events {
		if event.Event.Resource == fwk.Node && event.Event.ActionType&(fwk.UpdateNodeLabel|fwk.UpdateNodeCondition) != 0 {
			t.Errorf("registered for node label or condition updates: %v", event.Event)
		}
		if event.QueueingHintFn == nil {
			t.Errorf("event %v has no hint", event.Event)
		}
	}
}

func ptr[T any](v T) *T { return &v }

// The hint that requeues a pod for a deleted GPU pod has released that
// pod's shares first: the requeued pod fits at once, whichever informer
// handler -- the scheduler's queue or the plugin's feed -- runs first.
func TestPodDeleteHintFreesTheRoomBeforeRequeue(t *testing.T) {
	r := newRig(t, "", documents[v1.Node](t, filepath.Join(examples, "nodes.yaml")), "")
	logger, _ := ktesting.NewTestContext(t)
	holder := wholeGPUsPod("holder")
	placed := r.schedule(holder)
	if placed.node == "" {
		t.Fatalf("holder fits nowhere: %v", placed.reasons)
	}
	holder.Spec.NodeName = placed.node
	waiter := wholeGPUsPod("waiter")
	prepared, err := r.plugin.lib.PreparePod(mustJSON(t, waiter))
	if err != nil {
		t.Fatal(err)
	}
	defer prepared.Close()
	if verdict, _ := r.plugin.lib.FilterNode(prepared, placed.node); verdict.Fits {
		t.Fatalf("waiter fits %s beside holder", placed.node)
	}
	if hint, err := r.plugin.isSchedulableAfterPodDeleted(logger, waiter, holder, nil); hint != fwk.Queue || err != nil {
		t.Fatalf("hint %v, %v; want Queue", hint, err)
	}
	if verdict, _ := r.plugin.lib.FilterNode(prepared, placed.node); !verdict.Fits {
		t.Errorf("after the hint, waiter still does not fit %s: %s", placed.node, verdict.Reason)
	}
}

func mustJSON(t *testing.T, pod *v1.Pod) string {
	t.Helper()
	text, err := objectJSON(pod, podKind)
	if err != nil {
		t.Fatal(err)
	}
	return text
}
