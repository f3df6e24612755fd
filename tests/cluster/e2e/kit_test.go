package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The kit as a user runs it: node agents of both dialects register
// through the real API; pods of both dialects created without a
// schedulerName go through the real API server's call of the webhook
// (its matchConditions evaluated there), are scheduled by the stock
// kube-scheduler through the extender and bound with the records HAMi's
// and Volcano's device plugins read; a pod that can never fit is refused
// with the reason; a pod that asks no GPU never reaches the webhook.
func TestKitPlacesPodsOfBothDialects(t *testing.T) {
	c := newCluster(t)
	c.gpuNode("hami-node", "hami", 4)
	c.gpuNode("volcano-node", "volcano", 4)
	extender := c.startScheduling()
	const ns = "team-a"
	c.placesPodsOfBothDialects(ns)

	c.expectAdmitted()
	pods := c.kit.Client.CoreV1().Pods(ns)
	// With the extender (and so the webhook) down, failurePolicy Fail
	// refuses a GPU pod, and matchConditions keep every other pod away
	// from the webhook: it is admitted, its schedulerName untouched.
	extender.Kill()
	_, err := pods.Create(c.ctx, pod("gpu-while-down", map[string]string{"volcano.sh/vgpu-number": "1"}), metav1.CreateOptions{})
	if err == nil || !strings.Contains(err.Error(), "deviceshare-scheduler") {
		t.Errorf("GPU pod created while the webhook is down: err = %v, want the webhook's failure", err)
	}
	plain, err := pods.Create(c.ctx, pod("no-gpu", map[string]string{"cpu": "1"}), metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("a pod without GPUs was sent to the webhook: %v", err)
	}
	if plain.Spec.SchedulerName != "default-scheduler" {
		t.Errorf("no-gpu: schedulerName %q, want default-scheduler", plain.Spec.SchedulerName)
	}
}

// placesPodsOfBothDialects creates pods of both dialects in namespace ns
// (a node hami-node and a node volcano-node serve them) and checks where
// they land and the records they carry, and that a pod that can never fit
// is refused with the reason.
func (c *cluster) placesPodsOfBothDialects(ns string) {
	t := c.t
	t.Helper()
	c.createNamespace(ns)
	pods := c.kit.Client.CoreV1().Pods(ns)

	hami := pod("hami-share", map[string]string{"nvidia.com/gpu": "1", "nvidia.com/gpumem": "20000", "nvidia.com/gpucores": "30"})
	volcano := pod("volcano-share", map[string]string{"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "10000"})
	// More of each, pinned nowhere: each dialect's pods must land on the
	// node whose device plugin serves their resource (the node's
	// allocatable, as kubelet advertises it). Kubelet admits a pod whose
	// extended resource the node lacks without calling any plugin, so a
	// pod placed on the other node would run without its share.
	all := []*corev1.Pod{hami, volcano}
	for i := 0; i < 3; i++ {
		all = append(all,
			pod(fmt.Sprintf("hami-%d", i), map[string]string{"nvidia.com/gpu": "1", "nvidia.com/gpumem": "5000"}),
			pod(fmt.Sprintf("volcano-%d", i), map[string]string{"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "5000"}))
	}
	for _, p := range all {
		created, err := pods.Create(c.ctx, p, metav1.CreateOptions{})
		if err != nil {
			t.Fatalf("create %s: %v", p.Name, err)
		}
		if created.Spec.SchedulerName != "deviceshare-scheduler" {
			t.Errorf("%s: schedulerName %q after admission, want deviceshare-scheduler", p.Name, created.Spec.SchedulerName)
		}
	}
	for _, p := range all {
		bound := c.waitBound(ns, p.Name, 60*time.Second)
		want := "hami-node"
		if strings.HasPrefix(p.Name, "volcano") {
			want = "volcano-node"
		}
		if bound.Spec.NodeName != want {
			t.Errorf("%s bound to %s, whose device plugin does not serve its resource; want %s", p.Name, bound.Spec.NodeName, want)
		}
	}
	boundHami := c.waitBound(ns, "hami-share", 60*time.Second)
	if record := boundHami.Annotations["hami.io/vgpu-devices-allocated"]; !strings.Contains(record, ",NVIDIA,20000,30:") {
		t.Errorf("hami-share: hami.io/vgpu-devices-allocated = %q, want one GPU with 20000 MiB and 30 cores", record)
	}
	boundVolcano := c.waitBound(ns, "volcano-share", 60*time.Second)
	if record := boundVolcano.Annotations["volcano.sh/vgpu-ids-new"]; !strings.Contains(record, ",NVIDIA,10000,") {
		t.Errorf("volcano-share: volcano.sh/vgpu-ids-new = %q, want one GPU with 10000 MiB", record)
	}

	// 200000 MiB fits no H100: refused with the reason, never bound.
	if _, err := pods.Create(c.ctx, pod("too-big", map[string]string{"nvidia.com/gpu": "1", "nvidia.com/gpumem": "200000"}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	c.waitRefused(ns, "too-big", "InsufficientMemory", 60*time.Second)

}
