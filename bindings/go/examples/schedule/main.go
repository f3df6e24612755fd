// Command schedule places the pods of a pods file on the nodes of a
// cluster file through the Go binding, one Schedule call per pod in the
// file's order, and prints the placements and the unschedulable pods as
// JSON: the same placements as
//
//	deviceshare-scheduler simulate --cluster CLUSTER --pods PODS --output json
//
// Usage:
//
//	go run ./examples/schedule -cluster ../../examples/cluster.yaml \
//	    -pods ../../examples/workload.yaml [-config ../../examples/deviceshare.yaml]
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"

	deviceshare "github.com/deviceshare/deviceshare/bindings/go"
)

// placement and unschedulable are simulate's JSON entries.
type placement struct {
	Pod        string                  `json:"pod"`
	Node       string                  `json:"node"`
	Containers []deviceshare.Container `json:"containers"`
	Score      int                     `json:"score"`
}

type unschedulable struct {
	Pod          string            `json:"pod"`
	Reasons      map[string]string `json:"reasons"`
	ReasonCounts map[string]int    `json:"reason_counts"`
}

type report struct {
	Placements    []placement     `json:"placements"`
	Unschedulable []unschedulable `json:"unschedulable"`
}

func run(configFile, clusterFile, podsFile string) (*report, error) {
	config := ""
	if configFile != "" {
		text, err := os.ReadFile(configFile)
		if err != nil {
			return nil, err
		}
		config = string(text)
	}
	scheduler, err := deviceshare.NewScheduler(config)
	if err != nil {
		return nil, err
	}
	defer scheduler.Close()

	cluster, err := os.ReadFile(clusterFile)
	if err != nil {
		return nil, err
	}
	if _, err := scheduler.UpsertNodes(string(cluster)); err != nil {
		return nil, fmt.Errorf("%s: %w", clusterFile, err)
	}
	podsText, err := os.ReadFile(podsFile)
	if err != nil {
		return nil, err
	}
	pods, err := deviceshare.ParseDocuments(string(podsText))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", podsFile, err)
	}
	out := &report{Placements: []placement{}, Unschedulable: []unschedulable{}}
	for _, pod := range pods {
		decision, err := scheduler.Schedule(string(pod), nil)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", podsFile, err)
		}
		if decision.Placed {
			out.Placements = append(out.Placements, placement{
				decision.Pod, decision.Node, decision.Containers, decision.Score})
		} else {
			out.Unschedulable = append(out.Unschedulable, unschedulable{
				decision.Pod, decision.Reasons, decision.ReasonCounts})
		}
	}
	return out, nil
}

func main() {
	configFile := flag.String("config", "", "deviceshare config (YAML)")
	clusterFile := flag.String("cluster", "", "cluster file: inventory form or Node objects")
	podsFile := flag.String("pods", "", "pods file: Pod objects")
	flag.Parse()
	if *clusterFile == "" || *podsFile == "" || flag.NArg() != 0 {
		flag.Usage()
		os.Exit(2)
	}
	out, err := run(*configFile, *clusterFile, *podsFile)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	encoder := json.NewEncoder(os.Stdout)
	encoder.SetIndent("", "  ")
	if err := encoder.Encode(out); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
