// Command cluster starts deviceshare's local control plane (etcd,
// kube-apiserver, kube-controller-manager built from Kubernetes' modules)
// on 127.0.0.1 and, with --kit, applies deploy/ to it and runs the
// extender, a stock kube-scheduler with the kit's configuration and one
// node agent (fake NVML) per GPU node: the whole kit on a machine with no
// GPU and no cluster. It prints the admin kubeconfig and runs until
// interrupted. tests/cluster/up builds everything and runs it.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/deviceshare/deviceshare/tests/cluster/controlplane"
	"github.com/deviceshare/deviceshare/tests/cluster/kit"
)

const usage = `Usage: cluster up --bin DIR [--dir DIR] [--kit --repo DIR --build DIR] [--nodes N]

Starts etcd, kube-apiserver and kube-controller-manager (no kubelet: Node
objects are created through the API) and prints a kubeconfig. With --kit it
also applies the deviceshare kit (deploy/, with the webhook's certificate)
as kubectl apply -k does, creates N GPU nodes (4 H100s each, alternating
the HAMi and Volcano dialects), and runs one extender, one node agent per
node and the stock kube-scheduler with the kit's configuration, each
under its ServiceAccount's token. Ctrl-C stops everything and removes
--dir if it made it.

`

func main() {
	if len(os.Args) < 2 || os.Args[1] != "up" {
		fmt.Fprint(os.Stderr, usage)
		os.Exit(2)
	}
	flags := flag.NewFlagSet("up", flag.ExitOnError)
	flags.Usage = func() { fmt.Fprint(os.Stderr, usage); flags.PrintDefaults() }
	bin := flags.String("bin", "", "folder of etcd, kube-apiserver, kube-controller-manager, kube-scheduler, kubectl")
	dir := flags.String("dir", "", "folder for the control plane's files (default: a new temporary folder, removed at exit)")
	withKit := flags.Bool("kit", false, "apply deploy/ and run deviceshare's programs")
	repo := flags.String("repo", ".", "the deviceshare checkout (with --kit)")
	build := flags.String("build", "build", "deviceshare's CMake build folder (with --kit)")
	nodes := flags.Int("nodes", 2, "GPU nodes to create (with --kit)")
	flags.Parse(os.Args[2:])
	if *bin == "" {
		flags.Usage()
		os.Exit(2)
	}
	if err := run(*bin, *dir, *withKit, *repo, *build, *nodes); err != nil {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

func run(bin, dir string, withKit bool, repo, build string, nodes int) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if dir == "" {
		made, err := os.MkdirTemp("", "ds-cluster-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(made)
		dir = made
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	plane, err := controlplane.Start(ctx, controlplane.Options{BinDir: bin, Dir: dir})
	if err != nil {
		return err
	}
	defer plane.Stop()
	if withKit {
		k, err := kit.Apply(ctx, plane, kit.Options{RepoRoot: repo, BinDir: bin,
			Scheduler: build + "/plugins/scheduler/deviceshare-scheduler",
			NodeAgent: build + "/plugins/node-agent/deviceshare-node-agent",
			FakeNVML:  build + "/tests/fake_nvml/lib/libnvidia-ml.so.1"})
		if err != nil {
			return err
		}
		defer k.Stop()
		if err := startKit(ctx, k, nodes); err != nil {
			return err
		}
	}
	fmt.Printf("control plane up: %s\nlogs in %s\n\nexport KUBECONFIG=%s\n\nCtrl-C stops it.\n",
		plane.Server, dir, plane.AdminKubeconfig)
	<-ctx.Done()
	fmt.Println("stopping")
	return nil
}

func startKit(ctx context.Context, k *kit.Kit, nodes int) error {
	for i := 0; i < nodes; i++ {
		name := fmt.Sprintf("gpu-node-%d", i)
		if _, err := kit.CreateNode(ctx, k, name, map[string]string{"gpu": "on"}); err != nil {
			return err
		}
		if _, err := k.StartDeviceKubelet(ctx, name); err != nil {
			return err
		}
		dialect := "hami"
		if i%2 == 1 {
			dialect = "volcano"
		}
		if _, err := k.StartNodeAgent(ctx, name, kit.AgentOptions{Dialect: dialect,
			Inventory: kit.Inventory(kit.H100s(name, 4))}); err != nil {
			return err
		}
	}
	extender, err := k.StartExtender(ctx, 0)
	if err != nil {
		return err
	}
	if err := extender.WaitReady(ctx, 60*time.Second); err != nil {
		return err
	}
	_, err = k.StartKubeScheduler(ctx)
	return err
}
