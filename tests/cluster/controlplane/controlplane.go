// Package controlplane starts a Kubernetes control plane on 127.0.0.1 from
// binaries built from Kubernetes' own modules (see ../go.mod): etcd,
// kube-apiserver and kube-controller-manager, with generated certificates.
// There is no kubelet and no container runtime: Node objects are created
// through the API, and the programs that would run in pods (deviceshare's
// extender and node agents, a kube-scheduler) are started as processes by
// whoever uses the control plane, with ServiceAccount tokens.
package controlplane

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// Options says where the binaries are and where the control plane keeps
// its files.
type Options struct {
	// BinDir holds etcd, kube-apiserver and kube-controller-manager.
	BinDir string
	// Dir is where certificates, etcd's data, kubeconfigs and logs go;
	// it must exist and belongs to the caller (who removes it).
	Dir string
	// ExtraAPIServerArgs are appended to kube-apiserver's flags (a later
	// flag wins), e.g. --feature-gates or --etcd-compaction-interval.
	ExtraAPIServerArgs []string
	// Controllers is kube-controller-manager's --controllers; empty means
	// DefaultControllers.
	Controllers string
}

// DefaultControllers are the controllers that make sense without a
// kubelet: service accounts (pods need their namespace's default one),
// garbage collection, namespaces, ResourceClaims from templates,
// PodDisruptionBudget status and pod GC. The controllers that would
// start pods (Deployments, DaemonSets, ...) are off: the kit's workloads
// stay objects, and their programs run as processes. The node lifecycle
// controller is off because no kubelet ever heartbeats: it would taint
// every Node unreachable and evict its pods.
const DefaultControllers = "serviceaccount-controller,serviceaccount-token-controller," +
	"garbage-collector-controller,namespace-controller,resourceclaim-controller," +
	"disruption-controller,pod-garbage-collector-controller," +
	"root-ca-certificate-publisher-controller"

// ControlPlane is a running etcd, kube-apiserver and
// kube-controller-manager.
type ControlPlane struct {
	Options
	// Server is the API server's URL, https://127.0.0.1:<port>.
	Server string
	// CAFile is the CA the API server's certificate is signed by.
	CAFile string
	// AdminKubeconfig authenticates as a member of system:masters.
	AdminKubeconfig string
	// Authority signs more certificates (a webhook's).
	Authority *Authority

	Etcd, APIServer, ControllerManager *Process
}

// Start starts etcd, then kube-apiserver, then kube-controller-manager,
// and returns once the API server is ready and the default
// ServiceAccount exists.
func Start(ctx context.Context, options Options) (*ControlPlane, error) {
	c := &ControlPlane{Options: options}
	if err := c.start(ctx); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

func (c *ControlPlane) start(ctx context.Context) error {
	pki := filepath.Join(c.Dir, "pki")
	if err := os.MkdirAll(pki, 0o700); err != nil {
		return err
	}
	authority, err := NewAuthority("deviceshare-e2e-ca")
	if err != nil {
		return err
	}
	c.Authority = authority
	c.CAFile = filepath.Join(pki, "ca.crt")
	if err := os.WriteFile(c.CAFile, authority.CertPEM, 0o600); err != nil {
		return err
	}
	loopback := []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")}
	servingCert, servingKey, err := authority.Issue(Leaf{
		CommonName: "kube-apiserver",
		DNSNames:   []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"},
		IPs:        loopback,
	}, pki, "apiserver")
	if err != nil {
		return err
	}
	adminCert, adminKey, err := authority.Issue(Leaf{
		CommonName: "admin", Organization: []string{"system:masters"}, Client: true,
	}, pki, "admin")
	if err != nil {
		return err
	}
	saPublic, saPrivate, err := writeServiceAccountKeys(pki)
	if err != nil {
		return err
	}

	etcdURL, err := c.startEtcd()
	if err != nil {
		return err
	}
	apiPort, err := FreePort()
	if err != nil {
		return err
	}
	c.Server = fmt.Sprintf("https://127.0.0.1:%d", apiPort)
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		fmt.Sprintf("--secure-port=%d", apiPort),
		"--tls-cert-file=" + servingCert,
		"--tls-private-key-file=" + servingKey,
		"--client-ca-file=" + c.CAFile,
		// The front-proxy CA that delegated authentication (the controller
		// manager's, kube-scheduler's) reads from the
		// extension-apiserver-authentication ConfigMap; without it they
		// log an error about it every few seconds.
		"--requestheader-client-ca-file=" + c.CAFile,
		"--requestheader-allowed-names=front-proxy-client",
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--service-account-issuer=https://kubernetes.default.svc",
		"--service-account-key-file=" + saPublic,
		"--service-account-signing-key-file=" + saPrivate,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--authorization-mode=Node,RBAC",
		// The default reconciler publishes the API server's address in
		// the kubernetes Endpoints, which may not be a loopback address.
		"--endpoint-reconciler-type=none",
		// Without a kubelet no Node ever reports Ready: the not-ready
		// taint this plugin puts on every new Node would never go.
		"--disable-admission-plugins=TaintNodesByCondition",
		"--allow-privileged=true",
		"--profiling=false",
	}
	args = append(args, c.ExtraAPIServerArgs...)
	c.APIServer = NewProcess("kube-apiserver", filepath.Join(c.BinDir, "kube-apiserver"), args, c.Dir)
	if err := c.APIServer.Start(); err != nil {
		return err
	}
	c.AdminKubeconfig = filepath.Join(c.Dir, "admin.kubeconfig")
	if err := WriteKubeconfig(c.AdminKubeconfig, c.Server, c.CAFile, Credentials{CertFile: adminCert, KeyFile: adminKey}); err != nil {
		return err
	}
	if err := c.WaitReady(ctx, 90*time.Second); err != nil {
		return err
	}

	kcmPort, err := FreePort()
	if err != nil {
		return err
	}
	controllers := c.Controllers
	if controllers == "" {
		controllers = DefaultControllers
	}
	c.ControllerManager = NewProcess("kube-controller-manager",
		filepath.Join(c.BinDir, "kube-controller-manager"), []string{
			"--kubeconfig=" + c.AdminKubeconfig,
			"--authentication-kubeconfig=" + c.AdminKubeconfig,
			"--authorization-kubeconfig=" + c.AdminKubeconfig,
			"--bind-address=127.0.0.1",
			fmt.Sprintf("--secure-port=%d", kcmPort),
			"--controllers=" + controllers,
			"--service-account-private-key-file=" + saPrivate,
			"--root-ca-file=" + c.CAFile,
			"--leader-elect=false",
			"--use-service-account-credentials=false",
			// Its default 20 QPS would make claim creation from templates
			// (the ResourceClaim controller) the ceiling of every DRA
			// throughput figure; large clusters raise it the same way.
			"--kube-api-qps=500",
			"--kube-api-burst=1000",
		}, c.Dir)
	if err := c.ControllerManager.Start(); err != nil {
		return err
	}
	return c.waitDefaultServiceAccount(ctx, 60*time.Second)
}

