package kit

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// GPU is one GPU of a fake NVML inventory.
type GPU struct {
	UUID        string `json:"uuid"`
	Index       int    `json:"index"`
	Model       string `json:"model"`
	MemoryMiB   int64  `json:"memory_mib"`
	SMCount     int    `json:"sm_count"`
	PCIDeviceID string `json:"pci_device_id"`
	MIGCapable  bool   `json:"mig_capable"`
	MIGMode     bool   `json:"mig_mode,omitempty"`
	Health      string `json:"health"`
}

// H100s is n healthy H100 80GB GPUs of a node, with uuids unique to it.
func H100s(node string, n int) []GPU {
	gpus := make([]GPU, n)
	for i := range gpus {
		gpus[i] = GPU{UUID: fmt.Sprintf("GPU-%08x-%04d-4000-8000-%012d", hash(node), i, i),
			Index: i, Model: "NVIDIA H100 80GB HBM3", MemoryMiB: 81559, SMCount: 132,
			PCIDeviceID: "0x2330", MIGCapable: true, Health: "healthy"}
	}
	return gpus
}

// Inventory is the fake NVML's file for these GPUs.
func Inventory(gpus []GPU) []byte {
	data, _ := json.Marshal(map[string]any{"gpus": gpus})
	return data
}

func hash(s string) uint32 {
	var h uint32 = 2166136261
	for i := 0; i < len(s); i++ {
		h = (h ^ uint32(s[i])) * 16777619
	}
	return h
}

// CreateNode creates a Node through the API as kubelet would register it
// (labels, capacity), then reports it Ready in its status: there is no
// kubelet to do either. The DaemonSet's affinity picks nodes labelled
// gpu=on.
func CreateNode(ctx context.Context, k *Kit, name string, labels map[string]string) (*corev1.Node, error) {
	return RegisterNode(ctx, k, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}})
}

// RegisterNode creates `node` (its labels and annotations, e.g. a device
// plugin's registration) as kubelet would register it, with the hostname
// and OS labels kubelet adds, then reports it Ready with its
// status.allocatable (64 CPUs, 512Gi and 250 pods where it names none).
func RegisterNode(ctx context.Context, k *Kit, node *corev1.Node) (*corev1.Node, error) {
	all := map[string]string{"kubernetes.io/hostname": node.Name, "kubernetes.io/os": "linux"}
	for key, value := range node.Labels {
		all[key] = value
	}
	capacity := corev1.ResourceList{
		corev1.ResourceCPU:    resource.MustParse("64"),
		corev1.ResourceMemory: resource.MustParse("512Gi"),
		corev1.ResourcePods:   resource.MustParse("250"),
	}
	for resourceName, quantity := range node.Status.Allocatable {
		capacity[resourceName] = quantity
	}
	object := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: node.Name, Labels: all,
		Annotations: node.Annotations}}
	created, err := k.Client.CoreV1().Nodes().Create(ctx, object, metav1.CreateOptions{})
	if err != nil {
		return nil, err
	}
	created.Status = corev1.NodeStatus{
		Capacity:    capacity,
		Allocatable: capacity,
		Conditions: []corev1.NodeCondition{{
			Type: corev1.NodeReady, Status: corev1.ConditionTrue, Reason: "KubeletReady",
			LastHeartbeatTime: metav1.Now(), LastTransitionTime: metav1.Now(),
		}},
		Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "127.0.0.1"}},
	}
	return k.Client.CoreV1().Nodes().UpdateStatus(ctx, created, metav1.UpdateOptions{})
}
