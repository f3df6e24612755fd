package kit

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/deviceshare/deviceshare/tests/cluster/controlplane"
)

// Extender is one replica of the kit's Deployment, its
// deviceshare-scheduler container run here.
type Extender struct {
	*controlplane.Process
	// URL is https://127.0.0.1:<port> (filter, prioritize, bind, readyz;
	// the verbs need kube-scheduler's client certificate).
	URL string
	// WebhookPort is the port of its admission webhook.
	WebhookPort int

	service *service
	client  *http.Client
}

// Ready says whether /readyz answers 200: the first lists are in and,
// with --leader-elect, this replica leads.
func (e *Extender) Ready() bool {
	response, err := e.Get("/readyz")
	if err != nil {
		return false
	}
	response.Body.Close()
	return response.StatusCode == http.StatusOK
}

// Get GETs `path` as the kubelet's probes and Prometheus do: over HTTPS,
// trusting the kit's CA, with no client certificate.
func (e *Extender) Get(path string) (*http.Response, error) {
	return e.client.Get(e.URL + path)
}

// anonymousClient trusts the kit's CA and presents no certificate.
func (k *Kit) anonymousClient() (*http.Client, error) {
	pem, err := os.ReadFile(k.caFile)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%s: no certificate", k.caFile)
	}
	return &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}}, nil
}

// ExtenderURL is where kube-scheduler and the webhook reach the extender
// (the Service's address in a cluster).
func (k *Kit) ExtenderURL() string { return fmt.Sprintf("https://127.0.0.1:%d", k.extenderPort) }

