package kit

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

type nodeStatusPatcher interface {
	Patch(ctx context.Context, name string, pt types.PatchType, data []byte,
		options metav1.PatchOptions, subresources ...string) (*corev1.Node, error)
}

// advertise does what kubelet's node status does with a device plugin's
// ListAndWatch: the node's capacity and allocatable of the plugin's
// resource become the number of healthy devices. The scheduler (and
// deviceshare's extender) read which extended resources a node serves
// from there.
func (d *DeviceKubelet) advertise(resource string, healthy int) {
	count := strconv.Itoa(healthy)
	patch, _ := json.Marshal(map[string]any{"status": map[string]any{
		"capacity":    map[string]string{resource: count},
		"allocatable": map[string]string{resource: count},
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		_, err := d.nodes.Patch(ctx, d.node, types.StrategicMergePatchType, patch, metav1.PatchOptions{}, "status")
		if err == nil {
			d.mu.Lock()
			fmt.Fprintf(d.log, "%s node %s: %s = %s in capacity and allocatable\n",
				time.Now().Format(time.RFC3339Nano), d.node, resource, count)
			d.mu.Unlock()
			return
		}
		select {
		case <-ctx.Done():
			d.mu.Lock()
			d.errors = append(d.errors, fmt.Sprintf("node %s: cannot advertise %s: %v", d.node, resource, err))
			d.mu.Unlock()
			return
		case <-time.After(500 * time.Millisecond):
		}
	}
}
