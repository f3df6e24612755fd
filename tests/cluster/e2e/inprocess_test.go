package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deviceshare/deviceshare/tests/cluster/kit"
)

// The kit in-process (SCHEDULER=in-process): deviceshare-kube-scheduler,
// the stock kube-scheduler with the DeviceShare plugin, places the pods of
// both dialects with the same records as the extender does
// (TestKitPlacesPodsOfBothDialects' checks), refuses a pod that never
// fits with the reason; and a pod refused for GPU room is placed as soon
// as the pod holding that room is deleted -- the plugin's queueing hint
// requeues it on that delete, not after the unschedulable pods' 5-minute
// flush -- while deleting a pod without GPUs leaves it waiting.
func TestInProcessPlacesPodsOfBothDialects(t *testing.T) {
	c := newCluster(t, withInProcess(t))
	c.gpuNode("hami-node", "hami", 4)
	c.gpuNode("volcano-node", "volcano", 4)
	c.startScheduling()
	c.placesPodsOfBothDialects("team-a")
	c.expectAdmitted()

	// One H100 on a node of its own; pods pinned to it.
	c.gpuNode("single", "hami", 1)
	const ns = "team-b"
	c.createNamespace(ns)
	pods := c.kit.Client.CoreV1().Pods(ns)
	pinned := func(name string, limits map[string]string) *corev1.Pod {
		p := pod(name, limits)
		p.Spec.NodeSelector = map[string]string{"kubernetes.io/hostname": "single"}
		return p
	}
	half := map[string]string{"nvidia.com/gpu": "1", "nvidia.com/gpumem": "50000"}
	// No GPU: the webhook leaves it alone; it names the scheduler itself,
	// whose DeviceShare plugin skips it.
	plain := pod("plain", map[string]string{"cpu": "100m"})
	plain.Spec.SchedulerName = "deviceshare-scheduler"
	for _, p := range []*corev1.Pod{pinned("holder", half), plain} {
		if _, err := pods.Create(c.ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if node := c.waitBound(ns, "holder", 60*time.Second).Spec.NodeName; node != "single" {
		t.Fatalf("holder bound to %s, want single", node)
	}
	c.waitBound(ns, "plain", 60*time.Second)
	if _, err := pods.Create(c.ctx, pinned("waiter", half), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.eventually("waiter refused by DeviceShare for memory", 60*time.Second, func() (bool, string) {
		p, err := pods.Get(c.ctx, "waiter", metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if p.Spec.NodeName != "" {
			t.Fatalf("waiter bound to %s beside holder", p.Spec.NodeName)
		}
		for _, condition := range p.Status.Conditions {
			if condition.Type == corev1.PodScheduled && condition.Status == corev1.ConditionFalse &&
				strings.Contains(condition.Message, "InsufficientMemory") {
				return true, ""
			}
		}
		return false, conditions(p)
	})
	now := metav1.DeleteOptions{GracePeriodSeconds: new(int64)}
	if err := pods.Delete(c.ctx, "plain", now); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	if p, err := pods.Get(c.ctx, "waiter", metav1.GetOptions{}); err != nil || p.Spec.NodeName != "" {
		t.Fatalf("after a pod without GPUs went: waiter %v, %v; want it still waiting", p.Spec.NodeName, err)
	}
	if err := pods.Delete(c.ctx, "holder", now); err != nil {
		t.Fatal(err)
	}
	// Well inside the 5 minutes after which kube-scheduler retries every
	// unschedulable pod anyway.
	if node := c.waitBound(ns, "waiter", 60*time.Second).Spec.NodeName; node != "single" {
		t.Errorf("waiter bound to %s, want single", node)
	}
	c.expectAdmitted()
}

// Preemption in-process: on two nodes of two H100s full of low-priority
// shares (two of 40000 MiB on each GPU), a high-priority pod short only of
// GPU room -- which the extender cannot preempt for (
// TestPreemptionThroughTheExtender, case 1) -- is placed by kube-scheduler's
// own preemption, because DeviceShare's Filter sees the GPUs of the
// victims it tries freed (RemovePod). Exactly one low pod, on high's node,
// is deleted; high gets the GPU it left; no GPU is over capacity by the
// pods' records.
func TestInProcessPreemptsForGPURoom(t *testing.T) {
	c := newCluster(t, withInProcess(t))
	c.gpuNode("gpu-a", "hami", 2)
	c.gpuNode("gpu-b", "hami", 2)
	c.startScheduling()
	for name, value := range map[string]int32{"low": 100, "high": 1000} {
		_, err := c.kit.Client.SchedulingV1().PriorityClasses().Create(c.ctx,
			&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: value}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
	}
	const ns = "preempt"
	c.createNamespace(ns)
	pods := c.kit.Client.CoreV1().Pods(ns)
	share := func(name, class string) *corev1.Pod {
		p := pod(name, map[string]string{"nvidia.com/gpu": "1", "nvidia.com/gpumem": "40000", "nvidia.com/gpucores": "10"})
		p.Spec.PriorityClassName = class
		return p
	}
	for i := 0; i < 8; i++ {
		if _, err := pods.Create(c.ctx, share(fmt.Sprintf("low-%d", i), "low"), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c.eventually("8 low pods bound", 120*time.Second, func() (bool, string) {
		n := c.boundPods(ns)
		return n == 8, strconv.Itoa(n)
	})
	lows := podsByName(t, c, ns)

	if _, err := pods.Create(c.ctx, share("high", "high"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	high := c.waitBound(ns, "high", 120*time.Second)
	now := podsByName(t, c, ns)
	var victims []string
	for name, before := range lows {
		if after, ok := now[name]; !ok || after.UID != before.UID {
			victims = append(victims, name)
			if before.Spec.NodeName != high.Spec.NodeName {
				t.Errorf("victim %s was on %s, high went to %s", name, before.Spec.NodeName, high.Spec.NodeName)
			}
		}
	}
	if len(victims) != 1 {
		t.Fatalf("victims %v, want exactly one low pod", victims)
	}
	got := parseHamiRecord(high.Annotations["hami.io/vgpu-devices-allocated"])
	was := parseHamiRecord(lows[victims[0]].Annotations["hami.io/vgpu-devices-allocated"])
	if len(got) != 1 || len(was) != 1 || got[0].uuid != was[0].uuid {
		t.Errorf("high's record %v, its victim's %v: want the same GPU", got, was)
	}
	c.expectAdmitted()
	checkCapacityFromRecords(t, c, ns, 4)
	t.Logf("victim %v on %s", victims, high.Spec.NodeName)
}

// DRA claims in-process: the deviceshare-scheduler profile of
// deploy/in-process (DynamicResources off) places pods whose claims come
// from templates on a node whose agent publishes deploy/dra's slices, and
// DeviceShare's PreBind writes each claim's status as serve's bind does
// (TestDRAClaimsAllocatedByServe's checks), through kube-scheduler's own
// client; kubelet's DRA code then prepares the claims through the node
// agent.
func TestInProcessAllocatesDRAClaims(t *testing.T) {
	c := newCluster(t, withInProcess(t), withThen("deploy/dra"))
	const node = "dra-node"
	kubelet, _, slices := c.draNode(node)
	c.startScheduling()
	const ns = "ml"
	c.createNamespace(ns)
	c.createTemplates(ns, kit.ShareTemplate("share-8g", "8Gi", "25"), kit.MIGTemplate("mig-1g", "1g.10gb"))
	pods := []*corev1.Pod{claimPod("infer-1", "share-8g", "deviceshare-scheduler"),
		claimPod("infer-2", "share-8g", "deviceshare-scheduler"),
		claimPod("train", "mig-1g", "deviceshare-scheduler")}
	for _, p := range pods {
		if _, err := c.kit.Client.CoreV1().Pods(ns).Create(c.ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	c.checkClaimsAllocated(ns, node, pods, kubelet, slices, "deviceshare-kube-scheduler")
}
