package deviceshare

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/klog/v2/ktesting"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"

	ds "github.com/deviceshare/deviceshare/bindings/go"
)

// The repository's examples folder, from plugins/kube-scheduler/pkg/deviceshare.
var examples = filepath.Join("..", "..", "..", "..", "examples")

// rig is the plugin on a fake API server's informers, driven as
// kube-scheduler's framework drives it, one pod at a time.
type rig struct {
	t      *testing.T
	ctx    context.Context
	plugin *DeviceShare
	client *fake.Clientset
	nodes  []*v1.Node
}

// newRig feeds `nodes` (Node objects) through the informers; `inventory`,
// when not empty, is upserted into the library directly (simulate's
// short form has no Node objects).
func newRig(t *testing.T, config string, nodes []*v1.Node, inventory string) *rig {
	t.Helper()
	logger, ctx := ktesting.NewTestContext(t)
	ctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	objects := make([]runtime.Object, 0, len(nodes))
	for _, node := range nodes {
		objects = append(objects, node)
	}
	client := fake.NewClientset(objects...)
	// pods/binding as the API server serves it: the pod gets the node and
	// the Binding's annotations (the fake tracker knows no subresource).
	client.PrependReactor("create", "pods", func(action k8stesting.Action) (bool, runtime.Object, error) {
		create, ok := action.(k8stesting.CreateAction)
		if !ok || action.GetSubresource() != "binding" {
			return false, nil, nil
		}
		binding := create.GetObject().(*v1.Binding)
		pod, err := client.Tracker().Get(v1.SchemeGroupVersion.WithResource("pods"), binding.Namespace, binding.Name)
		if err != nil {
			return true, nil, err
		}
		bound := pod.(*v1.Pod).DeepCopy()
		bound.Spec.NodeName = binding.Target.Name
		if bound.Annotations == nil {
			bound.Annotations = map[string]string{}
		}
		for key, value := range binding.Annotations {
			bound.Annotations[key] = value
		}
		return true, bound, client.Tracker().Update(v1.SchemeGroupVersion.WithResource("pods"), bound, binding.Namespace)
	})
	factory := informers.NewSharedInformerFactory(client, 0)
	lib, err := ds.NewScheduler(config)
	if err != nil {
		t.Fatalf("NewScheduler: %v", err)
	}
	t.Cleanup(func() { lib.Close() })
	plugin, err := newPlugin(logger, lib, client, factory)
	if err != nil {
		t.Fatalf("newPlugin: %v", err)
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	// Shutdown waits for the informers, which stop when ctx ends.
	t.Cleanup(func() { cancel(); factory.Shutdown() })
	waitFor(t, "the feed's first lists", plugin.feed.synced)
	r := &rig{t: t, ctx: ctx, plugin: plugin, client: client, nodes: nodes}
	if inventory != "" {
		result, err := lib.UpsertNodes(inventory)
		if err != nil {
			t.Fatalf("UpsertNodes: %v", err)
		}
		for _, name := range result.Nodes {
			r.nodes = append(r.nodes, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
		}
	}
	sort.Slice(r.nodes, func(i, j int) bool { return r.nodes[i].Name < r.nodes[j].Name })
	return r
}

func waitFor(t *testing.T, what string, done func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !done() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// outcome is one pod's cycle: where it went and what it got, or why not.
type outcome struct {
	node     string
	decision *ds.Decision
	reasons  map[string]string // node -> the Filter status's message
	skipped  bool
}

// schedule runs one scheduling cycle of the framework over the plugin:
// PreFilter, Filter on every node, Score on those that fit, the highest
// score (ties to the first node by name: kube-scheduler picks among ties
// at random), Reserve, PreBindPreFlight and PreBind.
func (r *rig) schedule(pod *v1.Pod) outcome {
	r.t.Helper()
	if _, err := r.client.CoreV1().Pods(pod.Namespace).Create(r.ctx, pod, metav1.CreateOptions{}); err != nil {
		r.t.Fatalf("create %s: %v", pod.Name, err)
	}
	state := framework.NewCycleState()
	pl := r.plugin
	if _, status := pl.PreFilter(r.ctx, state, pod, nil); status.IsSkip() {
		// The framework skips Filter, then Score if PreScore says so;
		// Reserve and PreBindPreFlight run for every pod.
		if status := pl.PreScore(r.ctx, state, pod, nil); !status.IsSkip() {
			r.t.Errorf("PreScore(%s) = %v after a PreFilter Skip, want Skip", pod.Name, status)
		}
		if status := pl.Reserve(r.ctx, state, pod, r.nodes[0].Name); !status.IsSuccess() {
			r.t.Errorf("Reserve(%s) = %v after a PreFilter Skip", pod.Name, status)
		}
		if _, status := pl.PreBindPreFlight(r.ctx, state, pod, r.nodes[0].Name); !status.IsSkip() {
			r.t.Errorf("PreBindPreFlight(%s) = %v after a PreFilter Skip, want Skip", pod.Name, status)
		}
		if status := pl.Bind(r.ctx, state, pod, r.nodes[0].Name); !status.IsSkip() {
			r.t.Errorf("Bind(%s) = %v after a PreFilter Skip, want Skip (DefaultBinder binds it)", pod.Name, status)
		}
		return outcome{skipped: true}
	} else if !status.IsSuccess() {
		r.t.Fatalf("PreFilter(%s): %v", pod.Name, status)
	}
	if status := pl.PreScore(r.ctx, state, pod, nil); !status.IsSuccess() {
		r.t.Fatalf("PreScore(%s): %v", pod.Name, status)
	}
	out := outcome{reasons: map[string]string{}}
	best := int64(-1)
	for _, node := range r.nodes {
		info := framework.NewNodeInfo()
		info.SetNode(node)
		if status := pl.Filter(r.ctx, state, pod, info); !status.IsSuccess() {
			if status.Code() != fwk.Unschedulable && status.Code() != fwk.UnschedulableAndUnresolvable {
				r.t.Fatalf("Filter(%s, %s): %v", pod.Name, node.Name, status)
			}
			out.reasons[node.Name] = status.Message()
			continue
		}
		score, status := pl.Score(r.ctx, state, pod, info)
		if !status.IsSuccess() {
			r.t.Fatalf("Score(%s, %s): %v", pod.Name, node.Name, status)
		}
		if score > best {
			best, out.node = score, node.Name
		}
	}
	if out.node == "" {
		return out
	}
	if status := pl.Reserve(r.ctx, state, pod, out.node); !status.IsSuccess() {
		r.t.Fatalf("Reserve(%s, %s): %v", pod.Name, out.node, status)
	}
	s, _ := stateOf(state)
	out.decision = s.decision
	if _, status := pl.PreBindPreFlight(r.ctx, state, pod, out.node); status.IsSuccess() {
		if status := pl.PreBind(r.ctx, state, pod, out.node); !status.IsSuccess() {
			r.t.Fatalf("PreBind(%s): %v", pod.Name, status)
		}
	}
	if status := pl.Bind(r.ctx, state, pod, out.node); !status.IsSuccess() {
		r.t.Fatalf("Bind(%s): %v", pod.Name, status)
	}
	return out
}

// documents reads a YAML file's objects into T (Pods or Nodes).
func documents[T any](t *testing.T, path string) []*T {
	t.Helper()
	text, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := ds.ParseDocuments(string(text))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	objects := make([]*T, 0, len(raw))
	for _, document := range raw {
		object := new(T)
		if err := json.Unmarshal(document, object); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		objects = append(objects, object)
	}
	return objects
}

func simulateBinary(t *testing.T) string {
	path := os.Getenv("DEVICESHARE_SCHEDULER")
	if path == "" {
		path = filepath.Join("..", "..", "..", "..", "build", "plugins", "scheduler", "deviceshare-scheduler")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("deviceshare-scheduler not found (%v): build it, or set DEVICESHARE_SCHEDULER", err)
	}
	return path
}

// simulated is what `simulate --output json` says of each pod.
type simulated struct {
	Placements []struct {
		Pod        string          `json:"pod"`
		Node       string          `json:"node"`
		Score      int             `json:"score"`
		Containers json.RawMessage `json:"containers"`
	} `json:"placements"`
	Unschedulable []struct {
		Pod     string            `json:"pod"`
		Reasons map[string]string `json:"reasons"`
	} `json:"unschedulable"`
}

func simulate(t *testing.T, config, cluster, pods string) simulated {
	t.Helper()
	args := []string{"simulate", "--cluster", cluster, "--pods", pods, "--output", "json"}
	if config != "" {
		args = append(args, "--config", config)
	}
	out, err := exec.Command(simulateBinary(t), args...).Output()
	if err != nil {
		t.Fatalf("simulate: %v", err)
	}
	var result simulated
	if err := json.Unmarshal(out, &result); err != nil {
		t.Fatalf("simulate's JSON: %v", err)
	}
	return result
}

func jsonEqual(a, b []byte) bool {
	var x, y interface{}
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}

// The plugin, driven as the framework drives it, places the examples'
// pods where simulate places them, with the same devices and environment
// per container and the same reasons for the pods that fit nowhere; the
// record PreBind writes is the decision's, in the pod's dialect. Both
// examples: Node objects of both dialects through the informers
// (nodes.yaml, pods.yaml), and the mixed cluster in simulate's short form
// with its config (cluster.yaml, workload.yaml).
func TestPlacesTheExamplesAsSimulate(t *testing.T) {
	for _, example := range []struct{ config, cluster, pods string }{
		{"", "nodes.yaml", "pods.yaml"},
		{"deviceshare.yaml", "cluster.yaml", "workload.yaml"},
	} {
		t.Run(example.pods, func(t *testing.T) {
			config, configPath := "", ""
			if example.config != "" {
				configPath = filepath.Join(examples, example.config)
				text, err := os.ReadFile(configPath)
				if err != nil {
					t.Fatal(err)
				}
				config = string(text)
			}
			clusterPath := filepath.Join(examples, example.cluster)
			podsPath := filepath.Join(examples, example.pods)
			want := simulate(t, configPath, clusterPath, podsPath)

			var r *rig
			if example.cluster == "nodes.yaml" {
				r = newRig(t, config, documents[v1.Node](t, clusterPath), "")
			} else {
				inventory, err := os.ReadFile(clusterPath)
				if err != nil {
					t.Fatal(err)
				}
				r = newRig(t, config, nil, string(inventory))
			}
			placed, refused := 0, 0
			for _, pod := range documents[v1.Pod](t, podsPath) {
				key := pod.Namespace + "/" + pod.Name
				got := r.schedule(pod)
				if got.skipped {
					t.Errorf("%s: skipped, but it asks for GPUs", key)
					continue
				}
				if got.node == "" {
					if refused >= len(want.Unschedulable) || want.Unschedulable[refused].Pod != key {
						t.Errorf("%s: fits nowhere; simulate places it", key)
						continue
					}
					if !reflect.DeepEqual(got.reasons, want.Unschedulable[refused].Reasons) {
						t.Errorf("%s: reasons %v, simulate says %v", key, got.reasons, want.Unschedulable[refused].Reasons)
					}
					refused++
					continue
				}
				if placed >= len(want.Placements) || want.Placements[placed].Pod != key {
					t.Errorf("%s: placed on %s; simulate does not place it next", key, got.node)
					continue
				}
				w := want.Placements[placed]
				placed++
				var raw struct {
					Containers json.RawMessage `json:"containers"`
				}
				if err := json.Unmarshal(got.decision.Raw, &raw); err != nil {
					t.Fatal(err)
				}
				if got.node != w.Node || got.decision.Score != w.Score || !jsonEqual(raw.Containers, w.Containers) {
					t.Errorf("%s: on %s (score %d) with %s; simulate: on %s (score %d) with %s",
						key, got.node, got.decision.Score, raw.Containers, w.Node, w.Score, w.Containers)
				}
				written, err := r.client.CoreV1().Pods(pod.Namespace).Get(r.ctx, pod.Name, metav1.GetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if len(got.decision.Annotations) == 0 {
					t.Errorf("%s: the decision has no record to write", key)
				}
				if written.Spec.NodeName != got.node {
					t.Errorf("%s: bound to %q, want %s", key, written.Spec.NodeName, got.node)
				}
				for k, v := range got.decision.Annotations {
					if written.Annotations[k] != v {
						t.Errorf("%s: annotation %s = %q after Bind, want %q", key, k, written.Annotations[k], v)
					}
				}
			}
			if placed != len(want.Placements) || refused != len(want.Unschedulable) {
				t.Errorf("placed %d and refused %d; simulate: %d and %d", placed, refused, len(want.Placements), len(want.Unschedulable))
			}
		})
	}
}

// A pod without GPUs or claims is none of the plugin's business: PreFilter
// skips it (so Filter, Score, Reserve and PreBind never run for it).
func TestSkipsPodsWithoutDevices(t *testing.T) {
	r := newRig(t, "", documents[v1.Node](t, filepath.Join(examples, "nodes.yaml")), "")
	plain := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default", UID: "u-web"},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "main"}}}}
	if got := r.schedule(plain); !got.skipped {
		t.Errorf("a pod without GPUs was not skipped: %+v", got)
	}
}

// Reserve charges the node; Unreserve (a bind that failed: the pod is
// not bound) gives the room back.
func TestUnreserveGivesTheRoomBack(t *testing.T) {
	nodes := documents[v1.Node](t, filepath.Join(examples, "nodes.yaml"))
	r := newRig(t, "", nodes, "")
	pl := r.plugin
	info := framework.NewNodeInfo()
	info.SetNode(nodes[0]) // gpu-a: four A100s
	fits := func(pod *v1.Pod) (*framework.CycleState, bool) {
		state := framework.NewCycleState()
		if _, status := pl.PreFilter(r.ctx, state, pod, nil); !status.IsSuccess() {
			t.Fatalf("PreFilter(%s): %v", pod.Name, status)
		}
		return state, pl.Filter(r.ctx, state, pod, info).IsSuccess()
	}
	big := wholeGPUsPod("big")
	state, ok := fits(big)
	if !ok {
		t.Fatalf("big does not fit %s", info.Node().Name)
	}
	if status := pl.Reserve(r.ctx, state, big, info.Node().Name); !status.IsSuccess() {
		t.Fatalf("Reserve: %v", status)
	}
	if _, ok := fits(wholeGPUsPod("second")); ok {
		t.Fatalf("a second pod like it fits beside the reserved one")
	}
	pl.Unreserve(r.ctx, state, big, info.Node().Name)
	if _, ok := fits(wholeGPUsPod("third")); !ok {
		t.Errorf("after Unreserve, a pod like it does not fit %s", info.Node().Name)
	}
}

// A pod whose GPU request does not read can never be placed as written.
func TestUnreadableRequestIsUnresolvable(t *testing.T) {
	r := newRig(t, "", documents[v1.Node](t, filepath.Join(examples, "nodes.yaml")), "")
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bad", Namespace: "default", UID: "u-bad",
		Annotations: map[string]string{"nvidia.com/use-gpuuuid": ""}},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "main", Resources: v1.ResourceRequirements{
			Limits: v1.ResourceList{"nvidia.com/gpu": resourceQuantity("1"), "nvidia.com/gpumem": resourceQuantity("-5")}}}}}}
	_, status := r.plugin.PreFilter(r.ctx, framework.NewCycleState(), pod, nil)
	if status.Code() != fwk.UnschedulableAndUnresolvable || !strings.Contains(status.Message(), "gpumem") {
		t.Errorf("PreFilter = %v, want UnschedulableAndUnresolvable naming gpumem", status)
	}
}

