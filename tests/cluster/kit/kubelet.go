package kit

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
	"k8s.io/kubernetes/pkg/kubelet/checkpointmanager"
	"k8s.io/kubernetes/pkg/kubelet/cm/devicemanager/checkpoint"
)

// DeviceKubelet stands in for the part of kubelet a device plugin talks
// to, for one node: the Registration service on kubelet.sock in the
// node's device-plugin folder, a ListAndWatch stream per registered
// resource, and, for each pod bound to the node, what kubelet's device
// manager does when it admits the pod: per container that asks for a
// registered resource, GetPreferredAllocation (when the plugin offers it)
// among the healthy devices not yet given out, then Allocate and
// PreStartContainer, writing kubelet_internal_checkpoint in between with
// kubelet's own checkpoint code (the agent's PreStart reads it). Nothing
// runs afterwards: there are no containers.
// (kubelet's own device manager cannot be reused: it listens on the
// fixed /var/lib/kubelet path, one per machine.)
type DeviceKubelet struct {
	pluginapi.UnimplementedRegistrationServer
	node, dir string
	client    podWatcher
	nodes     nodeStatusPatcher
	pods      func(namespace string) podStatusWriter
	server    *grpc.Server

	mu        sync.Mutex
	plugins   map[string]*registeredPlugin // by resource name
	admitted  map[string]bool              // pod uid
	allocated map[string]map[string]bool   // resource -> device ids given out
	entries   []checkpoint.PodDevicesEntry // what kubelet checkpoints
	errors    []string
	log       *os.File
	cancel    context.CancelFunc
}

type registeredPlugin struct {
	client    pluginapi.DevicePluginClient
	options   *pluginapi.DevicePluginOptions
	healthy   map[string]bool
	connected *grpc.ClientConn
}

type podWatcher interface {
	Watch(ctx context.Context, options metav1.ListOptions) (watch.Interface, error)
}

type podStatusWriter interface {
	UpdateStatus(ctx context.Context, pod *corev1.Pod, options metav1.UpdateOptions) (*corev1.Pod, error)
}

// StartDeviceKubelet serves kubelet.sock in node's device-plugin folder
// and admits the node's pods as they are bound.
func (k *Kit) StartDeviceKubelet(ctx context.Context, node string) (*DeviceKubelet, error) {
	dir := filepath.Join(k.hostRoot(node), "var", "lib", "kubelet", "device-plugins")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	socket := filepath.Join(dir, "kubelet.sock")
	os.Remove(socket)
	listener, err := net.Listen("unix", socket)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(ctx)
	log, err := os.Create(filepath.Join(k.Dir, "device-kubelet-"+node+".log"))
	if err != nil {
		listener.Close()
		cancel()
		return nil, err
	}
	kubelet := &DeviceKubelet{node: node, dir: dir, client: k.Client.CoreV1().Pods(""), log: log,
		nodes:  k.Client.CoreV1().Nodes(),
		pods:   func(namespace string) podStatusWriter { return k.Client.CoreV1().Pods(namespace) },
		server: grpc.NewServer(), plugins: map[string]*registeredPlugin{},
		admitted: map[string]bool{}, allocated: map[string]map[string]bool{}, cancel: cancel}
	pluginapi.RegisterRegistrationServer(kubelet.server, kubelet)
	go kubelet.server.Serve(listener)
	go kubelet.admitPods(ctx)
	k.kubelets = append(k.kubelets, kubelet)
	return kubelet, nil
}

