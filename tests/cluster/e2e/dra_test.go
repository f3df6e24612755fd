package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	resourcev1 "k8s.io/api/resource/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deviceshare/deviceshare/tests/cluster/controlplane"
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
	slices := c.waitSlices(node, agent)
	devices := 0
	for _, slice := range slices {
		devices += len(slice.Spec.Devices)
	}
	if devices < 8 {
		t.Errorf("%d devices in %d slices, want at least one per GPU", devices, len(slices))
	}
	// The agent's words for a write the API server refused (a bare "422"
	// would also match a port or a folder name in the log).
	if log := agent.Log(); strings.Contains(log, "ResourceSlices not published") || strings.Contains(log, "HTTP 422") {
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

// TestDRAClaimsPreparedByTheNodeAgent: deploy/dra's node agent serves the
// DRA kubelet plugin API to kubelet's own DRA code (kit.DRAKubelet: its
// plugin manager and DRA manager) on a node of 8 H100s, the last four in
// MIG mode. Checked: kubelet registers the plugin from its registration
// socket and the agent hears so; the stock kube-scheduler allocates a
// share of a hami-core GPU (8Gi, 25 % of the SMs) and a 1g.10gb MIG
// partition from templates; kubelet's NodePrepareResources reaches the
// agent, which reads each claim from the API server under its
// ServiceAccount and answers, per allocated device, the claim's pool,
// device and share id with one CDI device id of the driver's kind, the ids
// kubelet hands the container; the CDI spec the agent wrote for the claim
// exists and holds those devices with the allocated GPU's device node and,
// for the share, the GPU's uuid and the claim's memory and SM limits, for
// the partition, the MIG instance the agent created at the allocated
// placement (in the fake NVML's state). Deleting the pods makes kubelet
// call NodeUnprepareResources: the specs and the MIG instance are gone.
func TestDRAClaimsPreparedByTheNodeAgent(t *testing.T) {
	c := newCluster(t, withThen("deploy/dra"))
	const node = "dra-node"
	kubelet, agent, slices := c.draNode(node)
	if !strings.Contains(agent.Log(), "kubelet registered the plugin") {
		t.Errorf("the agent did not hear kubelet's NotifyRegistrationStatus:\n%s", agent.Log())
	}
	if _, err := c.kit.StartDefaultScheduler(c.ctx); err != nil {
		t.Fatal(err)
	}
	const ns = "ml"
	c.createNamespace(ns)
	c.createTemplates(ns, kit.ShareTemplate("share-8g", "8Gi", "25"), kit.MIGTemplate("mig-1g", "1g.10gb"))
	pods := []*corev1.Pod{claimPod("infer", "share-8g", ""), claimPod("train", "mig-1g", "")}
	for _, p := range pods {
		if _, err := c.kit.Client.CoreV1().Pods(ns).Create(c.ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	var prepared []preparedClaim
	for _, p := range pods {
		bound := c.waitBound(ns, p.Name, 90*time.Second)
		claim := c.podClaim(bound)
		prepared = append(prepared, c.checkPrepared(kubelet, node, bound, claim, slices))
	}
	if got := prepared[1].migInstances(); got != 1 {
		t.Errorf("%d MIG instances at the allocated placement after prepare, want 1", got)
	}

	for _, p := range pods {
		if err := c.kit.Client.CoreV1().Pods(ns).Delete(c.ctx, p.Name, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, done := range prepared {
		c.eventually("claims of "+done.pod.Name+" unprepared", 60*time.Second, func() (bool, string) {
			return kubelet.Unprepared(done.pod.UID), kubelet.LastError(done.pod.UID)
		})
		if _, err := os.Stat(done.specPath); !os.IsNotExist(err) {
			t.Errorf("%s: CDI spec %s still there after NodeUnprepareResources (%v)", done.pod.Name, done.specPath, err)
		}
	}
	if got := prepared[1].migInstances(); got != 0 {
		t.Errorf("%d MIG instances at the allocated placement after unprepare, want 0", got)
	}
	for _, failure := range kubelet.Errors() {
		t.Logf("kubelet retried after: %s", failure)
	}
}

// TestDRAClaimsAllocatedByServe: the kit's own scheduling (the
// deviceshare-scheduler profile of deploy/kube-scheduler-config.yaml,
// DynamicResources off, the extender's /bind allocating) places pods of
// that profile whose claims come from templates, on a node whose agent
// publishes deploy/dra's slices. Checked, as read back from the API
// server: `serve` wrote each claim's status (managedFields: the
// deviceshare client, through the status subresource, not
// kube-scheduler): an allocation of one device of the driver in the node's
// pool, a device the node published, with the request's consumed capacity
// and a share id for a share (distinct per claim), a node selector for that
// node, and reservedFor naming the pod by uid; the pod is bound to that
// node. kubelet's DRA code then prepares the claims through the node
// agent, so the allocation serve wrote is one the driver serves.
func TestDRAClaimsAllocatedByServe(t *testing.T) {
	c := newCluster(t, withThen("deploy/dra"))
	const node = "dra-node"
	kubelet, _, slices := c.draNode(node)
	extender := c.startScheduling()
	const ns = "ml"
	pods := c.createClaimPods(ns)
	c.checkClaimsAllocated(ns, node, pods, kubelet, slices, "deviceshare")
	if log := extender.Log(); strings.Contains(log, "writing the status of ResourceClaim") {
		t.Errorf("serve failed to write a claim's status:\n%s", log)
	}
}

// checkClaimsAllocated waits for `pods` (each with one claim from a
// template) to be bound to `node` and checks, as read back from the API
// server, that their scheduler (whose client is `writer` in the claims'
// managedFields) wrote each claim's status: one device of the driver in
// the node's pool, one the node published, with the request's consumed
// capacity and a distinct share id for a share, a node selector for that
// node, reservedFor naming the pod by uid; then that kubelet's DRA code
// prepared it through the node agent.
func (c *cluster) checkClaimsAllocated(ns, node string, pods []*corev1.Pod, kubelet *kit.DRAKubelet,
	slices []resourcev1.ResourceSlice, writer string) {
	t := c.t
	t.Helper()
	shareIDs := map[string]string{}
	for _, p := range pods {
		bound := c.waitBound(ns, p.Name, 90*time.Second)
		if bound.Spec.NodeName != node {
			t.Errorf("%s bound to %q, want %s", bound.Name, bound.Spec.NodeName, node)
		}
		claim := c.podClaim(bound)
		allocation := claim.Status.Allocation
		if allocation == nil || len(allocation.Devices.Results) != 1 {
			t.Fatalf("claim %s: allocation %+v, want one device", claim.Name, allocation)
		}
		result := allocation.Devices.Results[0]
		if result.Driver != draDriver || result.Pool != node {
			t.Errorf("claim %s: device %s/%s/%s, want one of %s's pool", claim.Name, result.Driver, result.Pool, result.Device, node)
		}
		device := publishedDevice(slices, result.Pool, result.Device)
		if device == nil {
			t.Fatalf("claim %s: device %s is not one %s published", claim.Name, result.Device, node)
		}
		if selected := selectedNode(allocation.NodeSelector); selected != node {
			t.Errorf("claim %s: allocation's node selector selects %q, want %s: %+v", claim.Name, selected, node, allocation.NodeSelector)
		}
		if len(claim.Status.ReservedFor) != 1 || claim.Status.ReservedFor[0].Resource != "pods" ||
			claim.Status.ReservedFor[0].Name != bound.Name || claim.Status.ReservedFor[0].UID != bound.UID {
			t.Errorf("claim %s: reservedFor %+v, want only pod %s (%s)", claim.Name, claim.Status.ReservedFor, bound.Name, bound.UID)
		}
		if got := statusWriter(claim); got != writer {
			t.Errorf("claim %s: status written by %q, want %q", claim.Name, got, writer)
		}
		if strings.HasPrefix(p.Name, "infer") {
			for capacity, want := range map[resourcev1.QualifiedName]string{"memory": "8Gi", "cores": "25"} {
				got := result.ConsumedCapacity[capacity]
				if got.Cmp(resource.MustParse(want)) != 0 {
					t.Errorf("claim %s: consumed %s %s, want %s", claim.Name, capacity, got.String(), want)
				}
			}
			if result.ShareID == nil || *result.ShareID == "" {
				t.Errorf("claim %s: a share of %s without a share id", claim.Name, result.Device)
			} else if other, taken := shareIDs[string(*result.ShareID)]; taken {
				t.Errorf("claims %s and %s: the same share id %s", other, claim.Name, *result.ShareID)
			} else {
				shareIDs[string(*result.ShareID)] = claim.Name
			}
		} else if device.Attributes["type"].StringValue == nil || *device.Attributes["type"].StringValue != "mig" {
			t.Errorf("claim %s: device %s is not a MIG partition", claim.Name, result.Device)
		}
		t.Logf("%s: claim %s allocated %s (share %s), reserved for %s", bound.Name, claim.Name, result.Device,
			ptrString(result.ShareID), bound.UID)
		c.checkPrepared(kubelet, node, bound, claim, slices)
	}
}

// draNode creates a Node of 8 H100s, the last four in MIG mode, starts its
// DRA kubelet and then the kit's DRA node agent, and waits until kubelet
// has registered the agent's plugin and the agent has published its pool.
func (c *cluster) draNode(node string) (*kit.DRAKubelet, *controlplane.Process, []resourcev1.ResourceSlice) {
	c.t.Helper()
	if _, err := kit.CreateNode(c.ctx, c.kit, node, map[string]string{"gpu": "on"}); err != nil {
		c.t.Fatal(err)
	}
	kubelet, err := c.kit.StartDRAKubelet(c.ctx, node)
	if err != nil {
		c.t.Fatal(err)
	}
	gpus := kit.H100s(node, 8)
	for i := 4; i < 8; i++ {
		gpus[i].MIGMode = true
	}
	agent, err := c.kit.StartNodeAgent(c.ctx, node, kit.AgentOptions{Inventory: kit.Inventory(gpus)})
	if err != nil {
		c.t.Fatal(err)
	}
	c.eventually("kubelet registered DRA driver "+draDriver+" on "+node, 60*time.Second, func() (bool, string) {
		if !agent.Running() {
			c.t.Fatalf("node agent exited:\n%s", agent.Log())
		}
		return kubelet.Registered(draDriver), "not registered"
	})
	return kubelet, agent, c.waitSlices(node, agent)
}

// waitSlices waits until the node's agent has published its whole pool
// and returns the pool's slices.
func (c *cluster) waitSlices(node string, agent *controlplane.Process) []resourcev1.ResourceSlice {
	c.t.Helper()
	var slices []resourcev1.ResourceSlice
	c.eventually("ResourceSlices of "+node+" published", 60*time.Second, func() (bool, string) {
		if !agent.Running() {
			c.t.Fatalf("node agent exited:\n%s", agent.Log())
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
	return slices
}

func (c *cluster) createTemplates(namespace string, templates ...*resourcev1.ResourceClaimTemplate) {
	c.t.Helper()
	for _, template := range templates {
		if _, err := c.kit.Client.ResourceV1().ResourceClaimTemplates(namespace).Create(c.ctx, template, metav1.CreateOptions{}); err != nil {
			c.t.Fatal(err)
		}
	}
}

// claimPod is a pod whose one container uses a claim made from template.
func claimPod(name, template, schedulerName string) *corev1.Pod {
	p := pod(name, nil)
	p.Spec.SchedulerName = schedulerName
	p.Spec.ResourceClaims = []corev1.PodResourceClaim{{Name: "gpu", ResourceClaimTemplateName: &template}}
	p.Spec.Containers[0].Resources.Claims = []corev1.ResourceClaim{{Name: "gpu"}}
	return p
}

// podClaim reads the claim the ResourceClaim controller made for the
// pod's one template claim.
func (c *cluster) podClaim(p *corev1.Pod) *resourcev1.ResourceClaim {
	c.t.Helper()
	if len(p.Status.ResourceClaimStatuses) != 1 || p.Status.ResourceClaimStatuses[0].ResourceClaimName == nil {
		c.t.Fatalf("%s: no claim made from the template: %+v", p.Name, p.Status.ResourceClaimStatuses)
	}
	name := *p.Status.ResourceClaimStatuses[0].ResourceClaimName
	claim, err := c.kit.Client.ResourceV1().ResourceClaims(p.Namespace).Get(c.ctx, name, metav1.GetOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	return claim
}

// preparedClaim is a claim checked prepared, with what unprepare must
// undo.
type preparedClaim struct {
	pod      *corev1.Pod
	specPath string
	// For a MIG partition: the fake NVML's state file, the parent GPU and
	// the allocated placement.
	nvmlState, gpu string
	start          int64
}

// migInstances counts the GPU instances the fake NVML has on the claim's
// GPU at its allocated placement.
func (p preparedClaim) migInstances() int {
	data, err := os.ReadFile(p.nvmlState)
	if os.IsNotExist(err) {
		return 0
	}
	if err != nil {
		return -1
	}
	var state struct {
		GPUs map[string][]struct {
			Start int64 `json:"start"`
		} `json:"gpus"`
	}
	if err := json.Unmarshal(data, &state); err != nil {
		return -1
	}
	n := 0
	for _, instance := range state.GPUs[p.gpu] {
		if instance.Start == p.start {
			n++
		}
	}
	return n
}

// cdiSpec is the part of a CDI spec file the tests read.
type cdiSpec struct {
	Kind    string `json:"kind"`
	Devices []struct {
		Name           string `json:"name"`
		ContainerEdits struct {
			DeviceNodes []struct {
				Path string `json:"path"`
			} `json:"deviceNodes"`
		} `json:"containerEdits"`
	} `json:"devices"`
	ContainerEdits struct {
		Env []string `json:"env"`
	} `json:"containerEdits"`
}

// checkPrepared waits until kubelet has prepared the pod's claim and
// checks the driver's answer and the CDI spec against the claim's
// allocation (one device of the driver) and the device published for it.
func (c *cluster) checkPrepared(kubelet *kit.DRAKubelet, node string, p *corev1.Pod, claim *resourcev1.ResourceClaim,
	published []resourcev1.ResourceSlice) preparedClaim {
	c.t.Helper()
	var prepared kit.PreparedPod
	c.eventually("claims of "+p.Name+" prepared", 90*time.Second, func() (bool, string) {
		var ok bool
		prepared, ok = kubelet.Prepared(p.UID)
		return ok, kubelet.LastError(p.UID)
	})
	if claim.Status.Allocation == nil || len(claim.Status.Allocation.Devices.Results) != 1 {
		c.t.Fatalf("claim %s: allocation %+v, want one device", claim.Name, claim.Status.Allocation)
	}
	result := claim.Status.Allocation.Devices.Results[0]
	device := publishedDevice(published, result.Pool, result.Device)
	if device == nil {
		c.t.Fatalf("claim %s: device %s/%s is not published", claim.Name, result.Pool, result.Device)
	}
	wantShare := ""
	if result.ShareID != nil {
		wantShare = string(*result.ShareID)
	}
	if len(prepared.Claims) != 1 || prepared.Claims[0].UID != claim.UID || len(prepared.Claims[0].Devices) != 1 {
		c.t.Fatalf("%s: kubelet prepared %+v, want claim %s (%s) with one device", p.Name, prepared.Claims, claim.Name, claim.UID)
	}
	answered := prepared.Claims[0].Devices[0]
	if answered.Driver != draDriver || answered.Pool != result.Pool || answered.Device != result.Device ||
		answered.ShareID != wantShare {
		c.t.Errorf("%s: the agent answered %s/%s/%s share %q, the claim is allocated %s/%s/%s share %q", p.Name,
			answered.Driver, answered.Pool, answered.Device, answered.ShareID, result.Driver, result.Pool, result.Device,
			wantShare)
	}
	if len(answered.Requests) != 1 || answered.Requests[0] != result.Request {
		c.t.Errorf("%s: the agent answered for requests %v, the claim's result is for %s", p.Name, answered.Requests, result.Request)
	}
	const kind = draDriver + "/claim"
	if len(answered.CDIDeviceIDs) != 1 || !strings.HasPrefix(answered.CDIDeviceIDs[0], kind+"=") {
		c.t.Fatalf("%s: CDI device ids %v, want one of kind %s", p.Name, answered.CDIDeviceIDs, kind)
	}
	id := answered.CDIDeviceIDs[0]
	if got := prepared.CDIDevices["main"]; len(got) != 1 || got[0] != id {
		c.t.Errorf("%s: container main gets CDI devices %v, want [%s]", p.Name, got, id)
	}

	specPath := c.kit.HostPath(node, "/var/run/cdi/"+draDriver+"-claim-"+string(claim.UID)+".json")
	data, err := os.ReadFile(specPath)
	if err != nil {
		c.t.Fatalf("%s: the claim's CDI spec: %v", p.Name, err)
	}
	var spec cdiSpec
	if err := json.Unmarshal(data, &spec); err != nil {
		c.t.Fatalf("CDI spec %s: %v", specPath, err)
	}
	if spec.Kind != kind {
		c.t.Errorf("CDI spec %s: kind %q, want %q", specPath, spec.Kind, kind)
	}
	index := device.Attributes["index"].IntValue
	if index == nil {
		c.t.Fatalf("device %s has no index attribute", device.Name)
	}
	wantNode := fmt.Sprintf("/dev/nvidia%d", *index)
	found := false
	for _, d := range spec.Devices {
		if kind+"="+d.Name != id {
			continue
		}
		found = true
		if len(d.ContainerEdits.DeviceNodes) != 1 || d.ContainerEdits.DeviceNodes[0].Path != wantNode {
			c.t.Errorf("CDI device %s: device nodes %+v, want %s (device %s)", id, d.ContainerEdits.DeviceNodes, wantNode, device.Name)
		}
	}
	if !found {
		c.t.Errorf("CDI spec %s has no device %s:\n%s", specPath, id, data)
	}
	env := strings.Join(spec.ContainerEdits.Env, "\n")
	out := preparedClaim{pod: p, specPath: specPath}
	if device.Attributes["type"].StringValue != nil && *device.Attributes["type"].StringValue == "mig" {
		out.nvmlState = c.kit.HostPath(node, "nvml-state.json")
		out.gpu = *device.Attributes["parentUUID"].StringValue
		out.start = *device.Attributes["placementStart"].IntValue
		if !strings.Contains(env, "NVIDIA_VISIBLE_DEVICES=MIG-") {
			c.t.Errorf("CDI spec %s: no MIG device made visible:\n%s", specPath, env)
		}
	} else {
		memory := result.ConsumedCapacity["memory"]
		cores := result.ConsumedCapacity["cores"]
		for _, want := range []string{"NVIDIA_VISIBLE_DEVICES=" + *device.Attributes["uuid"].StringValue,
			fmt.Sprintf("CUDA_DEVICE_MEMORY_LIMIT_0=%dm", memory.Value()>>20),
			fmt.Sprintf("CUDA_DEVICE_SM_LIMIT=%d", cores.Value())} {
			if !slices.Contains(spec.ContainerEdits.Env, want) {
				c.t.Errorf("CDI spec %s: no %s in its environment:\n%s", specPath, want, env)
			}
		}
	}
	c.t.Logf("%s: kubelet prepared claim %s: %s/%s -> %s (%s)", p.Name, claim.Name, answered.Pool, answered.Device, id, specPath)
	return out
}

// publishedDevice finds a device of the driver's pool in the slices.
func publishedDevice(slices []resourcev1.ResourceSlice, pool, name string) *resourcev1.Device {
	for i := range slices {
		if slices[i].Spec.Driver != draDriver || slices[i].Spec.Pool.Name != pool {
			continue
		}
		for j := range slices[i].Spec.Devices {
			if slices[i].Spec.Devices[j].Name == name {
				return &slices[i].Spec.Devices[j]
			}
		}
	}
	return nil
}

// selectedNode is the node an allocation's node selector names by
// metadata.name ("" when it selects otherwise).
func selectedNode(selector *corev1.NodeSelector) string {
	if selector == nil || len(selector.NodeSelectorTerms) != 1 {
		return ""
	}
	term := selector.NodeSelectorTerms[0]
	if len(term.MatchExpressions) != 0 || len(term.MatchFields) != 1 {
		return ""
	}
	field := term.MatchFields[0]
	if field.Key != "metadata.name" || field.Operator != corev1.NodeSelectorOpIn || len(field.Values) != 1 {
		return ""
	}
	return field.Values[0]
}

// statusWriter is the field manager that owns the claim's
// status.allocation (the client's user agent up to its first '/').
func statusWriter(claim *resourcev1.ResourceClaim) string {
	for _, entry := range claim.ManagedFields {
		if entry.Subresource == "status" && entry.FieldsV1 != nil &&
			strings.Contains(string(entry.FieldsV1.Raw), `"f:allocation"`) {
			return entry.Manager
		}
	}
	return ""
}

// createClaimPods makes namespace ns with the templates share-8g (a share
// of 8Gi and 25 % of an H100) and mig-1g (a 1g.10gb MIG instance) and
// creates pods of the deviceshare-scheduler profile with a claim from
// each: infer-1 and infer-2 (share-8g) and train (mig-1g).
func (c *cluster) createClaimPods(ns string) []*corev1.Pod {
	c.t.Helper()
	c.createNamespace(ns)
	c.createTemplates(ns, kit.ShareTemplate("share-8g", "8Gi", "25"), kit.MIGTemplate("mig-1g", "1g.10gb"))
	pods := []*corev1.Pod{claimPod("infer-1", "share-8g", "deviceshare-scheduler"),
		claimPod("infer-2", "share-8g", "deviceshare-scheduler"),
		claimPod("train", "mig-1g", "deviceshare-scheduler")}
	for _, p := range pods {
		if _, err := c.kit.Client.CoreV1().Pods(ns).Create(c.ctx, p, metav1.CreateOptions{}); err != nil {
			c.t.Fatal(err)
		}
	}
	return pods
}
