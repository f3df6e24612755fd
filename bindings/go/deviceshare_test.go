package deviceshare

import (
	"fmt"
	"strings"
	"sync"
	"testing"
)

// Two nodes of two 16 GiB GPUs each, in the inventory form.
const smallCluster = `
nodes:
- name: n1
  gpus: [{model: "NVIDIA A100-PCIE-16GB", memory_mib: 16384, count: 2}]
- name: n2
  gpus: [{model: "NVIDIA A100-PCIE-16GB", memory_mib: 16384, count: 2}]
`

// A pod asking one GPU with memoryMiB of it (HAMi's resource names).
func pod(name string, memoryMiB int) string {
	return fmt.Sprintf(`{"kind": "Pod", "metadata": {"name": %q,
  "namespace": "default", "uid": "uid-%s"}, "spec": {"containers": [{"name": "main",
  "resources": {"limits": {"nvidia.com/gpu": 1, "nvidia.com/gpumem": %d}}}]}}`,
		name, name, memoryMiB)
}

func newSmallCluster(t *testing.T) *Scheduler {
	t.Helper()
	s, err := NewScheduler("")
	if err != nil {
		t.Fatalf("NewScheduler: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	result, err := s.UpsertNodes(smallCluster)
	if err != nil {
		t.Fatalf("UpsertNodes: %v", err)
	}
	if strings.Join(result.Nodes, ",") != "n1,n2" {
		t.Fatalf("UpsertNodes upserted %v, want [n1 n2]", result.Nodes)
	}
	return s
}

func wantCode(t *testing.T, err error, code Code, inMessage string) {
	t.Helper()
	if CodeOf(err) != code {
		t.Fatalf("got %v, want code %v", err, code)
	}
	if !strings.Contains(err.Error(), inMessage) {
		t.Fatalf("message %q does not name %q", err.Error(), inMessage)
	}
}

func TestVersions(t *testing.T) {
	if ABIVersion() != 4 {
		t.Errorf("ABIVersion() = %d, want 4", ABIVersion())
	}
	if parts := strings.Split(Version(), "."); len(parts) != 3 {
		t.Errorf("Version() = %q, want MAJOR.MINOR.PATCH", Version())
	}
}

func TestScheduleFilterScoreRelease(t *testing.T) {
	s := newSmallCluster(t)
	verdicts, err := s.Filter(pod("a", 4096), []string{"n2", "n1", "gone"})
	if err != nil {
		t.Fatalf("Filter: %v", err)
	}
	if len(verdicts) != 3 || verdicts[0].Node != "n2" || !verdicts[0].Fits ||
		verdicts[2].Fits || verdicts[2].Code != "NodeUnknown" {
		t.Fatalf("Filter verdicts: %+v", verdicts)
	}
	if _, err := s.Score(pod("a", 4096), "n1"); err != nil {
		t.Fatalf("Score: %v", err)
	}
	_, err = s.Score(pod("huge", 32768), "n1")
	wantCode(t, err, FailedPrecondition, "InsufficientMemory")

	decision, err := s.Schedule(pod("a", 4096), nil)
	if err != nil || !decision.Placed {
		t.Fatalf("Schedule: %+v, %v", decision, err)
	}
	devices := decision.Containers[0].Devices
	if len(devices) != 1 || devices[0].MemoryMiB != 4096 ||
		decision.Containers[0].Env["CUDA_DEVICE_MEMORY_LIMIT_0"] != "4096m" {
		t.Fatalf("Schedule's container: %+v", decision.Containers[0])
	}
	if decision.Annotations["hami.io/vgpu-node"] != decision.Node {
		t.Fatalf("annotations %v do not name node %s", decision.Annotations,
			decision.Node)
	}
	_, err = s.Schedule(pod("a", 4096), nil)
	wantCode(t, err, AlreadyExists, "default/a")

	usage, err := s.Usage()
	if err != nil || usage.Pods != 1 || usage.MemoryUsedMiB != 4096 || usage.GPUs != 4 {
		t.Fatalf("Usage: %+v, %v", usage, err)
	}
	if err := s.Release("uid-a"); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if usage, _ := s.Usage(); usage.Pods != 0 || usage.MemoryUsedMiB != 0 {
		t.Fatalf("Usage after Release: %+v", usage)
	}
}

func TestUnplacedIsADecisionNotAnError(t *testing.T) {
	s := newSmallCluster(t)
	decision, err := s.Schedule(pod("huge", 32768), &ScheduleOptions{
		Candidates: []string{"n1"}})
	if err != nil {
		t.Fatalf("Schedule: %v", err)
	}
	if decision.Placed || decision.ReasonCounts["InsufficientMemory"] != 1 ||
		!strings.HasPrefix(decision.Reasons["n1"], "InsufficientMemory") {
		t.Fatalf("decision: %s", decision.Raw)
	}
}

func TestAllocateOnTheHostsChoice(t *testing.T) {
	s := newSmallCluster(t)
	decision, err := s.Allocate(pod("a", 1024), "n2")
	if err != nil || !decision.Placed || decision.Node != "n2" {
		t.Fatalf("Allocate: %+v, %v", decision, err)
	}
	// Recorded from its annotations elsewhere: a second scheduler learns it.
	bound := strings.Replace(pod("a", 1024), `"uid": "uid-a"}`,
		`"uid": "uid-a", "annotations": `+annotationsJSON(decision)+`}`, 1)
	other := newSmallCluster(t)
	if err := other.Bind(bound, "n2"); err != nil {
		t.Fatalf("Bind: %v", err)
	}
	if usage, _ := other.Usage(); usage.MemoryUsedMiB != 1024 {
		t.Fatalf("Usage after Bind: %+v", usage)
	}
	err = other.Bind(pod("b", 1024), "n1")
	wantCode(t, err, FailedPrecondition, "no allocation record")
}

func annotationsJSON(d *Decision) string {
	parts := []string{}
	for k, v := range d.Annotations {
		parts = append(parts, fmt.Sprintf("%q: %q", k, v))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func TestBadInputsAreErrorsNamingWhat(t *testing.T) {
	_, err := NewScheduler("scheduler: {nodePolicy: sideways}")
	wantCode(t, err, InvalidArgument, "sideways")
	s := newSmallCluster(t)
	_, err = s.Schedule(`{"kind": "Pod", "metadata": {`, nil)
	wantCode(t, err, InvalidArgument, "")
	_, err = s.Schedule(pod("a", 1024), &ScheduleOptions{MaxExplainedNodes: -1})
	if err == nil {
		t.Fatalf("a negative max_explained_nodes was accepted")
	}
	_, err = s.UpsertNodes("nodes: [{name: x, gpus: [{model: A30, memory_mib: 24576, count: two}]}]")
	wantCode(t, err, InvalidArgument, "count")
	err = s.UpsertObject(`{"kind": "ConfigMap", "metadata": {"name": "x"}}`)
	wantCode(t, err, InvalidArgument, "ConfigMap")
	_, err = s.Filter("not: [a pod", nil)
	wantCode(t, err, InvalidArgument, "")
	_, err = ParseDocuments("a: [1, 2")
	wantCode(t, err, InvalidArgument, "YAML")
	// The other objects are still served.
	if d, err := s.Schedule(pod("ok", 1024), nil); err != nil || !d.Placed {
		t.Fatalf("Schedule after bad inputs: %+v, %v", d, err)
	}
}

func TestClosedSchedulerFails(t *testing.T) {
	s := newSmallCluster(t)
	if err := s.RemoveNode("n2"); err != nil {
		t.Fatalf("RemoveNode: %v", err)
	}
	if usage, _ := s.Usage(); usage.Nodes != 1 {
		t.Fatalf("Usage after RemoveNode: %+v", usage)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	_, err := s.Schedule(pod("a", 1024), nil)
	wantCode(t, err, FailedPrecondition, "closed")
}

// 16 goroutines schedule 200 pods of 3000 MiB on four 16 GiB GPUs: five
// fit each, so exactly 20 are placed and no GPU is overbooked; filter and
// score run beside them.
func TestConcurrentScheduleNeverOverbooks(t *testing.T) {
	s := newSmallCluster(t)
	const pods, workers = 200, 16
	var mu sync.Mutex
	usedMiB := map[string]int64{}
	placed := 0
	var wg sync.WaitGroup
	errs := make(chan error, pods*2)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := w; i < pods; i += workers {
				p := pod(fmt.Sprintf("p%d", i), 3000)
				if _, err := s.Filter(p, nil); err != nil {
					errs <- err
				}
				decision, err := s.Schedule(p, nil)
				if err != nil {
					errs <- err
					continue
				}
				if !decision.Placed {
					continue
				}
				mu.Lock()
				placed++
				for _, device := range decision.Containers[0].Devices {
					usedMiB[device.UUID] += device.MemoryMiB
				}
				mu.Unlock()
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent call: %v", err)
	}
	if placed != 20 {
		t.Errorf("%d pods placed, want 20", placed)
	}
	for uuid, used := range usedMiB {
		if used > 16384 {
			t.Errorf("GPU %s holds %d MiB of 16384", uuid, used)
		}
	}
	if usage, _ := s.Usage(); usage.Pods != 20 || usage.MemoryUsedMiB != 60000 {
		t.Errorf("Usage: %+v", usage)
	}
}

func TestPreparedPodAnswersAsTheTextCalls(t *testing.T) {
	s := newSmallCluster(t)
	p, err := s.PreparePod(pod("a", 4096))
	if err != nil {
		t.Fatalf("PreparePod: %v", err)
	}
	verdicts, err := s.Filter(pod("a", 4096), []string{"n1", "gone"})
	if err != nil {
		t.Fatalf("Filter: %v", err)
	}
	for _, want := range verdicts {
		got, err := s.FilterNode(p, want.Node)
		if err != nil || got != want {
			t.Errorf("FilterNode(%s) = %+v, %v; Filter says %+v", want.Node, got, err, want)
		}
	}
	score, err := s.Score(pod("a", 4096), "n2")
	if err != nil {
		t.Fatalf("Score: %v", err)
	}
	if got, err := s.ScoreNode(p, "n2"); err != nil || got != score {
		t.Errorf("ScoreNode = %d, %v; Score says %d", got, err, score)
	}

	if wants, err := p.WantsDevices(); err != nil || !wants {
		t.Errorf("WantsDevices = %v, %v for a GPU pod", wants, err)
	}
	plain, err := s.PreparePod(`{"kind": "Pod", "metadata": {"name": "plain", "namespace": "default", "uid": "u-plain"},
		"spec": {"containers": [{"name": "main", "resources": {"limits": {"cpu": "1"}}}]}}`)
	if err != nil {
		t.Fatalf("PreparePod(plain): %v", err)
	}
	if wants, err := plain.WantsDevices(); err != nil || wants {
		t.Errorf("WantsDevices = %v, %v for a pod without GPUs", wants, err)
	}
	plain.Close()
	_, err = plain.WantsDevices()
	wantCode(t, err, FailedPrecondition, "closed")

	huge, err := s.PreparePod(pod("huge", 32768))
	if err != nil {
		t.Fatalf("PreparePod: %v", err)
	}
	verdict, err := s.FilterNode(huge, "n1")
	if err != nil || verdict.Fits || verdict.Code != "InsufficientMemory" ||
		!strings.Contains(verdict.Reason, "InsufficientMemory") {
		t.Errorf("FilterNode(huge) = %+v, %v", verdict, err)
	}
	_, err = s.ScoreNode(huge, "n1")
	wantCode(t, err, FailedPrecondition, "InsufficientMemory")

	_, err = s.PreparePod("{")
	wantCode(t, err, InvalidArgument, "pod")
	if err := huge.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := huge.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	_, err = s.FilterNode(huge, "n1")
	wantCode(t, err, FailedPrecondition, "closed")
	_, err = s.FilterNode(nil, "n1")
	wantCode(t, err, InvalidArgument, "pod")
}

func TestPreparedPodConcurrently(t *testing.T) {
	s := newSmallCluster(t)
	p, err := s.PreparePod(pod("a", 4096))
	if err != nil {
		t.Fatalf("PreparePod: %v", err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				if v, err := s.FilterNode(p, "n1"); err != nil || !v.Fits {
					t.Errorf("FilterNode: %+v %v", v, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	p.Close()
}

// FilterNodeWithout answers as if the pods named were gone from the node:
// a pod of that node frees its room, a pod of another node does not, and
// nothing is released for real.
func TestFilterNodeWithoutCountsOnlyThatNodesPods(t *testing.T) {
	s := newSmallCluster(t)
	onNode := map[string][]string{}
	for i := 0; i < 4; i++ {
		name := fmt.Sprintf("fill-%d", i)
		d, err := s.Schedule(pod(name, 12000), nil)
		if err != nil || !d.Placed {
			t.Fatalf("Schedule(%s) = %+v, %v", name, d, err)
		}
		onNode[d.Node] = append(onNode[d.Node], "uid-"+name)
	}
	late, err := s.PreparePod(pod("late", 12000))
	if err != nil {
		t.Fatal(err)
	}
	defer late.Close()
	if v, err := s.FilterNode(late, "n1"); err != nil || v.Fits {
		t.Fatalf("FilterNode(n1) = %+v, %v on a full node", v, err)
	}
	if v, err := s.FilterNodeWithout(late, "n1", onNode["n1"][:1]); err != nil || !v.Fits || v.Score <= 0 {
		t.Errorf("FilterNodeWithout(n1, one of its pods) = %+v, %v; want a fit", v, err)
	}
	if v, err := s.FilterNodeWithout(late, "n1", onNode["n2"]); err != nil || v.Fits || v.Code != "InsufficientMemory" {
		t.Errorf("FilterNodeWithout(n1, n2's pods) = %+v, %v; want InsufficientMemory", v, err)
	}
	if v, err := s.FilterNodeWithout(late, "gone", onNode["n1"]); err != nil || v.Code != "NodeUnknown" || !v.Unresolvable {
		t.Errorf("FilterNodeWithout(gone) = %+v, %v", v, err)
	}
	if v, _ := s.FilterNode(late, "n1"); v.Fits {
		t.Errorf("FilterNodeWithout released a pod for real")
	}
}
