package e2e

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deviceshare/deviceshare/tests/cluster/controlplane"
	"github.com/deviceshare/deviceshare/tests/cluster/kit"
)

// kill -9 and restart kube-apiserver, then etcd, during a burst of pods.
// The API server compacts etcd every 5 s, so the extender's watches come
// back to resource versions that are gone: real 410 Gone, then relists.
// No pod is lost, none is bound twice, no GPU is over capacity, and the
// extender's ledger equals the one recomputed from the pods' records.
func TestControlPlaneKilledDuringBurst(t *testing.T) {
	const (
		nodes       = 3
		gpusPerNode = 8
		pods        = 200
	)
	c := newCluster(t, withAPIServerArgs("--etcd-compaction-interval=5s"))
	for i := 0; i < nodes; i++ {
		c.gpuNode(fmt.Sprintf("gpu-%d", i), "hami", gpusPerNode)
	}
	extender := c.startScheduling()
	const ns = "faults"
	c.createNamespace(ns)
	client := c.kit.Client.CoreV1().Pods(ns)
	bound := func() int { return c.boundPods(ns) }
	var wg sync.WaitGroup
	create := func(from, to int) {
		defer wg.Done()
		for i := from; i < to; i++ {
			p := pod(fmt.Sprintf("p-%03d", i), map[string]string{"nvidia.com/gpu": "1",
				"nvidia.com/gpumem": "6000", "nvidia.com/gpucores": "10"})
			for attempt := 0; ; attempt++ {
				_, err := client.Create(c.ctx, p, metav1.CreateOptions{})
				if err == nil || isAlreadyExists(err) {
					break
				}
				if attempt > 600 {
					t.Errorf("create %s: %v", p.Name, err)
					break
				}
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go create(w*pods/4, (w+1)*pods/4)
	}
	for _, victim := range []*controlplane.Process{c.plane.APIServer, c.plane.Etcd} {
		target := bound() + 30
		c.eventually(fmt.Sprintf("%d pods bound before killing %s", target, victim.Name), 120*time.Second,
			func() (bool, string) { n := bound(); return n >= target || n >= pods-20, strconv.Itoa(n) })
		victim.Kill()
		time.Sleep(2 * time.Second)
		// Past two compactions while it is down or coming back.
		if err := victim.Start(); err != nil {
			t.Fatal(err)
		}
		if err := c.plane.WaitReady(c.ctx, 90*time.Second); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s restarted with %d pods bound", victim.Name, bound())
	}
	wg.Wait()
	c.eventually("all pods bound", 300*time.Second, func() (bool, string) {
		n := bound()
		return n == pods, strconv.Itoa(n)
	})
	c.expectAdmitted()
	checkCapacityFromRecords(t, c, ns, nodes*gpusPerNode)
	checkLedgerMatchesRecords(t, c, ns, extender)
	relists := metricSum(t, extender, "deviceshare_watch_relists_total")
	t.Logf("extender relisted %v times; kube-scheduler restarted %d times after losing its lease",
		relists, c.kit.Scheduler.Restarts())
}

// checkLedgerMatchesRecords compares the extender's per-GPU memory gauge
// with the sum of the pods' records.
func checkLedgerMatchesRecords(t *testing.T, c *cluster, ns string, extender *kit.Extender) {
	t.Helper()
	list, err := c.kit.Client.CoreV1().Pods(ns).List(c.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{}
	for _, p := range list.Items {
		for _, g := range parseHamiRecord(p.Annotations["hami.io/vgpu-devices-allocated"]) {
			want[g.uuid] += g.memory
		}
	}
	// The ledger follows the watch: give it a moment to see the last pods.
	c.eventually("the extender's ledger equals the pods' records", 30*time.Second, func() (bool, string) {
		got := gpuGauge(t, extender, "deviceshare_gpu_memory_allocated_mib")
		for uuid, memory := range got {
			if want[uuid] != memory {
				return false, fmt.Sprintf("%s: ledger %d MiB, records %d MiB", uuid, memory, want[uuid])
			}
		}
		for uuid := range want {
			if _, ok := got[uuid]; !ok {
				return false, uuid + " missing from the ledger"
			}
		}
		return true, ""
	})
}

var gpuSample = regexp.MustCompile(`^(\w+)\{[^}]*gpu="([^"]+)"[^}]*\} ([0-9.e+-]+)$`)

func scrape(t *testing.T, extender *kit.Extender) string {
	response, err := extender.Get("/metrics")
	if err != nil {
		t.Fatalf("scrape: %v", err)
	}
	defer response.Body.Close()
	body, _ := io.ReadAll(response.Body)
	return string(body)
}

func gpuGauge(t *testing.T, extender *kit.Extender, name string) map[string]int {
	values := map[string]int{}
	for _, line := range regexp.MustCompile("\n").Split(scrape(t, extender), -1) {
		if m := gpuSample.FindStringSubmatch(line); m != nil && m[1] == name {
			v, _ := strconv.ParseFloat(m[3], 64)
			values[m[2]] = int(v)
		}
	}
	return values
}

func metricSum(t *testing.T, extender *kit.Extender, name string) float64 {
	sample := regexp.MustCompile(`^` + name + `(\{[^}]*\})? ([0-9.e+-]+)$`)
	sum := 0.0
	for _, line := range regexp.MustCompile("\n").Split(scrape(t, extender), -1) {
		if m := sample.FindStringSubmatch(line); m != nil {
			v, _ := strconv.ParseFloat(m[2], 64)
			sum += v
		}
	}
	return sum
}
