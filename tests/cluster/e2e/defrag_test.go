package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/deviceshare/deviceshare/tests/cluster/controlplane"
	"github.com/deviceshare/deviceshare/tests/cluster/kit"
)

// `deviceshare-scheduler defrag --kubeconfig --apply`, run as a user runs
// it: under the kit's deviceshare-defrag ServiceAccount (deploy/
// defrag-rbac.yaml), with the kit's own config, against pods of
// ReplicaSets (the ReplicaSet controller on) that the real disruption
// controller guards with a PodDisruptionBudget.
//
// Two nodes of two H100s, each GPU left holding one 20000 MiB share by
// departures: three pods of ReplicaSets labelled app=infer and one pod
// owned by nothing. Two pending pods ask 70000 MiB each, so each needs a
// GPU emptied by moving its share to another node. Only the infer pods may
// move (an evicted pod owned by nothing would never come back), and the
// budget (minAvailable 2 of the 3) allows one disruption, so the plan is
// one move for one of the two targets. (Shares of 20000 MiB leave room for
// the ReplicaSet's new pod wherever the scheduler puts it: the plan's
// destination is a prediction, and kube-scheduler may put the new pod back
// on the node it left.) Checked, from the API server's audit log and the
// pods:
//
//   - the plan alone (no --apply) writes nothing;
//   - with the budget edited and not yet observed by the disruption
//     controller (stopped), the API server refuses the planned eviction with
//     429: --apply stops there (exit 3, naming the move) and evicts nothing;
//   - with the budget observed, --apply evicts the planned pod through
//     pods/eviction (never a delete), the pod is gone, its ReplicaSet's new
//     pod and the target are bound, every other pod is untouched;
//   - run again before the new pod is ready, the budget allows none: no
//     move, no eviction; once it is ready, one more move places the second
//     target. The pod owned by nothing is never evicted, nobody else removes
//     a pod, and no GPU is over capacity by the records.
func TestDefragApplyHonoursDisruptionBudget(t *testing.T) {
	audit := &auditLog{}
	c := newCluster(t, withAudit(audit), withControllers("replicaset-controller"))
	c.gpuNode("gpu-a", "hami", 2)
	c.gpuNode("gpu-b", "hami", 2)
	c.startScheduling()
	const ns = "defrag"
	c.createNamespace(ns)
	pods := c.kit.Client.CoreV1().Pods(ns)
	share := map[string]string{"nvidia.com/gpu": "1", "nvidia.com/gpumem": "20000", "nvidia.com/gpucores": "10"}
	fill := map[string]string{"nvidia.com/gpu": "1", "nvidia.com/gpumem": "50000", "nvidia.com/gpucores": "10"}

	// The fragmented placement: binpack puts each 50000 MiB filler next to
	// the share before it, which leaves no room for the next share (81559
	// MiB an H100), then the fillers go.
	keepers := []string{"infer-0", "infer-1", "infer-2", "lone"}
	for i, keeper := range keepers {
		if keeper == "lone" {
			if _, err := pods.Create(c.ctx, pod(keeper, share), metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
		} else {
			c.createReplicaSet(ns, keeper, share)
		}
		c.waitBound(ns, c.podOf(ns, keeper), 60*time.Second)
		filler := fmt.Sprintf("filler-%d", i)
		if _, err := pods.Create(c.ctx, pod(filler, fill), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		c.waitBound(ns, filler, 60*time.Second)
	}
	for i := range keepers {
		if err := pods.Delete(c.ctx, fmt.Sprintf("filler-%d", i), metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	before := podsByName(t, c, ns)
	if gpus := gpusHeld(before); len(gpus) != 4 || len(before) != 4 {
		t.Fatalf("want 4 pods on 4 GPUs after the fillers left, have %d on %v", len(before), gpus)
	}
	// Kubelet would start them: Running and Ready, so that the budget
	// counts them healthy and the Eviction API checks it.
	for name := range before {
		c.reportRunning(ns, name)
	}

	budgets := c.kit.Client.PolicyV1().PodDisruptionBudgets(ns)
	minAvailable := intstr.FromInt32(2)
	_, err := budgets.Create(c.ctx, &policyv1.PodDisruptionBudget{
		ObjectMeta: metav1.ObjectMeta{Name: "infer"},
		Spec: policyv1.PodDisruptionBudgetSpec{MinAvailable: &minAvailable,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "infer"}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	c.waitBudget(ns, "infer", 3, 1)

	for _, name := range []string{"big-0", "big-1"} {
		big := pod(name, map[string]string{"nvidia.com/gpu": "1", "nvidia.com/gpumem": "70000", "nvidia.com/gpucores": "10"})
		if _, err := pods.Create(c.ctx, big, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		c.eventually(name+" refused", 60*time.Second, func() (bool, string) {
			p, err := pods.Get(c.ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if p.Spec.NodeName != "" {
				t.Fatalf("%s bound to %s on a fragmented cluster", name, p.Spec.NodeName)
			}
			return strings.Contains(conditions(p), "InsufficientMemory"), conditions(p)
		})
	}

	d := c.defragRunner()
	defragUser := serviceAccountUser("kube-system", "deviceshare-defrag")
	evictions := func() []auditEvent {
		var out []auditEvent
		for _, event := range audit.events(t) {
			if event.User.Username == defragUser {
				out = append(out, event)
			}
		}
		return out
	}

	// The plan alone: one move of an infer pod, one target placed, the
	// other not; nothing written.
	plan, _, code := d.run(t)
	if code != 0 {
		t.Fatalf("defrag exited %d", code)
	}
	checkPlan(t, plan, before, 1)
	if events := evictions(); len(events) != 0 {
		t.Fatalf("defrag without --apply wrote: %v", events)
	}

	// A budget edited while the disruption controller is down: its status
	// still says 1, but the API server refuses evictions until the
	// controller has observed the new generation.
	c.plane.ControllerManager.Stop()
	_, err = budgets.Patch(c.ctx, "infer", types.MergePatchType,
		[]byte(`{"spec":{"minAvailable":null,"maxUnavailable":1}}`), metav1.PatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	stale, err := budgets.Get(c.ctx, "infer", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if stale.Status.ObservedGeneration >= stale.Generation || stale.Status.DisruptionsAllowed != 1 {
		t.Fatalf("budget generation %d observed %d, disruptionsAllowed %d: want an unobserved edit allowing 1",
			stale.Generation, stale.Status.ObservedGeneration, stale.Status.DisruptionsAllowed)
	}
	plan, stderr, code := d.run(t, "--apply")
	if code != 3 || !strings.Contains(stderr, "move 1 of 1") || !strings.Contains(stderr, "stopped after 0 evictions") {
		t.Errorf("--apply against an unobserved budget: exit %d, stderr %q; want 3 naming move 1 of 1, 0 evictions", code, stderr)
	}
	checkPlan(t, plan, before, 1)
	if got := evictions(); len(got) != 1 || got[0].Verb != "create" || got[0].ResponseStatus.Code != 429 ||
		got[0].ObjectRef.Name != strings.TrimPrefix(plan.Moves[0].Pod, ns+"/") {
		t.Errorf("defrag's requests %v, want one eviction of %s refused with 429", got, plan.Moves[0].Pod)
	}
	c.expectUntouched(ns, before, nil)
	if err := c.plane.ControllerManager.Start(); err != nil {
		t.Fatal(err)
	}
	c.waitBudget(ns, "infer", 3, 1)

	// Observed: the planned pod is evicted, and only it.
	plan, stderr, code = d.run(t, "--apply")
	if code != 0 {
		t.Fatalf("defrag --apply exited %d: %s", code, stderr)
	}
	checkPlan(t, plan, before, 1)
	first := strings.TrimPrefix(plan.Moves[0].Pod, ns+"/")
	if got := evictions(); len(got) != 2 || got[1].Verb != "create" || got[1].ObjectRef.Subresource != "eviction" ||
		got[1].ResponseStatus.Code/100 != 2 || got[1].ObjectRef.Name != first {
		t.Fatalf("defrag's requests %v, want a second eviction, of %s, accepted", got, first)
	}
	c.expectUntouched(ns, before, map[string]bool{first: true})
	c.waitGone(ns, before[first])
	replacement, landed := c.waitReplacement(ns, before[first])
	t.Logf("%s's new pod %s bound to %s; the plan said %s", first, replacement, landed, plan.Moves[0].To)
	c.waitTargetsBound(ns, 1)
	// The eviction took one of 3 healthy pods; the new one is not ready.
	c.waitBudget(ns, "infer", 2, 0)

	// The budget has nothing left: no move may be made, none is.
	now := podsByName(t, c, ns)
	plan, stderr, code = d.run(t, "--apply")
	if code != 0 {
		t.Fatalf("defrag --apply exited %d: %s", code, stderr)
	}
	if len(plan.Moves) != 0 {
		t.Errorf("moves %v while the budget allows no disruption", plan.Moves)
	}
	if got := evictions(); len(got) != 2 {
		t.Errorf("defrag's requests %v, want no more evictions", got)
	}
	c.expectUntouched(ns, now, nil)

	// Ready again: one more move for the other target.
	c.reportRunning(ns, replacement)
	c.waitBudget(ns, "infer", 3, 1)
	now = podsByName(t, c, ns)
	plan, stderr, code = d.run(t, "--apply")
	if code != 0 {
		t.Fatalf("defrag --apply exited %d: %s", code, stderr)
	}
	checkPlan(t, plan, now, 0)
	second := strings.TrimPrefix(plan.Moves[0].Pod, ns+"/")
	if got := evictions(); len(got) != 3 || got[2].ResponseStatus.Code/100 != 2 || got[2].ObjectRef.Name != second {
		t.Fatalf("defrag's requests %v, want a third eviction, of %s, accepted", got, second)
	}
	c.expectUntouched(ns, now, map[string]bool{second: true})
	c.waitGone(ns, now[second])
	_, landed = c.waitReplacement(ns, now[second])
	t.Logf("%s's new pod bound to %s; the plan said %s", second, landed, plan.Moves[0].To)
	t.Logf("moves: %s, then %s; targets on %v", first, second, c.waitTargetsBound(ns, 2))

	// Nobody but defrag removed a pod after the fillers, and defrag only
	// by eviction.
	for _, event := range audit.events(t) {
		switch {
		case event.User.Username == defragUser:
			if event.Verb != "create" || event.ObjectRef.Subresource != "eviction" {
				t.Errorf("defrag removed a pod other than by eviction: %s", event)
			}
		case !strings.HasPrefix(event.ObjectRef.Name, "filler-"):
			t.Errorf("pod removed by someone else: %s", event)
		}
	}
	if _, ok := podsByName(t, c, ns)["lone"]; !ok {
		t.Error("lone, owned by nothing, was removed")
	}
	c.expectAdmitted()
	checkCapacityFromRecords(t, c, ns, 4)
}

// withControllers runs these kube-controller-manager controllers too.
func withControllers(extra ...string) clusterOption {
	return func(p *controlplane.Options, _ *kit.Options) {
		p.Controllers = strings.Join(append([]string{controlplane.DefaultControllers}, extra...), ",")
	}
}

// createReplicaSet makes a ReplicaSet of one pod labelled app=infer and
// replica=name. Its pods end at once when deleted (no kubelet here would
// confirm a graceful end).
func (c *cluster) createReplicaSet(ns, name string, limits map[string]string) {
	c.t.Helper()
	labels := map[string]string{"app": "infer", "replica": name}
	template := pod(name, limits)
	one := int32(1)
	_, err := c.kit.Client.AppsV1().ReplicaSets(ns).Create(c.ctx, &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: appsv1.ReplicaSetSpec{Replicas: &one,
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"replica": name}},
			Template: corev1.PodTemplateSpec{ObjectMeta: metav1.ObjectMeta{Labels: labels}, Spec: template.Spec}},
	}, metav1.CreateOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
}

// podOf is the name of a keeper's pod: the bare pod itself, or the one
// pod of its ReplicaSet once it exists.
func (c *cluster) podOf(ns, keeper string) string {
	c.t.Helper()
	if !strings.HasPrefix(keeper, "infer-") {
		return keeper
	}
	var name string
	c.eventually("the pod of ReplicaSet "+keeper, 60*time.Second, func() (bool, string) {
		list, err := c.kit.Client.CoreV1().Pods(ns).List(c.ctx, metav1.ListOptions{LabelSelector: "replica=" + keeper})
		if err != nil {
			return false, err.Error()
		}
		if len(list.Items) != 1 {
			return false, fmt.Sprintf("%d pods", len(list.Items))
		}
		name = list.Items[0].Name
		return true, ""
	})
	return name
}

// reportRunning reports the pod Running and Ready once kubelet admitted it.
func (c *cluster) reportRunning(ns, name string) {
	c.t.Helper()
	c.eventually("pod "+ns+"/"+name+" running", 60*time.Second, func() (bool, string) {
		err := c.kit.ReportRunning(c.ctx, ns, name)
		return err == nil, fmt.Sprint(err)
	})
}

// waitBudget waits until the disruption controller has observed the
// budget's generation and counts `healthy` pods and `allowed` disruptions.
func (c *cluster) waitBudget(ns, name string, healthy, allowed int32) {
	c.t.Helper()
	c.eventually(fmt.Sprintf("budget %s: %d healthy, %d allowed", name, healthy, allowed), 60*time.Second, func() (bool, string) {
		b, err := c.kit.Client.PolicyV1().PodDisruptionBudgets(ns).Get(c.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		s := b.Status
		return s.ObservedGeneration == b.Generation && s.CurrentHealthy == healthy && s.DisruptionsAllowed == allowed,
			fmt.Sprintf("generation %d observed %d, healthy %d/%d, allowed %d", b.Generation, s.ObservedGeneration,
				s.CurrentHealthy, s.DesiredHealthy, s.DisruptionsAllowed)
	})
}

// expectUntouched fails for each pod bound in `before`, less `except`,
// that is gone, replaced, moved or being deleted.
func (c *cluster) expectUntouched(ns string, before map[string]corev1.Pod, except map[string]bool) {
	c.t.Helper()
	now := podsByName(c.t, c, ns)
	for name, was := range before {
		if except[name] || was.Spec.NodeName == "" {
			continue
		}
		is, ok := now[name]
		if !ok || is.UID != was.UID || is.Spec.NodeName != was.Spec.NodeName || is.DeletionTimestamp != nil {
			c.t.Errorf("%s was touched (was uid %s on %s; now present %v, uid %s on %s, deleting %v)",
				name, was.UID, was.Spec.NodeName, ok, is.UID, is.Spec.NodeName, is.DeletionTimestamp != nil)
		}
	}
}

// waitGone waits until the evicted pod no longer exists.
func (c *cluster) waitGone(ns string, evicted corev1.Pod) {
	c.t.Helper()
	c.eventually("evicted "+evicted.Name+" gone", 60*time.Second, func() (bool, string) {
		p, err := c.kit.Client.CoreV1().Pods(ns).Get(c.ctx, evicted.Name, metav1.GetOptions{})
		if err != nil {
			return strings.Contains(err.Error(), "not found"), err.Error()
		}
		return p.UID != evicted.UID, "still there"
	})
}

// waitReplacement waits for the evicted pod's ReplicaSet to have a new pod
// bound and returns its name and node.
func (c *cluster) waitReplacement(ns string, evicted corev1.Pod) (string, string) {
	c.t.Helper()
	var name, node string
	c.eventually("a new pod for "+evicted.Name+" bound", 120*time.Second, func() (bool, string) {
		list, err := c.kit.Client.CoreV1().Pods(ns).List(c.ctx,
			metav1.ListOptions{LabelSelector: "replica=" + evicted.Labels["replica"]})
		if err != nil {
			return false, err.Error()
		}
		for _, p := range list.Items {
			if p.UID != evicted.UID && p.Spec.NodeName != "" {
				name, node = p.Name, p.Spec.NodeName
				return true, ""
			}
		}
		return false, fmt.Sprintf("%d pods", len(list.Items))
	})
	return name, node
}

// waitTargetsBound waits until n of big-0 and big-1 are bound, and returns
// where.
func (c *cluster) waitTargetsBound(ns string, n int) []string {
	c.t.Helper()
	var placed []string
	c.eventually(fmt.Sprintf("%d targets bound", n), 120*time.Second, func() (bool, string) {
		placed = nil
		for _, name := range []string{"big-0", "big-1"} {
			p, err := c.kit.Client.CoreV1().Pods(ns).Get(c.ctx, name, metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			if p.Spec.NodeName != "" {
				placed = append(placed, name+"@"+p.Spec.NodeName)
			}
		}
		if len(placed) > n {
			c.t.Fatalf("targets bound %v, want only %d", placed, n)
		}
		return len(placed) == n, fmt.Sprint(placed)
	})
	return placed
}

// gpusHeld maps each GPU of the pods' records to the pods on it.
func gpusHeld(pods map[string]corev1.Pod) map[string][]string {
	gpus := map[string][]string{}
	for name, p := range pods {
		for _, g := range parseHamiRecord(p.Annotations["hami.io/vgpu-devices-allocated"]) {
			gpus[g.uuid] = append(gpus[g.uuid], name)
		}
	}
	return gpus
}

// defragPlan is `defrag --output json`.
type defragPlan struct {
	Moves []struct {
		Pod, From, To string
	} `json:"moves"`
	Placements []struct {
		Pod, Node string
	} `json:"placements"`
	Unplaceable []struct {
		Pod, Reason string
	} `json:"unplaceable"`
	Targets int      `json:"targets"`
	Notes   []string `json:"notes"`
}

// checkPlan checks a plan for the budget's one disruption: one move, of a
// bound infer pod from its own node, making one target placeable and
// leaving `unplaceable` targets, and the note that the pods owned by
// nothing may not move.
func checkPlan(t *testing.T, plan defragPlan, bound map[string]corev1.Pod, unplaceable int) {
	t.Helper()
	if len(plan.Moves) != 1 || len(plan.Placements) != 1 || len(plan.Unplaceable) != unplaceable {
		t.Fatalf("plan %+v: want 1 move, 1 target placed, %d not", plan, unplaceable)
	}
	move := plan.Moves[0]
	moved, ok := bound[strings.TrimPrefix(move.Pod, "defrag/")]
	if !ok || moved.Labels["app"] != "infer" || moved.Spec.NodeName != move.From {
		t.Errorf("move %+v: want a bound infer pod from its own node", move)
	}
	noted := false
	for _, note := range plan.Notes {
		noted = noted || strings.Contains(note, "may not move: no controller")
	}
	if !noted {
		t.Errorf("notes %q do not say that pods owned by nothing may not move", plan.Notes)
	}
}

// defragCLI runs `deviceshare-scheduler defrag` under the kit's
// deviceshare-defrag ServiceAccount, with the extender's own config.
type defragCLI struct {
	binary, kubeconfig, config string
	ctx                        context.Context
}

func (c *cluster) defragRunner() *defragCLI {
	c.t.Helper()
	kubeconfig, err := c.kit.ServiceAccountKubeconfig(c.ctx, "deviceshare-defrag")
	if err != nil {
		c.t.Fatal(err)
	}
	configMap, err := c.kit.Client.CoreV1().ConfigMaps("kube-system").Get(c.ctx, "deviceshare-config", metav1.GetOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	configMap.ManagedFields = nil
	data, err := yaml.Marshal(configMap)
	if err != nil {
		c.t.Fatal(err)
	}
	config := filepath.Join(c.kit.Dir, "defrag-config.yaml")
	if err := os.WriteFile(config, data, 0o600); err != nil {
		c.t.Fatal(err)
	}
	return &defragCLI{binary: environment(c.t).scheduler, kubeconfig: kubeconfig, config: config, ctx: c.ctx}
}

// run returns the plan printed, stderr and the exit status.
func (d *defragCLI) run(t *testing.T, extra ...string) (defragPlan, string, int) {
	t.Helper()
	args := append([]string{"defrag", "--kubeconfig", d.kubeconfig, "--config", d.config, "--output", "json"}, extra...)
	cmd := exec.CommandContext(d.ctx, d.binary, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("defrag: %v", err)
	}
	t.Logf("defrag %s: exit %d\n%s%s", strings.Join(extra, " "), code, stdout.String(), stderr.String())
	var plan defragPlan
	// The JSON plan comes first; --apply's lines follow it.
	if err := json.NewDecoder(&stdout).Decode(&plan); err != nil {
		t.Fatalf("defrag printed no JSON plan (%v); stderr: %s", err, stderr.String())
	}
	return plan, stderr.String(), code
}