func (c *ControlPlane) startEtcd() (string, error) {
	clientPort, err := FreePort()
	if err != nil {
		return "", err
	}
	peerPort, err := FreePort()
	if err != nil {
		return "", err
	}
	clientURL := fmt.Sprintf("http://127.0.0.1:%d", clientPort)
	peerURL := fmt.Sprintf("http://127.0.0.1:%d", peerPort)
	c.Etcd = NewProcess("etcd", filepath.Join(c.BinDir, "etcd"), []string{
		"--name=e2e",
		"--data-dir=" + filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls=" + clientURL,
		"--advertise-client-urls=" + clientURL,
		"--listen-peer-urls=" + peerURL,
		"--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=e2e=" + peerURL,
		// A test cluster's data need not survive a power cut.
		"--unsafe-no-fsync",
		"--log-level=warn",
	}, c.Dir)
	if err := c.Etcd.Start(); err != nil {
		return "", err
	}
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		response, err := http.Get(clientURL + "/health")
		if err == nil {
			response.Body.Close()
			if response.StatusCode == http.StatusOK {
				return clientURL, nil
			}
		}
		if !c.Etcd.Running() {
			return "", fmt.Errorf("etcd exited:\n%s", c.Etcd.Log())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return "", fmt.Errorf("etcd not healthy after 30s:\n%s", c.Etcd.Log())
}

// WaitReady polls the API server's /readyz until it answers 200.
func (c *ControlPlane) WaitReady(ctx context.Context, timeout time.Duration) error {
	client, err := c.adminHTTPClient()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	last := ""
	for time.Now().Before(deadline) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		response, err := client.Get(c.Server + "/readyz")
		if err == nil {
			body := make([]byte, 4096)
			n, _ := response.Body.Read(body)
			response.Body.Close()
			if response.StatusCode == http.StatusOK {
				return nil
			}
			last = string(body[:n])
		} else {
			last = err.Error()
		}
		if !c.APIServer.Running() {
			return fmt.Errorf("kube-apiserver exited:\n%s", c.APIServer.Log())
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("kube-apiserver not ready after %v: %s\n%s", timeout, last, c.APIServer.Log())
}

func (c *ControlPlane) adminHTTPClient() (*http.Client, error) {
	config, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(c.Authority.CertPEM)
	cert, err := tls.LoadX509KeyPair(config.CertFile, config.KeyFile)
	if err != nil {
		return nil, err
	}
	return &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}},
	}}, nil
}

func (c *ControlPlane) waitDefaultServiceAccount(ctx context.Context, timeout time.Duration) error {
	client, err := c.Client()
	if err != nil {
		return err
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		_, err = client.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1GetOptions)
		if err == nil {
			return nil
		}
		if !c.ControllerManager.Running() {
			return fmt.Errorf("kube-controller-manager exited:\n%s", c.ControllerManager.Log())
		}
		time.Sleep(200 * time.Millisecond)
	}
	return fmt.Errorf("no default ServiceAccount after %v (%v):\n%s", timeout, err, c.ControllerManager.Log())
}

// RESTConfig is the admin's client configuration.
func (c *ControlPlane) RESTConfig() (*rest.Config, error) {
	config, err := clientcmd.BuildConfigFromFlags("", c.AdminKubeconfig)
	if err != nil {
		return nil, err
	}
	config.QPS, config.Burst = 1000, 2000
	return config, nil
}

// Client is an admin clientset.
func (c *ControlPlane) Client() (kubernetes.Interface, error) {
	config, err := c.RESTConfig()
	if err != nil {
		return nil, err
	}
	return kubernetes.NewForConfig(config)
}

// Stop stops every program, the controller manager first and etcd last.
func (c *ControlPlane) Stop() {
	for _, p := range []*Process{c.ControllerManager, c.APIServer, c.Etcd} {
		if p != nil {
			p.Stop()
		}
	}
}

// Logs names each program's log file, for a failing test to print.
func (c *ControlPlane) Logs() string {
	var names []string
	for _, p := range []*Process{c.Etcd, c.APIServer, c.ControllerManager} {
		if p != nil {
			names = append(names, p.LogFile)
		}
	}
	return strings.Join(names, " ")
}
