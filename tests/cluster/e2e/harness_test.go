// Package e2e runs deviceshare's kit against the real control plane:
// etcd, kube-apiserver, kube-controller-manager, kube-scheduler and
// kubectl built from Kubernetes' modules (../go.mod), deviceshare's own
// binaries from the CMake build. ctest runs it (label e2e) through
// run_e2e.sh, which passes where everything is.
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deviceshare/deviceshare/tests/cluster/controlplane"
	"github.com/deviceshare/deviceshare/tests/cluster/kit"
)

// env names what run_e2e.sh passes.
type env struct {
	bin, repo, scheduler, nodeAgent, fakeNVML, kubeScheduler string
}

func environment(t *testing.T) env {
	t.Helper()
	e := env{
		bin:       os.Getenv("DEVICESHARE_K8S_BIN"),
		repo:      os.Getenv("DEVICESHARE_REPO"),
		scheduler: os.Getenv("DEVICESHARE_SCHEDULER"),
		nodeAgent: os.Getenv("DEVICESHARE_NODE_AGENT"),
		fakeNVML:  os.Getenv("DEVICESHARE_FAKE_NVML"),
		// Only the in-process tests need it (withInProcess).
		kubeScheduler: os.Getenv("DEVICESHARE_KUBE_SCHEDULER"),
	}
	if e.bin == "" || e.repo == "" || e.scheduler == "" || e.nodeAgent == "" || e.fakeNVML == "" {
		t.Skip("DEVICESHARE_K8S_BIN, _REPO, _SCHEDULER, _NODE_AGENT and _FAKE_NVML are not all set (run through ctest -L e2e)")
	}
	return e
}

// cluster is a control plane with the kit applied, removed at the end of
// the test (its programs' logs printed first when the test failed).
type cluster struct {
	t        *testing.T
	ctx      context.Context
	plane    *controlplane.ControlPlane
	kit      *kit.Kit
	kubelets []*kit.DeviceKubelet
}

// clusterOption changes how a test's control plane or kit is set up.
type clusterOption func(*controlplane.Options, *kit.Options)

// withThen applies more kit folders after deploy/ (e.g. deploy/dra).
func withThen(folders ...string) clusterOption {
	return func(_ *controlplane.Options, k *kit.Options) { k.Then = append(k.Then, folders...) }
}

// withInProcess applies the kit with deviceshare in-process
// (SCHEDULER=in-process: deviceshare-kube-scheduler instead of
// kube-scheduler + extender); the test is skipped where it was not built.
func withInProcess(t *testing.T) clusterOption {
	if os.Getenv("DEVICESHARE_KUBE_SCHEDULER") == "" {
		t.Skip("DEVICESHARE_KUBE_SCHEDULER is not set (deviceshare-kube-scheduler is built with Go >= 1.26)")
	}
	return func(_ *controlplane.Options, k *kit.Options) { k.InProcess = true }
}

// withAPIServerArgs adds kube-apiserver flags.
func withAPIServerArgs(args ...string) clusterOption {
	return func(p *controlplane.Options, _ *kit.Options) {
		p.ExtraAPIServerArgs = append(p.ExtraAPIServerArgs, args...)
	}
}

