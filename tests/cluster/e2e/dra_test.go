package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deviceshare/deviceshare/tests/cluster/kit"
)

const draDriver = "gpu.deviceshare.io"

// deploy/dra on top of deploy/: the node agent publishes the
// ResourceSlices of an 8-GPU node, half of it in MIG mode, and the real
// API server's validation accepts every one; the stock kube-scheduler
// (DynamicResources on) allocates claims made from a template by the
// ResourceClaim controller against those slices and the kit's
// DeviceClasses.
func TestDRASlicesAllocatedByStockScheduler(t *testing.T) {
	c := newCluster(t, withThen("deploy/dra"))
	const node = "dra-node"
	if _, err := kit.CreateNode(c.ctx, c.kit, node, map[string]string{"gpu": "on"}); err != nil {
		t.Fatal(err)
	}
	gpus := kit.H100s(node, 8)
	for i := 4; i < 8; i++ {
		gpus[i].MIGMode = true
	}
	agent, err := c.kit.StartNodeAgent(c.ctx, node, kit.AgentOptions{Inventory: kit.Inventory(gpus)})
	if err != nil {
		t.Fatal(err)
	}
	var slices []resourcev1.ResourceSlice
	c.eventually("ResourceSlices of "+node+" published", 60*time.Second, func() (bool, string) {
		if !agent.Running() {
			t.Fatalf("node agent exited:\n%s", agent.Log())
		}
		list, err := c.kit.Client.ResourceV1().ResourceSlices().List(c.ctx, metav1.ListOptions{})
		if err != nil {
			return false, err.Error()
		}
		slices = nil
		for _, slice := range list.Items {
			if slice.Spec.Driver == draDriver && slice.Spec.NodeName != nil && *slice.Spec.NodeName == node {
				slices = append(slices, slice)
			}
		}
		if len(slices) == 0 {
			return false, "none yet"
		}
		// The pool is complete when it has as many slices as it says.
		return int64(len(slices)) == slices[0].Spec.Pool.ResourceSliceCount, fmt.Sprintf("%d slices", len(slices))
	})
	devices := 0
	for _, slice := range slices {
		devices += len(slice.Spec.Devices)
	}
	if devices < 8 {
		t.Errorf("%d devices in %d slices, want at least one per GPU", devices, len(slices))
	}
	if log := agent.Log(); strings.Contains(log, "Invalid") || strings.Contains(log, "422") {
		t.Errorf("the API server refused a slice:\n%s", log)
	}
	t.Logf("%d ResourceSlices, %d devices accepted for 8 GPUs (4 in MIG mode)", len(slices), devices)

	if _, err := c.kit.StartDefaultScheduler(c.ctx); err != nil {
		t.Fatal(err)
	}
	const ns = "ml"
	c.createNamespace(ns)
	template := kit.ShareTemplate("share-8g", "8Gi", "25")
	if _, err := c.kit.Client.ResourceV1().ResourceClaimTemplates(ns).Create(c.ctx, template, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		p := pod(fmt.Sprintf("infer-%d", i), nil)
		p.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: &template.Name}}
		p.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
		if _, err := c.kit.Client.CoreV1().Pods(ns).Create(c.ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for i := 1; i <= 2; i++ {
		bound := c.waitBound(ns, fmt.Sprintf("infer-%d", i), 90*time.Second)
		if len(bound.Status.ResourceClaimStatuses) != 1 || bound.Status.ResourceClaimStatuses[0].ResourceClaimName == nil {
			t.Fatalf("%s: no claim made from the template: %+v", bound.Name, bound.Status.ResourceClaimStatuses)
		}
		name := *bound.Status.ResourceClaimStatuses[0].ResourceClaimName
		claim, err := c.kit.Client.ResourceV1().ResourceClaims(ns).Get(c.ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if claim.Status.Allocation == nil || len(claim.Status.Allocation.Devices.Results) != 1 {
			t.Fatalf("claim %s: allocation %+v", name, claim.Status.Allocation)
		}
		result := claim.Status.Allocation.Devices.Results[0]
		if result.Driver != draDriver || result.Pool != node {
			t.Errorf("claim %s: device %s/%s/%s, want one of %s's", name, result.Driver, result.Pool, result.Device, node)
		}
		memory := result.ConsumedCapacity["memory"]
		if memory.Cmp(resource.MustParse("8Gi")) != 0 {
			t.Errorf("claim %s: consumed memory %s, want 8Gi", name, memory.String())
		}
		t.Logf("%s: claim %s allocated %s (share %v), memory %s", bound.Name, name, result.Device, ptrString(result.ShareID), memory.String())
	}
}

func ptrString[T any](p *T) string {
	if p == nil {
		return "<nil>"
	}
	return fmt.Sprint(*p)
}
