// Command throughput measures pods/s from creation to bound on the real
// control plane (tests/cluster), for bench/control_plane/run.sh:
//
//	plain      the stock kube-scheduler, pods that ask no GPU (the ceiling)
//	share      GPU-share pods of both dialects through deviceshare's
//	           extender and the kit's kube-scheduler
//	inprocess  the same pods through deviceshare-kube-scheduler (the
//	           DeviceShare plugin in-process; the kit's extender still
//	           runs beside it, for the admission webhook only)
//	inprocess-direct  the same, without the webhook and the extender: the
//	           pods name deviceshare-scheduler themselves (what the
//	           scheduler costs apart from admission and serve's watches)
//	dra-stock  DRA claims from a template, allocated by the stock
//	           kube-scheduler's DynamicResources on deviceshare's slices
//	dra-serve  the same claims allocated by the extender
//
// Each row starts a fresh control plane with --nodes Node objects of 8
// H100s and creates --pods pods at once. Nodes carry what the node agent
// would publish, made by the agent itself (`deviceshare-node-agent
// discover --output annotation | resourceslices`); no agent or kubelet
// runs, so the extender's in-flight rule (a pod waits for the node
// agent's handshake of the previous one) is off: this measures placing
// and binding, not kubelet's admission.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deviceshare/deviceshare/tests/cluster/controlplane"
	"github.com/deviceshare/deviceshare/tests/cluster/kit"
)

type options struct {
	bin, repo, build string
	nodes, pods      int
	rows             []string
	deadline         time.Duration
	profile          string // where CPU profiles go; "" for none
}

func main() {
	var o options
	rows := flag.String("rows", "plain,share,inprocess,dra-stock,dra-serve", "rows to measure, comma-separated")
	flag.StringVar(&o.bin, "bin", "build/k8s-bin", "Kubernetes binaries")
	flag.StringVar(&o.repo, "repo", ".", "the deviceshare checkout")
	flag.StringVar(&o.build, "build", "build", "deviceshare's CMake build folder")
	flag.IntVar(&o.nodes, "nodes", 500, "Node objects, 8 GPUs each")
	flag.IntVar(&o.pods, "pods", 10000, "pods created at once")
	flag.DurationVar(&o.deadline, "deadline", 20*time.Minute,
		"a row still binding then is reported at the rate it bound the pods it did")
	flag.StringVar(&o.profile, "profile", "",
		"write a 30 s CPU profile of each row's kube-scheduler, taken during the burst, to DIR/ROW.pprof")
	flag.Parse()
	o.rows = strings.Split(*rows, ",")
	failed := false
	for _, row := range o.rows {
		rate, bound, err := measure(row, o)
		if err != nil {
			// The other rows still get their figures.
			fmt.Fprintf(os.Stderr, "throughput: %s: %v\n", row, err)
			failed = true
			continue
		}
		fmt.Printf("%s nodes=%d pods=%d pods_per_s=%.1f bound=%d\n", row, o.nodes, o.pods, rate, bound)
	}
	if failed {
		os.Exit(1)
	}
}

func measure(row string, o options) (float64, int, error) {
	ctx, cancel := context.WithTimeout(context.Background(), o.deadline+10*time.Minute)
	defer cancel()
	dir, err := os.MkdirTemp("", "ds-bench-")
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(dir)
	plane, err := controlplane.Start(ctx, controlplane.Options{BinDir: o.bin, Dir: dir,
		ExtraAPIServerArgs: []string{"--max-requests-inflight=2000", "--max-mutating-requests-inflight=1000"}})
	if err != nil {
		return 0, 0, err
	}
	defer plane.Stop()
	k, err := kit.Apply(ctx, plane, kit.Options{RepoRoot: o.repo, BinDir: o.bin,
		Scheduler:     filepath.Join(o.build, "plugins/scheduler/deviceshare-scheduler"),
		NodeAgent:     filepath.Join(o.build, "plugins/node-agent/deviceshare-node-agent"),
		FakeNVML:      filepath.Join(o.build, "tests/fake_nvml/lib/libnvidia-ml.so.1"),
		KubeScheduler: filepath.Join(o.build, "plugins/kube-scheduler/deviceshare-kube-scheduler"),
		InProcess:     strings.HasPrefix(row, "inprocess"),
		Then:          thenFor(row)})
	if err != nil {
		return 0, 0, err
	}
	defer k.Stop()
	if err := makeNodes(ctx, k, o, row); err != nil {
		return 0, 0, err
	}
	var schedulerArgs []string
	var profile *profiler
	if o.profile != "" {
		if profile, schedulerArgs, err = newProfiler(o.profile, row); err != nil {
			return 0, 0, err
		}
	}
	switch row {
	case "plain", "dra-stock":
		_, err = k.StartDefaultScheduler(ctx, schedulerArgs...)
	case "share", "inprocess", "dra-serve":
		var extender *kit.Extender
		if extender, err = k.StartExtender(ctx, 0, "--in-flight-timeout", "0", "--log-level", "warn"); err == nil {
			if err = extender.WaitReady(ctx, 5*time.Minute); err == nil {
				_, err = k.StartKubeScheduler(ctx, schedulerArgs...)
			}
		}
	case "inprocess-direct":
		err = k.Client.AdmissionregistrationV1().MutatingWebhookConfigurations().Delete(ctx,
			"deviceshare-scheduler", metav1.DeleteOptions{})
		if err == nil {
			_, err = k.StartKubeScheduler(ctx, schedulerArgs...)
		}
	default:
		return 0, 0, fmt.Errorf("unknown row %q", row)
	}
	if err != nil {
		return 0, 0, err
	}
	if out, err := k.Kubectl(ctx, "create", "namespace", "bench"); err != nil {
		return 0, 0, fmt.Errorf("%v: %s", err, out)
	}
	if strings.HasPrefix(row, "dra") {
		if err := createTemplate(ctx, k.Client); err != nil {
			return 0, 0, err
		}
	}
	if err := waitServiceAccount(ctx, k.Client); err != nil {
		return 0, 0, err
	}
	if profile != nil {
		go profile.capture(ctx, 30)
	}
	return burst(ctx, k.Client, o.pods, row, o.deadline)
}

func thenFor(row string) []string {
	if strings.HasPrefix(row, "dra") {
		return []string{"deploy/dra"}
	}
	return nil
}

// isShare says whether a row's pods are GPU-share pods of both dialects
// (through the extender or in-process).
func isShare(row string) bool { return row == "share" || strings.HasPrefix(row, "inprocess") }