func newCluster(t *testing.T, options ...clusterOption) *cluster {
	e := environment(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	// A short folder: unix sockets under it must stay below 108 bytes.
	dir, err := os.MkdirTemp("", "ds-e2e-")
	if err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, ctx: ctx}
	t.Cleanup(func() {
		if c.kit != nil {
			c.kit.Stop()
		}
		if c.plane != nil {
			c.plane.Stop()
		}
		if t.Failed() {
			printLogs(t, dir)
		}
		if os.Getenv("DEVICESHARE_E2E_KEEP") != "" {
			t.Logf("kept %s (DEVICESHARE_E2E_KEEP)", dir)
		} else {
			os.RemoveAll(dir)
		}
		cancel()
	})
	planeOptions := controlplane.Options{BinDir: e.bin, Dir: dir}
	kitOptions := kit.Options{RepoRoot: e.repo, BinDir: e.bin,
		Scheduler: e.scheduler, NodeAgent: e.nodeAgent, FakeNVML: e.fakeNVML,
		KubeScheduler: e.kubeScheduler}
	for _, option := range options {
		option(&planeOptions, &kitOptions)
	}
	c.plane, err = controlplane.Start(ctx, planeOptions)
	if err != nil {
		t.Fatal(err)
	}
	c.kit, err = kit.Apply(ctx, c.plane, kitOptions)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// printLogs prints the tail of every program's log.
func printLogs(t *testing.T, dir string) {
	logs, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	kitLogs, _ := filepath.Glob(filepath.Join(dir, "kit", "*.log"))
	logs = append(logs, kitLogs...)
	for _, path := range logs {
		data, _ := os.ReadFile(path)
		text := string(data)
		if len(text) > 3000 {
			text = "..." + text[len(text)-3000:]
		}
		t.Logf("==== %s ====\n%s", filepath.Base(path), text)
	}
}

// gpuNode creates a Node labelled for the node agent and starts its agent
// in `dialect` with `gpus` H100s, then waits for its registration.
func (c *cluster) gpuNode(name, dialect string, gpus int, extraArgs ...string) {
	c.t.Helper()
	if _, err := kit.CreateNode(c.ctx, c.kit, name, map[string]string{"gpu": "on"}); err != nil {
		c.t.Fatal(err)
	}
	// kubelet's device manager, which admits the node's pods through the
	// agent's device plugin (the agent then marks them bind-phase success).
	kubelet, err := c.kit.StartDeviceKubelet(c.ctx, name)
	if err != nil {
		c.t.Fatal(err)
	}
	c.kubelets = append(c.kubelets, kubelet)
	agent, err := c.kit.StartNodeAgent(c.ctx, name, kit.AgentOptions{Dialect: dialect,
		Inventory: kit.Inventory(kit.H100s(name, gpus)), ExtraArgs: extraArgs})
	if err != nil {
		c.t.Fatal(err)
	}
	key := "hami.io/node-nvidia-register"
	if dialect == "volcano" {
		key = "volcano.sh/node-vgpu-register"
	}
	c.eventually(fmt.Sprintf("node %s registered (%s)", name, key), 60*time.Second, func() (bool, string) {
		if !agent.Running() {
			c.t.Fatalf("node agent of %s exited:\n%s", name, agent.Log())
		}
		node, err := c.kit.Client.CoreV1().Nodes().Get(c.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		return node.Annotations[key] != "", fmt.Sprint(node.Annotations)
	})
}

// startScheduling runs one extender replica (with these extra flags) and,
// once it is ready, the kit's kube-scheduler.
func (c *cluster) startScheduling(extenderArgs ...string) *kit.Extender {
	c.t.Helper()
	extender, err := c.kit.StartExtender(c.ctx, 0, extenderArgs...)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := extender.WaitReady(c.ctx, 60*time.Second); err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.kit.StartKubeScheduler(c.ctx); err != nil {
		c.t.Fatal(err)
	}
	return extender
}

// boundPods counts the namespace's pods bound to a node (-1 when the
// API server does not answer).
func (c *cluster) boundPods(namespace string) int {
	list, err := c.kit.Client.CoreV1().Pods(namespace).List(c.ctx, metav1.ListOptions{})
	if err != nil {
		return -1
	}
	n := 0
	for _, p := range list.Items {
		if p.Spec.NodeName != "" {
			n++
		}
	}
	return n
}

// expectAdmitted fails the test for every pod a node's kubelet could not
// admit (the device plugin refused its devices).
func (c *cluster) expectAdmitted() {
	c.t.Helper()
	for _, kubelet := range c.kubelets {
		for _, failure := range kubelet.Errors() {
			c.t.Errorf("kubelet admission failed: %s", failure)
		}
	}
}

// eventually polls until check holds, failing with its last word.
func (c *cluster) eventually(what string, timeout time.Duration, check func() (bool, string)) {
	c.t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		ok, detail := check()
		if ok {
			return
		}
		last = detail
		time.Sleep(200 * time.Millisecond)
	}
	c.t.Fatalf("%s: not after %v; last: %s", what, timeout, last)
}

// pod builds a pod of one container with these limits; no schedulerName.
func pod(name string, limits map[string]string) *corev1.Pod {
	list := corev1.ResourceList{}
	for key, value := range limits {
		list[corev1.ResourceName(key)] = mustQuantity(value)
	}
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PodSpec{
			Containers: []corev1.Container{{Name: "main", Image: "registry.example/cuda:latest",
				Resources: corev1.ResourceRequirements{Limits: list}}},
			TerminationGracePeriodSeconds: new(int64),
		},
	}
}

// createNamespace makes a namespace for the test's pods.
func (c *cluster) createNamespace(name string) {
	c.t.Helper()
	_, err := c.kit.Client.CoreV1().Namespaces().Create(c.ctx,
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{})
	if err != nil {
		c.t.Fatal(err)
	}
	// The ServiceAccount admission plugin wants the namespace's default
	// ServiceAccount, which the controller manager makes.
	c.eventually("default ServiceAccount in "+name, 30*time.Second, func() (bool, string) {
		_, err := c.kit.Client.CoreV1().ServiceAccounts(name).Get(c.ctx, "default", metav1.GetOptions{})
		return err == nil, fmt.Sprint(err)
	})
}

// waitBound waits for the pod to be bound and returns it.
func (c *cluster) waitBound(namespace, name string, timeout time.Duration) *corev1.Pod {
	c.t.Helper()
	var bound *corev1.Pod
	c.eventually("pod "+namespace+"/"+name+" bound", timeout, func() (bool, string) {
		p, err := c.kit.Client.CoreV1().Pods(namespace).Get(c.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		bound = p
		return p.Spec.NodeName != "", conditions(p)
	})
	return bound
}

func conditions(p *corev1.Pod) string {
	var parts []string
	for _, condition := range p.Status.Conditions {
		parts = append(parts, fmt.Sprintf("%s=%s %s: %s", condition.Type, condition.Status, condition.Reason, condition.Message))
	}
	return strings.Join(parts, "; ")
}

// waitRefused waits until the pod's PodScheduled condition is False with
// a message holding `reason`; the pod being bound meanwhile fails the test.
func (c *cluster) waitRefused(namespace, name, reason string, timeout time.Duration) {
	c.t.Helper()
	c.eventually(name+" refused with "+reason, timeout, func() (bool, string) {
		p, err := c.kit.Client.CoreV1().Pods(namespace).Get(c.ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err.Error()
		}
		if p.Spec.NodeName != "" {
			c.t.Fatalf("%s bound to %s", name, p.Spec.NodeName)
		}
		for _, condition := range p.Status.Conditions {
			if condition.Type == corev1.PodScheduled && condition.Status == corev1.ConditionFalse &&
				strings.Contains(condition.Message, reason) {
				return true, ""
			}
		}
		return false, conditions(p)
	})
}
