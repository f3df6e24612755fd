package e2e

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
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
	c.waitRefused(ns, "waiter", "InsufficientMemory", 60*time.Second)
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
	const ns = "preempt"
	share := c.fillWithLowShares(ns, "")
	lows := podsByName(t, c, ns)

	if _, err := c.kit.Client.CoreV1().Pods(ns).Create(c.ctx, share("high", "high"), metav1.CreateOptions{}); err != nil {
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
	pods := c.createClaimPods(ns)
	c.checkClaimsAllocated(ns, node, pods, kubelet, slices, "deviceshare-kube-scheduler")
}
