package e2e

import (
	"strings"
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
