package e2e

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deviceshare/deviceshare/tests/cluster/kit"
)

// Preemption of GPU shares by the stock kube-scheduler (DefaultPreemption)
// and the extender's preempt verb (deploy/kube-scheduler-config.yaml's
// preemptVerb), on two nodes of two H100s whose GPUs are full of
// low-priority shares (two of 40000 MiB on each GPU, 12 CPUs each).
//
//  1. A high-priority pod short only of GPU room is not preempted for:
//     kube-scheduler v1.37 offers the extender only nodes where its own
//     plugins found victims, and they do not see GPU shares (the kit
//     ignores the nvidia.com resources in NodeResourcesFit), so its dry
//     run ends with "expected at least one victim pod" and the preempt
//     verb is never called (upstream kubernetes/kubernetes#139270; README,
//     "Preemption"). Checked so that the day kube-scheduler calls the
//     verb, this test says so.
//  2. With each node's CPUs also full (a CPU-only pod of a lower priority
//     still holds the rest), a high-priority pod asking 40000 MiB and 12
//     CPUs makes kube-scheduler's dry run propose that CPU-only pod on each
//     node, which frees no GPU room; the extender's /preempt answers one
//     40000 MiB share instead. kube-scheduler deletes exactly that pod (the
//     API server's audit log names who deleted what), the CPU-only pods
//     survive, no other pod is touched, and the high pod is bound with a
//     record on the GPU the victim left, no GPU over capacity by the pods'
//     records.
func TestPreemptionThroughTheExtender(t *testing.T) {
	audit := &auditLog{}
	c := newCluster(t, withAudit(audit))
	c.gpuNode("gpu-a", "hami", 2)
	c.gpuNode("gpu-b", "hami", 2)
	extender := c.startScheduling()
	const ns, batchNS = "preempt", "batch"
	share := c.fillWithLowShares(ns, "12")
	c.createNamespace(batchNS)
	pods := c.kit.Client.CoreV1().Pods(ns)
	lows := podsByName(t, c, ns)

	// 1. Short only of GPU room: no victims, the verb never called.
	if _, err := pods.Create(c.ctx, share("high-gpu-only", "high"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.eventually("high-gpu-only refused, preemption finding no victim", 60*time.Second, func() (bool, string) {
		p, err := pods.Get(c.ctx, "high-gpu-only", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if p.Spec.NodeName != "" {
			t.Fatalf("high-gpu-only bound to %s: kube-scheduler preempted for GPU room alone; "+
				"update this test and README's Preemption", p.Spec.NodeName)
		}
		return strings.Contains(conditions(p), "expected at least one victim pod"), conditions(p)
	})
	if calls := preemptCalls(t, extender); calls != 0 {
		t.Errorf("preempt verb called %v times for a pod short only of GPU room; "+
			"kube-scheduler now offers such nodes: update this test and README's Preemption", calls)
	}
	if err := pods.Delete(c.ctx, "high-gpu-only", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	// 2. Each node's last 16 CPUs go to a CPU-only pod of priority 10. It
	// asks no GPU, so the webhook leaves it alone: it names the profile.
	for _, node := range []string{"gpu-a", "gpu-b"} {
		hog := pod("cpu-"+node, map[string]string{"cpu": "16"})
		hog.Spec.PriorityClassName = "batch"
		hog.Spec.SchedulerName = "deviceshare-scheduler"
		hog.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": node}
		if _, err := c.kit.Client.CoreV1().Pods(batchNS).Create(c.ctx, hog, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		c.waitBound(batchNS, hog.Name, 60*time.Second)
	}
	hogs := podsByName(t, c, batchNS)
	if calls := preemptCalls(t, extender); calls != 0 {
		t.Fatalf("preempt verb called %v times before the high pod", calls)
	}

	if _, err := pods.Create(c.ctx, share("high", "high"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	high := c.waitBound(ns, "high", 180*time.Second)

	if calls := preemptCalls(t, extender); calls < 1 {
		t.Errorf("high bound without the preempt verb (%v calls)", calls)
	}
	if log := extender.Log(); !regexp.MustCompile(`preempt: \d+ of \d+ nodes kept.*pod=preempt/high`).MatchString(log) {
		t.Errorf("the extender's log has no preempt answer for preempt/high")
	}

	// The victims: low pods gone, each on high's node; nothing else.
	now := podsByName(t, c, ns)
	var victims []string
	for name, before := range lows {
		after, ok := now[name]
		switch {
		case !ok:
			victims = append(victims, name)
			if before.Spec.NodeName != high.Spec.NodeName {
				t.Errorf("victim %s was on %s, high was bound to %s", name, before.Spec.NodeName, high.Spec.NodeName)
			}
		case after.UID != before.UID || after.DeletionTimestamp != nil:
			t.Errorf("%s was touched: uid %s -> %s, deletionTimestamp %v", name, before.UID, after.UID, after.DeletionTimestamp)
		}
	}
	sort.Strings(victims)
	// One share frees the 40000 MiB and 12 CPUs the pod needs: the fewest.
	if len(victims) != 1 {
		t.Errorf("victims %v, want exactly one low pod of %s", victims, high.Spec.NodeName)
	}
	for name, before := range hogs {
		after, ok := podsByName(t, c, batchNS)[name]
		if !ok || after.UID != before.UID {
			t.Errorf("CPU-only pod %s (kube-scheduler's own victim, which frees no GPU room) was evicted", name)
		}
	}
	// Who deleted which pod, from the API server's side: kube-scheduler
	// (the kit's ServiceAccount) deleted the victims, nobody evicted.
	scheduler := serviceAccountUser("kube-system", "deviceshare-scheduler")
	var deleted []string
	for _, event := range audit.events(t) {
		switch {
		case event.User.Username == scheduler && event.Verb == "delete":
			deleted = append(deleted, event.ObjectRef.Name)
		case event.ObjectRef.Name == "high-gpu-only":
		default:
			t.Errorf("unexpected pod removal: %s", event)
		}
	}
	sort.Strings(deleted)
	if strings.Join(deleted, ",") != strings.Join(victims, ",") {
		t.Errorf("kube-scheduler deleted %v, the pods gone are %v", deleted, victims)
	}
	// The high pod holds the GPU its victim left.
	if len(victims) == 1 {
		got := parseHamiRecord(high.Annotations["hami.io/vgpu-devices-allocated"])
		was := parseHamiRecord(lows[victims[0]].Annotations["hami.io/vgpu-devices-allocated"])
		if len(got) != 1 || len(was) != 1 || got[0].uuid != was[0].uuid {
			t.Errorf("high's record %v, its victim's %v: want the same GPU", got, was)
		}
	}
	c.expectAdmitted()
	checkCapacityFromRecords(t, c, ns, 4)
	t.Logf("preempt verb called %v times; victims %v on %s", preemptCalls(t, extender), victims, high.Spec.NodeName)
}

// podsByName lists a namespace's pods.
func podsByName(t *testing.T, c *cluster, ns string) map[string]corev1.Pod {
	t.Helper()
	list, err := c.kit.Client.CoreV1().Pods(ns).List(c.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pods := map[string]corev1.Pod{}
	for _, p := range list.Items {
		pods[p.Name] = p
	}
	return pods
}

var preemptSample = regexp.MustCompile(`^deviceshare_extender_requests_total\{[^}]*verb="preempt"[^}]*\} ([0-9.e+-]+)$`)

// preemptCalls is the extender's count of /preempt calls, any answer.
func preemptCalls(t *testing.T, extender *kit.Extender) float64 {
	sum := 0.0
	for _, line := range strings.Split(scrape(t, extender), "\n") {
		if m := preemptSample.FindStringSubmatch(line); m != nil {
			v, _ := strconv.ParseFloat(m[1], 64)
			sum += v
		}
	}
	return sum
}

// fillWithLowShares creates the PriorityClasses batch (10), low (100) and
// high (1000) and namespace ns, then fills two nodes of two H100s with 8
// low-priority shares of 40000 MiB (two fill an H100's 81559 MiB), each
// asking `cpu` CPUs too when not empty, and waits until all are bound. It
// returns the maker of such shares (name, PriorityClass).
func (c *cluster) fillWithLowShares(ns, cpu string) func(name, class string) *corev1.Pod {
	t := c.t
	t.Helper()
	for name, value := range map[string]int32{"batch": 10, "low": 100, "high": 1000} {
		_, err := c.kit.Client.SchedulingV1().PriorityClasses().Create(c.ctx,
			&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	c.createNamespace(ns)
	share := func(name, class string) *corev1.Pod {
		limits := map[string]string{"nvidia.com/gpu": "1", "nvidia.com/gpumem": "40000", "nvidia.com/gpucores": "10"}
		if cpu != "" {
			limits["cpu"] = cpu
		}
		p := pod(name, limits)
		p.Spec.PriorityClassName = class
		return p
	}
	for i := 0; i < 8; i++ {
		if _, err := c.kit.Client.CoreV1().Pods(ns).Create(c.ctx, share(fmt.Sprintf("low-%d", i), "low"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c.eventually("8 low pods bound", 120*time.Second, func() (bool, string) {
		n := c.boundPods(ns)
		return n == 8, strconv.Itoa(n)
	})
	return share
}
