package deviceshare

import (
	"fmt"
	"strings"
	"testing"
)

// benchCluster is 8 nodes of 8 80 GiB GPUs (n0..n7): a Filter or Score
// call's cost is then the crossing into C and the pod's handling, not the
// cluster's size.
func benchCluster(b *testing.B) *Scheduler { return benchNodes(b, 8, "n%d") }

// benchNodes is `count` nodes of 8 80 GiB GPUs, named by `format`.
func benchNodes(b *testing.B, count int, format string) *Scheduler {
	b.Helper()
	var nodes strings.Builder
	nodes.WriteString("nodes:\n")
	for i := 0; i < count; i++ {
		fmt.Fprintf(&nodes, "- name: "+format+"\n  gpus: [{model: \"NVIDIA A100-SXM4-80GB\", memory_mib: 81920, count: 8}]\n", i)
	}
	s, err := NewScheduler("")
	if err != nil {
		b.Fatalf("NewScheduler: %v", err)
	}
	b.Cleanup(func() { s.Close() })
	if _, err := s.UpsertNodes(nodes.String()); err != nil {
		b.Fatalf("UpsertNodes: %v", err)
	}
	return s
}

// BenchmarkFilterOneNode is what a framework plugin's Filter costs through
// the JSON entry point: the pod's text parsed and the verdict encoded and
// decoded on every call, for one node.
func BenchmarkFilterOneNode(b *testing.B) {
	s := benchCluster(b)
	p := pod("bench", 4096)
	nodes := []string{"n3"}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		verdicts, err := s.Filter(p, nodes)
		if err != nil || len(verdicts) != 1 || !verdicts[0].Fits {
			b.Fatalf("Filter: %v %+v", err, verdicts)
		}
	}
}

// BenchmarkScoreOneNode: the same for Score.
func BenchmarkScoreOneNode(b *testing.B) {
	s := benchCluster(b)
	p := pod("bench", 4096)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.Score(p, "n3"); err != nil {
			b.Fatalf("Score: %v", err)
		}
	}
}

// BenchmarkFilterNodePrepared is FilterOneNode through a prepared pod.
func BenchmarkFilterNodePrepared(b *testing.B) {
	s, p := benchPrepared(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		verdict, err := s.FilterNode(p, "n3")
		if err != nil || !verdict.Fits {
			b.Fatalf("FilterNode: %v %+v", err, verdict)
		}
	}
}

// BenchmarkScoreNodePrepared is ScoreOneNode through a prepared pod.
func BenchmarkScoreNodePrepared(b *testing.B) {
	s, p := benchPrepared(b)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.ScoreNode(p, "n3"); err != nil {
			b.Fatalf("ScoreNode: %v", err)
		}
	}
}

// benchPrepared is benchCluster and the benchmarks' pod, prepared.
func benchPrepared(b *testing.B) (*Scheduler, *PreparedPod) {
	b.Helper()
	s := benchCluster(b)
	p, err := s.PreparePod(pod("bench", 4096))
	if err != nil {
		b.Fatalf("PreparePod: %v", err)
	}
	b.Cleanup(func() { p.Close() })
	return s, p
}

// benchLargeCluster is `nodes` nodes of 8 GPUs, n0000 on.
func benchLargeCluster(b *testing.B, nodes int) *Scheduler { return benchNodes(b, nodes, "n%04d") }

// BenchmarkFilter500NodesOneByOne is what a framework plugin's Filter and
// Score cost per pod at 500 nodes through the per-node calls, one
// goroutine: FilterNode and ScoreNode for every node.
func BenchmarkFilter500NodesOneByOne(b *testing.B) {
	s := benchLargeCluster(b, 500)
	p, err := s.PreparePod(pod("bench", 4096))
	if err != nil {
		b.Fatalf("PreparePod: %v", err)
	}
	defer p.Close()
	names := make([]string, 500)
	for i := range names {
		names[i] = fmt.Sprintf("n%04d", i)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, name := range names {
			if v, err := s.FilterNode(p, name); err != nil || !v.Fits {
				b.Fatalf("FilterNode: %v %+v", err, v)
			}
			if _, err := s.ScoreNode(p, name); err != nil {
				b.Fatalf("ScoreNode: %v", err)
			}
		}
	}
}

// BenchmarkFilter500NodesAtOnce is the same answers through one
// FilterAllNodes call per pod (verdicts with their scores).
func BenchmarkFilter500NodesAtOnce(b *testing.B) {
	s := benchLargeCluster(b, 500)
	p, err := s.PreparePod(pod("bench", 4096))
	if err != nil {
		b.Fatalf("PreparePod: %v", err)
	}
	defer p.Close()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if all, err := s.FilterAllNodes(p); err != nil || len(all) != 500 {
			b.Fatalf("FilterAllNodes: %v, %d verdicts", err, len(all))
		}
	}
}
