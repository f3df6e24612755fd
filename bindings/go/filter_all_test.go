package deviceshare

import (
	"fmt"
	"reflect"
	"testing"
)

// FilterAllNodes answers for every node what FilterNode answers for it,
// fits and misfits alike, and AllocatePrepared places the prepared pod
// as Allocate places its text.
func TestFilterAllNodesAnswersAsFilterNode(t *testing.T) {
	s := newSmallCluster(t)
	for _, size := range []int{4096, 12000, 32768} {
		p, err := s.PreparePod(pod(fmt.Sprintf("p%d", size), size))
		if err != nil {
			t.Fatalf("PreparePod: %v", err)
		}
		all, err := s.FilterAllNodes(p)
		if err != nil {
			t.Fatalf("FilterAllNodes: %v", err)
		}
		if len(all) != 2 {
			t.Errorf("%d MiB: verdicts for %d nodes, want n1 and n2", size, len(all))
		}
		for _, node := range []string{"n1", "n2"} {
			want, err := s.FilterNode(p, node)
			if err != nil {
				t.Fatalf("FilterNode: %v", err)
			}
			if got := all[node]; got != want {
				t.Errorf("%d MiB on %s: FilterAllNodes says %+v; FilterNode %+v", size, node, got, want)
			}
		}
		p.Close()
	}
	p, err := s.PreparePod(pod("a", 4096))
	if err != nil {
		t.Fatalf("PreparePod: %v", err)
	}
	defer p.Close()
	got, err := s.AllocatePrepared(p, "n2")
	if err != nil || !got.Placed || got.Node != "n2" {
		t.Fatalf("AllocatePrepared = %+v, %v", got, err)
	}
	if err := s.Release("uid-a"); err != nil {
		t.Fatalf("Release: %v", err)
	}
	want, err := s.Allocate(pod("a", 4096), "n2")
	if err != nil {
		t.Fatalf("Allocate: %v", err)
	}
	if !reflect.DeepEqual(got.Containers, want.Containers) || got.Score != want.Score {
		t.Errorf("AllocatePrepared gave %+v; Allocate %+v", got, want)
	}
	if _, err := s.AllocatePrepared(p, "n2"); CodeOf(err) != AlreadyExists {
		t.Errorf("AllocatePrepared of a placed pod: %v, want AlreadyExists", err)
	}
	p.Close()
	_, err = s.FilterAllNodes(p)
	wantCode(t, err, FailedPrecondition, "closed")
	_, err = s.FilterAllNodes(nil)
	wantCode(t, err, InvalidArgument, "pod")
}