// StartExtender runs replica `replica` of the Deployment's
// deviceshare-scheduler container: its arguments, with --address and
// --webhook-port on 127.0.0.1 and --kubeconfig holding the Deployment's
// ServiceAccount token.
func (k *Kit) StartExtender(ctx context.Context, replica int, extraArgs ...string) (*Extender, error) {
	deployment, err := k.Client.AppsV1().Deployments(namespace).Get(ctx, "deviceshare-scheduler", metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	spec := deployment.Spec.Template.Spec
	c, err := container(spec, "deviceshare-scheduler")
	if err != nil {
		return nil, err
	}
	name := fmt.Sprintf("deviceshare-scheduler-%d", replica)
	root := filepath.Join(k.Dir, "pods", name)
	pod, err := k.materialize(ctx, spec, c, podContext{podName: name, nodeName: "control-plane",
		root: root, hostRoot: k.hostRoot("control-plane")})
	if err != nil {
		return nil, fmt.Errorf("deployment deviceshare-scheduler: %w", err)
	}
	// Each replica listens on ports of its own; the kit's Service
	// (k.service) sends kube-scheduler's and the API server's calls to a
	// ready one.
	if k.service == nil {
		if k.service, err = newService(k.extenderPort, k.webhookPort); err != nil {
			return nil, err
		}
	}
	port, err := controlplane.FreePort()
	if err != nil {
		return nil, err
	}
	webhookPort, err := controlplane.FreePort()
	if err != nil {
		return nil, err
	}
	kubeconfig, err := k.ServiceAccountKubeconfig(ctx, spec.ServiceAccountName)
	if err != nil {
		return nil, err
	}
	args := setFlag(pod.args, "address", fmt.Sprintf("127.0.0.1:%d", port))
	args = setFlag(args, "webhook-port", strconv.Itoa(webhookPort))
	args = setFlag(args, "leader-elect-identity", name)
	args = append(append(args, "--kubeconfig", kubeconfig), extraArgs...)
	process := controlplane.NewProcess(name, k.Options.Scheduler, args, k.Dir)
	process.Env = pod.env
	if err := process.Start(); err != nil {
		return nil, err
	}
	client, err := k.anonymousClient()
	if err != nil {
		return nil, err
	}
	extender := &Extender{Process: process, URL: fmt.Sprintf("https://127.0.0.1:%d", port),
		WebhookPort: webhookPort, service: k.service, client: client}
	k.extenders = append(k.extenders, extender)
	k.service.add(extender)
	return extender, nil
}

// WaitReady waits until the extender's /readyz answers 200 and the kit's
// Service sends calls to it.
func (e *Extender) WaitReady(ctx context.Context, timeout time.Duration) error {
	return waitFor(ctx, e.Name, timeout, e.Process, func() bool { return e.Ready() && e.service.serves(e) })
}

// AgentOptions is what differs between the kit's node agents.
type AgentOptions struct {
	// Dialect overrides the DaemonSet's --dialect (hami or volcano).
	Dialect string
	// Inventory is the fake NVML's GPUs (FAKE_NVML_INVENTORY's JSON).
	Inventory []byte
	// ExtraArgs are appended (a later flag wins).
	ExtraArgs []string
}

// StartNodeAgent runs the DaemonSet's node agent for `node` (the Node
// must exist), with the fake NVML and the agent's ServiceAccount token.
func (k *Kit) StartNodeAgent(ctx context.Context, node string, options AgentOptions) (*controlplane.Process, error) {
	daemonSet, err := k.Client.AppsV1().DaemonSets(namespace).Get(ctx, "deviceshare-node-agent", metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	return k.startAgentFrom(ctx, daemonSet, node, options)
}

func (k *Kit) startAgentFrom(ctx context.Context, daemonSet *appsv1.DaemonSet, node string, options AgentOptions) (*controlplane.Process, error) {
	spec := daemonSet.Spec.Template.Spec
	c, err := container(spec, "deviceshare-node-agent")
	if err != nil {
		return nil, err
	}
	name := "deviceshare-node-agent-" + node
	hostRoot := k.hostRoot(node)
	pod, err := k.materialize(ctx, spec, c, podContext{podName: name, nodeName: node,
		root: filepath.Join(k.Dir, "pods", name), hostRoot: hostRoot,
		imageFiles: map[string]string{"/usr/local/lib/deviceshare/libvgpu.so": k.vgpuLibrary()}})
	if err != nil {
		return nil, fmt.Errorf("daemonset deviceshare-node-agent: %w", err)
	}
	inventory := filepath.Join(hostRoot, "gpus.json")
	if err := os.MkdirAll(hostRoot, 0o700); err != nil {
		return nil, err
	}
	if err := os.WriteFile(inventory, options.Inventory, 0o600); err != nil {
		return nil, err
	}
	kubeconfig, err := k.ServiceAccountKubeconfig(ctx, spec.ServiceAccountName)
	if err != nil {
		return nil, err
	}
	metricsPort, err := controlplane.FreePort()
	if err != nil {
		return nil, err
	}
	args := pod.args
	if options.Dialect != "" {
		args = setFlag(args, "dialect", options.Dialect)
	}
	args = setFlag(args, "metrics-address", fmt.Sprintf("127.0.0.1:%d", metricsPort))
	args = append(args, "--kubeconfig", kubeconfig, "--nvml-library", k.Options.FakeNVML)
	args = append(args, options.ExtraArgs...)
	process := controlplane.NewProcess(name, k.Options.NodeAgent, args, k.Dir)
	process.Env = append(pod.env, "FAKE_NVML_INVENTORY="+inventory,
		"FAKE_NVML_STATE="+filepath.Join(hostRoot, "nvml-state.json"))
	if err := process.Start(); err != nil {
		return nil, err
	}
	k.agents[node] = process
	return process, nil
}

// hostRoot is the folder that stands for a node's root file system. It is
// short (plane dir/h/<n>): a hostPath keeps its whole path under it, and
// the kubelet sockets under /var/lib/kubelet must stay below 108 bytes.
func (k *Kit) hostRoot(node string) string {
	index, ok := k.hosts[node]
	if !ok {
		index = len(k.hosts)
		k.hosts[node] = index
	}
	return filepath.Join(k.Plane.Dir, "h", fmt.Sprint(index))
}

// vgpuLibrary is the libvgpu.so built beside the node agent.
func (k *Kit) vgpuLibrary() string {
	return filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(k.Options.NodeAgent))), "lib", "hamicore", "vgpu", "libvgpu.so")
}

