package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"

	resourcev1 "k8s.io/api/resource/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/deviceshare/deviceshare/tests/cluster/kit"
)

// makeNodes creates the Node objects, 32 at a time, and gives each what
// its node agent would publish for the row: the registration (share) or
// the ResourceSlices (dra-*), made by `deviceshare-node-agent discover`.
func makeNodes(ctx context.Context, k *kit.Kit, o options, row string) error {
	work := make(chan int)
	errs := make(chan error, o.nodes)
	var wg sync.WaitGroup
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if err := makeNode(ctx, k, o, row, fmt.Sprintf("node-%05d", i)); err != nil {
					errs <- err
				}
			}
		}()
	}
	for i := 0; i < o.nodes; i++ {
		work <- i
	}
	close(work)
	wg.Wait()
	close(errs)
	return <-errs
}

func makeNode(ctx context.Context, k *kit.Kit, o options, row, name string) error {
	if _, err := kit.CreateNode(ctx, k, name, map[string]string{"gpu": "on"}); err != nil {
		return err
	}
	if row == "plain" {
		return nil
	}
	inventory := filepath.Join(k.Dir, name+".json")
	if err := os.WriteFile(inventory, kit.Inventory(kit.H100s(name, 8)), 0o600); err != nil {
		return err
	}
	defer os.Remove(inventory)
	agent := filepath.Join(o.build, "plugins/node-agent/deviceshare-node-agent")
	if isShare(row) {
		patch, err := exec.CommandContext(ctx, agent, "discover", "--inventory", inventory,
			"--output", "annotation", "--dialect", "hami").Output()
		if err != nil {
			return fmt.Errorf("discover %s: %w", name, err)
		}
		_, err = k.Client.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{})
		return err
	}
	out, err := exec.CommandContext(ctx, agent, "discover", "--inventory", inventory,
		"--output", "resourceslices", "--node-name", name).Output()
	if err != nil {
		return fmt.Errorf("discover %s: %w", name, err)
	}
	var list struct {
		Items []resourcev1.ResourceSlice `json:"items"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return fmt.Errorf("slices of %s: %w", name, err)
	}
	for i := range list.Items {
		if _, err := k.Client.ResourceV1().ResourceSlices().Create(ctx, &list.Items[i], metav1.CreateOptions{}); err != nil {
			return fmt.Errorf("slice %s: %w", list.Items[i].Name, err)
		}
	}
	return nil
}
