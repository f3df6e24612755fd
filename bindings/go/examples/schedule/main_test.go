package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
)

// The repository's examples folder, from bindings/go/examples/schedule.
var examples = filepath.Join("..", "..", "..", "..", "examples")

// simulateBinary is deviceshare-scheduler: $DEVICESHARE_SCHEDULER (ctest
// sets it), else the default build tree's.
func simulateBinary(t *testing.T) string {
	path := os.Getenv("DEVICESHARE_SCHEDULER")
	if path == "" {
		path = filepath.Join("..", "..", "..", "..", "build", "plugins",
			"scheduler", "deviceshare-scheduler")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("deviceshare-scheduler not found (%v): build it, or set "+
			"DEVICESHARE_SCHEDULER", err)
	}
	return path
}

// The example's report, as it prints it, against simulate --output json on
// the same files: the same placements (every container's devices and env,
// the score) and the same unschedulable pods with the same reasons.
func TestPrintsWhatSimulatePrints(t *testing.T) {
	cluster := filepath.Join(examples, "cluster.yaml")
	pods := filepath.Join(examples, "workload.yaml")
	config := filepath.Join(examples, "deviceshare.yaml")
	simulated, err := exec.Command(simulateBinary(t), "simulate", "--cluster",
		cluster, "--pods", pods, "--config", config, "--output", "json").Output()
	if err != nil {
		t.Fatalf("simulate: %v", err)
	}
	// Generic JSON on both sides, so that a key the binding's types drop
	// shows as a difference.
	var whole map[string]interface{}
	if err := json.Unmarshal(simulated, &whole); err != nil {
		t.Fatalf("simulate's JSON: %v", err)
	}
	var unschedulable []interface{}
	for _, entry := range whole["unschedulable"].([]interface{}) {
		fields := entry.(map[string]interface{})
		unschedulable = append(unschedulable, map[string]interface{}{
			"pod": fields["pod"], "reasons": fields["reasons"],
			"reason_counts": fields["reason_counts"]})
	}
	want := map[string]interface{}{"placements": whole["placements"],
		"unschedulable": unschedulable}

	report, err := run(config, cluster, pods)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	printed, _ := json.Marshal(report)
	var got map[string]interface{}
	if err := json.Unmarshal(printed, &got); err != nil {
		t.Fatalf("the example's JSON: %v", err)
	}
	if len(report.Placements) != 9 || len(report.Unschedulable) != 3 {
		t.Errorf("placed %d and left %d, want 9 and 3: the example files "+
			"changed?", len(report.Placements), len(report.Unschedulable))
	}
	if !reflect.DeepEqual(got, want) {
		wantJSON, _ := json.Marshal(want)
		t.Fatalf("the example prints\n%s\nsimulate prints\n%s", printed,
			wantJSON)
	}
}