// StartKubeScheduler runs the Deployment's kube-scheduler container -- the
// stock kube-scheduler, or deviceshare-kube-scheduler when its image is
// that (the in-process kit) -- with the kit's KubeSchedulerConfiguration
// (ConfigMap deviceshare-kube-scheduler-config), rewriting only the
// extender's urlPrefix (to ExtenderURL), the files it names (the
// extender's tlsConfig, DeviceShare's configFile: to where the container
// has them mounted here) and clientConnection.kubeconfig (the
// Deployment's ServiceAccount token).
func (k *Kit) StartKubeScheduler(ctx context.Context, extraArgs ...string) (*controlplane.Process, error) {
	configMap, err := k.Client.CoreV1().ConfigMaps(namespace).Get(ctx, "deviceshare-kube-scheduler-config", metav1.GetOptions{})
	if err != nil {
		return nil, err
	}
	var config map[string]any
	if err := yaml.Unmarshal([]byte(configMap.Data["config.yaml"]), &config); err != nil {
		return nil, fmt.Errorf("kube-scheduler config: %w", err)
	}
	pod, err := k.kubeSchedulerPod(ctx)
	if err != nil {
		return nil, err
	}
	// The extender's (none in the in-process kit, whose DeviceShare plugin
	// reads deviceshare's config file instead).
	extenders, _ := config["extenders"].([]any)
	for _, e := range extenders {
		extender := e.(map[string]any)
		extender["urlPrefix"] = k.ExtenderURL()
		if tlsConfig, ok := extender["tlsConfig"].(map[string]any); ok {
			for _, key := range []string{"certFile", "keyFile", "caFile"} {
				if file, ok := tlsConfig[key].(string); ok {
					tlsConfig[key] = rewritePaths(file, pod.mounts)
				}
			}
		}
	}
	profiles, _ := config["profiles"].([]any)
	for _, p := range profiles {
		pluginConfig, _ := p.(map[string]any)["pluginConfig"].([]any)
		for _, entry := range pluginConfig {
			if args, ok := entry.(map[string]any)["args"].(map[string]any); ok {
				if file, ok := args["configFile"].(string); ok {
					args["configFile"] = rewritePaths(file, pod.mounts)
				}
			}
		}
	}
	kubeconfig, err := k.ServiceAccountKubeconfig(ctx, "deviceshare-scheduler")
	if err != nil {
		return nil, err
	}
	clientConnection, _ := config["clientConnection"].(map[string]any)
	if clientConnection == nil {
		clientConnection = map[string]any{}
	}
	clientConnection["kubeconfig"] = kubeconfig
	// The kit's 5 QPS default would be the ceiling of every throughput
	// figure; a user at scale raises it the same way.
	if _, ok := clientConnection["qps"]; !ok {
		clientConnection["qps"] = 500
		clientConnection["burst"] = 1000
	}
	config["clientConnection"] = clientConnection
	data, err := yaml.Marshal(config)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(k.Dir, "kube-scheduler-config.yaml")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return nil, err
	}
	port, err := controlplane.FreePort()
	if err != nil {
		return nil, err
	}
	args := append([]string{"--config=" + path, "--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port),
		"--authentication-kubeconfig=" + kubeconfig, "--authorization-kubeconfig=" + kubeconfig,
		"--v=2"}, extraArgs...)
	program := filepath.Join(k.BinDir, "kube-scheduler")
	if strings.HasPrefix(pod.image, "deviceshare-kube-scheduler") {
		if k.KubeScheduler == "" {
			return nil, fmt.Errorf("the kit runs deviceshare-kube-scheduler, and Options.KubeScheduler is not set")
		}
		program = k.KubeScheduler
	}
	k.Scheduler = controlplane.NewProcess("kube-scheduler", program, args, k.Dir)
	// It exits when it loses its lease (an API server down past the renew
	// deadline); kubelet would start it again.
	k.Scheduler.RestartOnExit = true
	return k.Scheduler, k.Scheduler.Start()
}

// kubeSchedulerPod is the Deployment's kube-scheduler container turned
// local (its Secret and ConfigMap volumes written out).
func (k *Kit) kubeSchedulerPod(ctx context.Context) (localPod, error) {
	deployment, err := k.Client.AppsV1().Deployments(namespace).Get(ctx, "deviceshare-scheduler", metav1.GetOptions{})
	if err != nil {
		return localPod{}, err
	}
	spec := deployment.Spec.Template.Spec
	c, err := container(spec, "kube-scheduler")
	if err != nil {
		return localPod{}, err
	}
	return k.materialize(ctx, spec, c, podContext{podName: "kube-scheduler", nodeName: "control-plane",
		root: filepath.Join(k.Dir, "pods", "kube-scheduler"), hostRoot: k.hostRoot("control-plane")})
}

// StartDefaultScheduler runs a stock kube-scheduler with its default
// profile (default-scheduler, DynamicResources on), as the admin: the
// scheduler of a cluster where deviceshare is only the DRA driver.
func (k *Kit) StartDefaultScheduler(ctx context.Context, extraArgs ...string) (*controlplane.Process, error) {
	port, err := controlplane.FreePort()
	if err != nil {
		return nil, err
	}
	admin := k.Plane.AdminKubeconfig
	args := append([]string{"--kubeconfig=" + admin, "--authentication-kubeconfig=" + admin,
		"--authorization-kubeconfig=" + admin, "--leader-elect=false", "--bind-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", port), "--kube-api-qps=500", "--kube-api-burst=1000", "--v=2"},
		extraArgs...)
	k.Scheduler = controlplane.NewProcess("kube-scheduler", filepath.Join(k.BinDir, "kube-scheduler"), args, k.Dir)
	return k.Scheduler, k.Scheduler.Start()
}

// Stop stops every program the kit started (not the control plane).
func (k *Kit) Stop() {
	if k.Scheduler != nil {
		k.Scheduler.Stop()
	}
	for _, agent := range k.agents {
		agent.Stop()
	}
	for _, kubelet := range k.kubelets {
		kubelet.Stop()
	}
	for _, kubelet := range k.draKubelets {
		kubelet.Stop()
	}
	for _, extender := range k.extenders {
		extender.Stop()
	}
	if k.service != nil {
		k.service.close()
	}
}