// Register is what a device plugin calls on start: kubelet dials its
// endpoint back and starts ListAndWatch.
func (d *DeviceKubelet) Register(ctx context.Context, request *pluginapi.RegisterRequest) (*pluginapi.Empty, error) {
	if request.Version != pluginapi.Version {
		return nil, fmt.Errorf("unsupported device plugin API version %q", request.Version)
	}
	conn, err := grpc.NewClient("unix://"+filepath.Join(d.dir, request.Endpoint),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	plugin := &registeredPlugin{client: pluginapi.NewDevicePluginClient(conn),
		options: request.Options, healthy: map[string]bool{}, connected: conn}
	stream, err := plugin.client.ListAndWatch(context.Background(), &pluginapi.Empty{})
	if err != nil {
		conn.Close()
		return nil, err
	}
	d.mu.Lock()
	if old := d.plugins[request.ResourceName]; old != nil {
		old.connected.Close()
	}
	d.plugins[request.ResourceName] = plugin
	d.mu.Unlock()
	go func() {
		for {
			response, err := stream.Recv()
			if err != nil {
				return
			}
			healthy := map[string]bool{}
			for _, device := range response.Devices {
				if device.Health == pluginapi.Healthy {
					healthy[device.ID] = true
				}
			}
			d.mu.Lock()
			plugin.healthy = healthy
			d.mu.Unlock()
			d.advertise(request.ResourceName, len(healthy))
		}
	}()
	return &pluginapi.Empty{}, nil
}

// admitPods watches the pods bound to the node and admits each once, in
// the order they are seen, as kubelet's pod workers do.
func (d *DeviceKubelet) admitPods(ctx context.Context) {
	selector := fields.OneTermEqualSelector("spec.nodeName", d.node).String()
	for ctx.Err() == nil {
		w, err := d.client.Watch(ctx, metav1.ListOptions{FieldSelector: selector})
		if err != nil {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		for event := range w.ResultChan() {
			pod, ok := event.Object.(*corev1.Pod)
			if !ok || event.Type == watch.Deleted {
				continue
			}
			d.mu.Lock()
			seen := d.admitted[string(pod.UID)]
			d.admitted[string(pod.UID)] = true
			d.mu.Unlock()
			if !seen {
				if err := d.admit(ctx, pod); err != nil {
					message := fmt.Sprintf("%s/%s: %v", pod.Namespace, pod.Name, err)
					fmt.Fprintf(d.log, "%s admission failed: %s\n", time.Now().Format(time.RFC3339Nano), message)
					d.mu.Lock()
					d.errors = append(d.errors, message)
					d.mu.Unlock()
					d.fail(ctx, pod, err)
				}
			}
		}
		w.Stop()
	}
}

func (d *DeviceKubelet) admit(ctx context.Context, pod *corev1.Pod) error {
	containers := append(append([]corev1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...)
	for _, container := range containers {
		for name, quantity := range container.Resources.Limits {
			d.mu.Lock()
			plugin := d.plugins[string(name)]
			d.mu.Unlock()
			if plugin == nil || quantity.Value() == 0 {
				continue
			}
			if err := d.allocate(ctx, plugin, pod, container.Name, string(name), int(quantity.Value())); err != nil {
				return fmt.Errorf("container %s, %s: %w", container.Name, name, err)
			}
		}
	}
	return nil
}

func (d *DeviceKubelet) allocate(ctx context.Context, plugin *registeredPlugin, pod *corev1.Pod, containerName, resource string, count int) error {
	d.mu.Lock()
	if d.allocated[resource] == nil {
		d.allocated[resource] = map[string]bool{}
	}
	var available []string
	for id := range plugin.healthy {
		if !d.allocated[resource][id] {
			available = append(available, id)
		}
	}
	d.mu.Unlock()
	sort.Strings(available)
	if len(available) < count {
		return fmt.Errorf("%d devices available, %d asked", len(available), count)
	}
	chosen := available[:count]
	if plugin.options != nil && plugin.options.GetPreferredAllocationAvailable {
		preferred, err := plugin.client.GetPreferredAllocation(ctx, &pluginapi.PreferredAllocationRequest{
			ContainerRequests: []*pluginapi.ContainerPreferredAllocationRequest{{
				AvailableDeviceIDs: available, AllocationSize: int32(count)}}})
		if err != nil {
			return fmt.Errorf("GetPreferredAllocation: %w", err)
		}
		if ids := preferred.ContainerResponses[0].DeviceIDs; len(ids) == count {
			chosen = ids
		}
	}
	response, err := plugin.client.Allocate(ctx, &pluginapi.AllocateRequest{
		ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: chosen}}})
	if err != nil {
		return fmt.Errorf("Allocate %v: %w", chosen, err)
	}
	if len(response.ContainerResponses) != 1 {
		return fmt.Errorf("Allocate %v: %d container responses", chosen, len(response.ContainerResponses))
	}
	answer, err := proto.Marshal(response.ContainerResponses[0])
	if err != nil {
		return err
	}
	d.mu.Lock()
	for _, id := range chosen {
		d.allocated[resource][id] = true
	}
	// Devices without NUMA affinity are kept under -1, as kubelet does.
	d.entries = append(d.entries, checkpoint.PodDevicesEntry{PodUID: string(pod.UID),
		ContainerName: containerName, ResourceName: resource,
		DeviceIDs: checkpoint.DevicesPerNUMA{-1: chosen}, AllocResp: answer})
	err = d.writeCheckpointLocked()
	d.mu.Unlock()
	if err != nil {
		return fmt.Errorf("checkpoint: %w", err)
	}
	fmt.Fprintf(d.log, "%s %s/%s container %s: %s %v\n", time.Now().Format(time.RFC3339Nano),
		pod.Namespace, pod.Name, containerName, resource, chosen)
	if plugin.options != nil && plugin.options.PreStartRequired {
		if _, err := plugin.client.PreStartContainer(ctx, &pluginapi.PreStartContainerRequest{DevicesIds: chosen}); err != nil {
			return fmt.Errorf("PreStartContainer: %w", err)
		}
	}
	return nil
}

// fail ends the pod as kubelet ends a pod its device manager could not
// admit: phase Failed, reason UnexpectedAdmissionError. A finished pod
// holds no GPU, for the extender and the node agent alike.
func (d *DeviceKubelet) fail(ctx context.Context, pod *corev1.Pod, err error) {
	failed := pod.DeepCopy()
	failed.Status.Phase = corev1.PodFailed
	failed.Status.Reason = "UnexpectedAdmissionError"
	failed.Status.Message = fmt.Sprintf("Allocate failed due to %v, which is unexpected", err)
	if _, err := d.pods(pod.Namespace).UpdateStatus(ctx, failed, metav1.UpdateOptions{}); err != nil {
		fmt.Fprintf(d.log, "%s status of %s/%s not written: %v\n", time.Now().Format(time.RFC3339Nano), pod.Namespace, pod.Name, err)
	}
}

// writeCheckpointLocked writes kubelet_internal_checkpoint as kubelet's
// device manager does after each allocation.
func (d *DeviceKubelet) writeCheckpointLocked() error {
	manager, err := checkpointmanager.NewCheckpointManager(d.dir)
	if err != nil {
		return err
	}
	registered := map[string][]string{}
	for resource, plugin := range d.plugins {
		for id := range plugin.healthy {
			registered[resource] = append(registered[resource], id)
		}
		sort.Strings(registered[resource])
	}
	return manager.CreateCheckpoint("kubelet_internal_checkpoint", checkpoint.New(d.entries, registered))
}

// Errors are the admissions that failed so far.
func (d *DeviceKubelet) Errors() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.errors...)
}

// Stop stops serving and admitting.
func (d *DeviceKubelet) Stop() {
	d.cancel()
	d.server.Stop()
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, plugin := range d.plugins {
		plugin.connected.Close()
	}
	d.log.Close()
}