func resourceQuantity(text string) resource.Quantity { return resource.MustParse(text) }

// kube-scheduler's preemption removes candidate victims from a copy of
// the cycle state (RemovePod) and asks Filter again: the victim's GPUs are
// free in that copy only, and AddPod (its reprieve) takes them back.
func TestPreemptionSimulationSeesTheVictimsGPUsFreed(t *testing.T) {
	r := newRig(t, "", documents[v1.Node](t, filepath.Join(examples, "nodes.yaml")), "")
	victim := wholeGPUsPod("victim")
	placed := r.schedule(victim)
	if placed.node == "" {
		t.Fatalf("victim fits nowhere: %v", placed.reasons)
	}
	victim.Spec.NodeName = placed.node
	var node *v1.Node
	for _, n := range r.nodes {
		if n.Name == placed.node {
			node = n
		}
	}
	info := framework.NewNodeInfo()
	info.SetNode(node)
	preemptor := wholeGPUsPod("preemptor")
	state := framework.NewCycleState()
	pl := r.plugin
	if _, status := pl.PreFilter(r.ctx, state, preemptor, nil); !status.IsSuccess() {
		t.Fatalf("PreFilter: %v", status)
	}
	if status := pl.Filter(r.ctx, state, preemptor, info); status.IsSuccess() {
		t.Fatalf("preemptor fits %s beside the victim", node.Name)
	}
	simulation := state.Clone()
	victimInfo, err := framework.NewPodInfo(victim)
	if err != nil {
		t.Fatal(err)
	}
	if status := pl.RemovePod(r.ctx, simulation, preemptor, victimInfo, info); !status.IsSuccess() {
		t.Fatalf("RemovePod: %v", status)
	}
	if status := pl.Filter(r.ctx, simulation, preemptor, info); !status.IsSuccess() {
		t.Errorf("with the victim removed, Filter = %v; want a fit", status)
	}
	if status := pl.Filter(r.ctx, state, preemptor, info); status.IsSuccess() {
		t.Errorf("the original state sees the victim removed too")
	}
	if status := pl.AddPod(r.ctx, simulation, preemptor, victimInfo, info); !status.IsSuccess() {
		t.Fatalf("AddPod: %v", status)
	}
	if status := pl.Filter(r.ctx, simulation, preemptor, info); status.IsSuccess() {
		t.Errorf("after AddPod the preemptor still fits beside the victim")
	}
}

// wholeGPUsPod asks four whole 80 GiB GPUs: one fills gpu-a of
// examples/nodes.yaml, and nothing else fits it.
func wholeGPUsPod(name string) *v1.Pod {
	return &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", UID: types.UID("u-" + name)},
		Spec: v1.PodSpec{Containers: []v1.Container{{Name: "main", Resources: v1.ResourceRequirements{
			Limits: v1.ResourceList{"nvidia.com/gpu": resourceQuantity("4"), "nvidia.com/gpumem": resourceQuantity("81920")}}}}}}
}
