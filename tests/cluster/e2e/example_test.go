package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/deviceshare/deviceshare/tests/cluster/kit"
)

// Both hosts answer as simulate does: the bundled example (the nodes of
// both dialects in examples/nodes.yaml, registered as their device
// plugins register them; the pods of examples/pods.yaml, created one at
// a time in the file's order) goes once through kube-scheduler with the
// extender and once through deviceshare-kube-scheduler. Each pod lands on
// the node `simulate` chooses for it with the devices simulate gives it
// (uuid, memory, cores, in order), the pod simulate refuses is refused,
// and the two hosts write the same records (every annotation but the
// times).
//
// No node agent runs (the example's registrations are the device
// plugins'), so no pod is ever reported handed its GPUs; the extender
// runs with --in-flight-timeout 0, which turns off its hold of a bind
// behind such a pod (the in-process host has no such hold).
func TestBothHostsPlaceTheExampleAsSimulate(t *testing.T) {
	e := environment(t)
	examples := filepath.Join(e.repo, "examples")
	want := simulateExample(t, e.scheduler, examples)
	nodes := readObjects[corev1.Node](t, filepath.Join(examples, "nodes.yaml"))
	pods := readObjects[corev1.Pod](t, filepath.Join(examples, "pods.yaml"))

	records := map[string]map[string]map[string]string{}
	for _, host := range []string{"extender", "in-process"} {
		t.Run(host, func(t *testing.T) {
			var c *cluster
			if host == "in-process" {
				c = newCluster(t, withInProcess(t))
			} else {
				c = newCluster(t)
			}
			for _, node := range nodes {
				if _, err := kit.RegisterNode(c.ctx, c.kit, node); err != nil {
					t.Fatal(err)
				}
			}
			c.startScheduling("--in-flight-timeout=0")
			records[host] = c.placeExample(pods, want)
		})
	}
	extender, inProcess := records["extender"], records["in-process"]
	if extender == nil || inProcess == nil {
		return // a host was skipped or failed above
	}
	for pod, annotations := range extender {
		if !reflect.DeepEqual(annotations, inProcess[pod]) {
			t.Errorf("%s: the extender wrote %v; deviceshare-kube-scheduler wrote %v", pod, annotations, inProcess[pod])
		}
	}
}

// placeExample creates the pods one at a time, each after the previous one
// was bound or refused, checks each against simulate's answer and returns
// the records written on the bound pods (times left out) by pod.
func (c *cluster) placeExample(pods []*corev1.Pod, want simulatedExample) map[string]map[string]string {
	t := c.t
	namespaces := map[string]bool{}
	records := map[string]map[string]string{}
	for _, p := range pods {
		if !namespaces[p.Namespace] {
			c.createNamespace(p.Namespace)
			namespaces[p.Namespace] = true
		}
		p.UID = "" // the API server assigns it
		if _, err := c.kit.Client.CoreV1().Pods(p.Namespace).Create(c.ctx, p, metav1.CreateOptions{}); err != nil {
			t.Fatalf("create %s/%s: %v", p.Namespace, p.Name, err)
		}
		key := p.Namespace + "/" + p.Name
		placement, placed := want.placements[key]
		if !placed {
			c.waitRefused(p.Namespace, p.Name, want.refused[key], 60*time.Second)
			continue
		}
		bound := c.waitBound(p.Namespace, p.Name, 60*time.Second)
		if bound.Spec.NodeName != placement.node {
			t.Errorf("%s: bound to %s; simulate places it on %s", key, bound.Spec.NodeName, placement.node)
		}
		record := bound.Annotations["hami.io/vgpu-devices-allocated"]
		if record == "" {
			record = bound.Annotations["volcano.sh/vgpu-ids-new"]
		}
		if got := parseHamiRecord(record); !reflect.DeepEqual(got, placement.grants) {
			t.Errorf("%s: record %q gives %v; simulate gives %v", key, record, got, placement.grants)
		}
		records[key] = map[string]string{}
		for name, value := range bound.Annotations {
			if !strings.HasSuffix(name, "-time") {
				records[key][name] = value
			}
		}
	}
	if len(records) != len(want.placements) {
		t.Errorf("%d pods bound; simulate places %d", len(records), len(want.placements))
	}
	return records
}

// simulatedExample is simulate's answer for the example: the node and
// devices of each placed pod, the reason most nodes give for each refused
// one.
type simulatedExample struct {
	placements map[string]struct {
		node   string
		grants []grant
	}
	refused map[string]string
}

func simulateExample(t *testing.T, scheduler, examples string) simulatedExample {
	t.Helper()
	out, err := exec.Command(scheduler, "simulate", "--cluster", filepath.Join(examples, "nodes.yaml"),
		"--pods", filepath.Join(examples, "pods.yaml"), "--output", "json").Output()
	if err != nil {
		t.Fatalf("simulate: %v", err)
	}
	var result struct {
		Placements []struct {
			Pod        string `json:"pod"`
			Node       string `json:"node"`
			Containers []struct {
				Devices []struct {
					UUID      string `json:"uuid"`
					MemoryMiB int    `json:"memory_mib"`
					Cores     int    `json:"cores"`
				} `json:"devices"`
			} `json:"containers"`
		} `json:"placements"`
		Unschedulable []struct {
			Pod          string         `json:"pod"`
			ReasonCounts map[string]int `json:"reason_counts"`
		} `json:"unschedulable"`
	}
	if err := json.Unmarshal(out, &result); err != nil {
		t.Fatalf("simulate's JSON: %v", err)
	}
	answer := simulatedExample{placements: map[string]struct {
		node   string
		grants []grant
	}{}, refused: map[string]string{}}
	for _, p := range result.Placements {
		var grants []grant
		for _, container := range p.Containers {
			for _, device := range container.Devices {
				grants = append(grants, grant{device.UUID, device.MemoryMiB, device.Cores})
			}
		}
		answer.placements[p.Pod] = struct {
			node   string
			grants []grant
		}{p.Node, grants}
	}
	for _, p := range result.Unschedulable {
		// The reason most nodes give (kube-scheduler's condition counts
		// them, e.g. "2 InsufficientMemory"); a tie goes to the first name.
		best := ""
		for reason, count := range p.ReasonCounts {
			if best == "" || count > p.ReasonCounts[best] || (count == p.ReasonCounts[best] && reason < best) {
				best = reason
			}
		}
		answer.refused[p.Pod] = best
	}
	if len(answer.placements) == 0 {
		t.Fatalf("simulate placed nothing: %s", out)
	}
	return answer
}

// readObjects reads a multi-document YAML file's objects into T.
func readObjects[T any](t *testing.T, path string) []*T {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var objects []*T
	for _, document := range strings.Split(string(data), "\n---") {
		object := new(T)
		if err := yaml.Unmarshal([]byte(document), object); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		objects = append(objects, object)
	}
	return objects
}
