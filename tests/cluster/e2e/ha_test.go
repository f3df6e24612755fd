package e2e

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/deviceshare/deviceshare/tests/cluster/kit"
)

// Two extender replicas elect a leader through a real Lease; kill -9 of
// the leader during a burst of 500 pods: every pod is bound once, no GPU
// is over capacity (read back from the pods' records), and the takeover
// time is measured.
func TestLeaderKilledDuringBurst(t *testing.T) {
	const (
		nodes       = 7
		gpusPerNode = 8
		pods        = 500 // 7 x 8 GPUs x split 10 = 560 slots
	)
	c := newCluster(t)
	for i := 0; i < nodes; i++ {
		c.gpuNode(fmt.Sprintf("gpu-%d", i), "hami", gpusPerNode)
	}
	var replicas []*kit.Extender
	for i := 0; i < 2; i++ {
		extender, err := c.kit.StartExtender(c.ctx, i)
		if err != nil {
			t.Fatal(err)
		}
		replicas = append(replicas, extender)
	}
	c.eventually("one replica leads", 60*time.Second, func() (bool, string) {
		return replicas[0].Ready() != replicas[1].Ready(), "readyz: " +
			strconv.FormatBool(replicas[0].Ready()) + " " + strconv.FormatBool(replicas[1].Ready())
	})
	if _, err := c.kit.StartKubeScheduler(c.ctx); err != nil {
		t.Fatal(err)
	}
	leader, follower := replicas[0], replicas[1]
	if !leader.Ready() {
		leader, follower = follower, leader
	}
	lease, err := c.kit.Client.CoordinationV1().Leases("kube-system").Get(c.ctx, "deviceshare-extender", metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the extender's Lease: %v", err)
	}
	if holder := *lease.Spec.HolderIdentity; holder != leader.Name {
		t.Fatalf("Lease held by %q, but %s is the ready replica", holder, leader.Name)
	}

	const ns = "burst"
	c.createNamespace(ns)
	client := c.kit.Client.CoreV1().Pods(ns)
	var created atomic.Int32
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < 16; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				p := pod(fmt.Sprintf("p-%03d", i), map[string]string{"nvidia.com/gpu": "1",
					"nvidia.com/gpumem": "4000", "nvidia.com/gpucores": "10"})
				for attempt := 0; ; attempt++ {
					_, err := client.Create(c.ctx, p, metav1.CreateOptions{})
					if err == nil {
						created.Add(1)
						break
					}
					// While no replica is ready the webhook refuses GPU
					// pods (failurePolicy Fail); a controller would retry.
					if attempt > 300 {
						t.Errorf("create %s: %v", p.Name, err)
						break
					}
					time.Sleep(200 * time.Millisecond)
				}
			}
		}()
	}
	go func() {
		for i := 0; i < pods; i++ {
			work <- i
		}
		close(work)
	}()

	bound := func() int { return c.boundPods(ns) }
	c.eventually("100 pods bound before the kill", 120*time.Second, func() (bool, string) {
		n := bound()
		return n >= 100, strconv.Itoa(n)
	})
	before := bound()
	killedAt := time.Now()
	leader.Kill()
	c.eventually("the follower takes over", 60*time.Second, func() (bool, string) {
		return follower.Ready(), "follower not ready"
	})
	takeover := time.Since(killedAt)
	c.eventually("a pod bound after the takeover", 60*time.Second, func() (bool, string) {
		n := bound()
		return n > before, strconv.Itoa(n)
	})
	firstBind := time.Since(killedAt)
	t.Logf("takeover: %d pods bound before kill -9 of %s; %s ready after %v, next pod bound after %v",
		before, leader.Name, follower.Name, takeover.Round(time.Millisecond), firstBind.Round(time.Millisecond))

	wg.Wait()
	c.eventually("all pods bound", 300*time.Second, func() (bool, string) {
		n := bound()
		return n == pods, strconv.Itoa(n)
	})
	c.expectAdmitted()
	checkCapacityFromRecords(t, c, ns, gpusPerNode*nodes)
}

// checkCapacityFromRecords reads every pod's hami.io/vgpu-devices-allocated
// and checks that each pod has one, on its own node's GPUs, and that no GPU
// holds more than split 10 tenants, 81559 MiB or 100 cores.
func checkCapacityFromRecords(t *testing.T, c *cluster, ns string, gpus int) {
	t.Helper()
	nodes, err := c.kit.Client.CoreV1().Nodes().List(c.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nodeOf := map[string]string{}
	for _, node := range nodes.Items {
		for _, gpu := range kit.H100s(node.Name, 8) {
			nodeOf[gpu.UUID] = node.Name
		}
	}
	list, err := c.kit.Client.CoreV1().Pods(ns).List(c.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	type use struct{ tenants, memory, cores int }
	used := map[string]*use{}
	for _, p := range list.Items {
		record := p.Annotations["hami.io/vgpu-devices-allocated"]
		grants := parseHamiRecord(record)
		if len(grants) != 1 {
			t.Errorf("%s: record %q, want one GPU", p.Name, record)
			continue
		}
		g := grants[0]
		if nodeOf[g.uuid] != p.Spec.NodeName {
			t.Errorf("%s: bound to %s, record names %s of %q", p.Name, p.Spec.NodeName, g.uuid, nodeOf[g.uuid])
		}
		u := used[g.uuid]
		if u == nil {
			u = &use{}
			used[g.uuid] = u
		}
		u.tenants++
		u.memory += g.memory
		u.cores += g.cores
	}
	for uuid, u := range used {
		if u.tenants > 10 || u.memory > 81559 || u.cores > 100 {
			t.Errorf("GPU %s over capacity: %d tenants, %d MiB, %d cores", uuid, u.tenants, u.memory, u.cores)
		}
	}
	t.Logf("%d pods on %d of %d GPUs, none over capacity", len(list.Items), len(used), gpus)
}

type grant struct {
	uuid          string
	memory, cores int
}

// parseHamiRecord reads `UUID,NVIDIA,mem,cores:` entries, containers
// separated by `;`.
func parseHamiRecord(record string) []grant {
	var grants []grant
	for _, container := range strings.Split(record, ";") {
		for _, entry := range strings.Split(container, ":") {
			fields := strings.Split(entry, ",")
			if len(fields) != 4 {
				continue
			}
			memory, _ := strconv.Atoi(fields[2])
			cores, _ := strconv.Atoi(fields[3])
			grants = append(grants, grant{fields[0], memory, cores})
		}
	}
	return grants
}
