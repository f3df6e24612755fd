// Package kit applies deviceshare's deploy kit (deploy/) to a control
// plane the way a user applies it (certs.sh, then `kubectl apply
// -k`), and runs the programs its workloads would run in pods as local
// processes: the extender (`deviceshare-scheduler serve`) with the
// Deployment's own arguments, one node agent per Node with the
// DaemonSet's, and a stock kube-scheduler with the kit's own
// KubeSchedulerConfiguration. Each runs under its ServiceAccount's token,
// so a rule missing from the kit's RBAC fails. What is rewritten for a
// machine without a cluster network is only where things are: the
// extender's URL and the webhook's address become 127.0.0.1, and the
// files a pod would mount become files in the kit's folder.
package kit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/deviceshare/deviceshare/tests/cluster/controlplane"
)

// Options locates the repository and the programs.
type Options struct {
	// RepoRoot is the deviceshare checkout (deploy/ is applied from it).
	RepoRoot string
	// BinDir holds kubectl and kube-scheduler built from Kubernetes'
	// modules (the control plane's BinDir).
	BinDir string
	// Scheduler and NodeAgent are deviceshare-scheduler and
	// deviceshare-node-agent; FakeNVML is the fake libnvidia-ml.so.1 the
	// node agents load instead of a driver.
	Scheduler, NodeAgent, FakeNVML string
	// KubeScheduler is deviceshare-kube-scheduler: what the Deployment's
	// kube-scheduler container runs when its image is
	// deviceshare-kube-scheduler (the in-process kit).
	KubeScheduler string
	// InProcess makes the kit with deploy/certs.sh's SCHEDULER=in-process:
	// deploy/ with the component deploy/in-process.
	InProcess bool
	// Then are kit folders applied after deploy/ (relative to RepoRoot),
	// as a user applies them on top: "deploy/dra" replaces the device-plugin
	// node agent with the DRA driver.
	Then []string
}

// Kit is the deploy kit applied to a control plane, and the processes
// that stand for its pods.
type Kit struct {
	Options
	Plane  *controlplane.ControlPlane
	Client kubernetes.Interface
	Dir    string

	webhookPort  int
	extenders    []*Extender
	agents       map[string]*controlplane.Process
	hosts        map[string]int
	kubelets     []*DeviceKubelet
	draKubelets  []*DRAKubelet
	Scheduler    *controlplane.Process
	extenderPort int
	service      *service
	// caFile is the kit's CA (certs.sh's ca.crt): it signed the extender's
	// serving certificate and kube-scheduler's client certificate.
	caFile string
}

const namespace = "kube-system"

// Apply makes the kit's certificates with deploy/certs.sh,
// writes an overlay that points the webhook at 127.0.0.1 and applies it
// with `kubectl apply -k`, then each of Options.Then.
func Apply(ctx context.Context, plane *controlplane.ControlPlane, options Options) (*Kit, error) {
	client, err := plane.Client()
	if err != nil {
		return nil, err
	}
	k := &Kit{Options: options, Plane: plane, Client: client,
		Dir: filepath.Join(plane.Dir, "kit"), agents: map[string]*controlplane.Process{}, hosts: map[string]int{}}
	if err := os.MkdirAll(k.Dir, 0o700); err != nil {
		return nil, err
	}
	if k.webhookPort, err = controlplane.FreePort(); err != nil {
		return nil, err
	}
	if k.extenderPort, err = controlplane.FreePort(); err != nil {
		return nil, err
	}
	// certs.sh writes the certificates and an overlay of deploy/ with the
	// Secrets and caBundle; for deploy/dra, point it there.
	tls := filepath.Join(k.Dir, "tls")
	script := filepath.Join(k.RepoRoot, "deploy", "certs.sh")
	certs := exec.CommandContext(ctx, "bash", script, tls)
	certs.Env = append(os.Environ(), "EXTRA_SANS=IP:127.0.0.1")
	if k.InProcess {
		certs.Env = append(certs.Env, "SCHEDULER=in-process")
	}
	if out, err := certs.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("certs.sh: %v\n%s", err, out)
	}
	k.caFile = filepath.Join(tls, "ca.crt")
	overlay := filepath.Join(k.Dir, "overlay")
	if err := os.MkdirAll(overlay, 0o700); err != nil {
		return nil, err
	}
	caBundle, err := os.ReadFile(k.caFile)
	if err != nil {
		return nil, err
	}
	// certs.sh's overlay (deploy/ with the Secrets and caBundle),
	// the webhook called by url: no cluster network here.
	kustomization := fmt.Sprintf(`# Written by the e2e kit: deploy/ as a user applies it, with the webhook
# called at https://127.0.0.1:%d/webhook (no cluster network here).
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../tls
patches:
  - target:
      group: admissionregistration.k8s.io
      kind: MutatingWebhookConfiguration
      name: deviceshare-scheduler
    patch: |-
      - op: remove
        path: /webhooks/0/clientConfig/service
      - op: add
        path: /webhooks/0/clientConfig/url
        value: https://127.0.0.1:%d/webhook
      - op: add
        path: /webhooks/0/clientConfig/caBundle
        value: %s
`, k.webhookPort, k.webhookPort, base64Of(caBundle))
	if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(kustomization), 0o600); err != nil {
		return nil, err
	}
	if out, err := k.Kubectl(ctx, "apply", "-k", overlay); err != nil {
		return nil, fmt.Errorf("kubectl apply -k %s: %v\n%s", overlay, err, out)
	}
	for _, then := range k.Then {
		folder := filepath.Join(k.RepoRoot, then)
		if out, err := k.Kubectl(ctx, "apply", "-k", folder); err != nil {
			return nil, fmt.Errorf("kubectl apply -k %s: %v\n%s", folder, err, out)
		}
	}
	return k, nil
}

// Kubectl runs the kubectl built from Kubernetes' modules as the admin.
func (k *Kit) Kubectl(ctx context.Context, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, filepath.Join(k.BinDir, "kubectl"),
		append([]string{"--kubeconfig", k.Plane.AdminKubeconfig}, args...)...)
	return cmd.CombinedOutput()
}

// ServiceAccountKubeconfig writes a kubeconfig that authenticates with a
// fresh token of the ServiceAccount (TokenRequest, as a pod's projected
// token is made).
func (k *Kit) ServiceAccountKubeconfig(ctx context.Context, account string) (string, error) {
	expiry := int64(24 * 3600)
	token, err := k.Client.CoreV1().ServiceAccounts(namespace).CreateToken(ctx, account,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &expiry}},
		metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token of ServiceAccount %s/%s: %w", namespace, account, err)
	}
	path := filepath.Join(k.Dir, account+".kubeconfig")
	return path, controlplane.WriteKubeconfig(path, k.Plane.Server, k.Plane.CAFile,
		controlplane.Credentials{Token: token.Status.Token})
}

// container finds a container of a pod template by name.
func container(spec corev1.PodSpec, name string) (corev1.Container, error) {
	for _, c := range spec.Containers {
		if c.Name == name {
			return c, nil
		}
	}
	return corev1.Container{}, fmt.Errorf("no container %q", name)
}

// waitFor polls ready until it holds, failing once the process exits.
func waitFor(ctx context.Context, what string, timeout time.Duration, process *controlplane.Process, ready func() bool) error {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if ready() {
			return nil
		}
		if process != nil && !process.Running() {
			return fmt.Errorf("%s exited:\n%s", what, process.Log())
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
	log := ""
	if process != nil {
		log = process.Log()
	}
	return fmt.Errorf("%s not ready after %v:\n%s", what, timeout, log)
}
