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
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	pluginapi "k8s.io/kubelet/pkg/apis/deviceplugin/v1beta1"
)

// DeviceKubelet stands in for the part of kubelet a device plugin talks
// to, for one node: the Registration service on kubelet.sock in the
// node's device-plugin folder, a ListAndWatch stream per registered
// resource, and, for each pod bound to the node, what kubelet's device
// manager does when it admits the pod: per container that asks for a
// registered resource, GetPreferredAllocation (when the plugin offers it)
// among the healthy devices not yet given out, then Allocate and
// PreStartContainer. Nothing runs afterwards: there are no containers.
// (kubelet's own device manager cannot be reused: it listens on the
// fixed /var/lib/kubelet path, one per machine.)
type DeviceKubelet struct {
	pluginapi.UnimplementedRegistrationServer
	node, dir string
	client    podWatcher
	server    *grpc.Server

	mu        sync.Mutex
	plugins   map[string]*registeredPlugin // by resource name
	admitted  map[string]bool              // pod uid
	allocated map[string]map[string]bool   // resource -> device ids given out
	errors    []string
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
	kubelet := &DeviceKubelet{node: node, dir: dir, client: k.Client.CoreV1().Pods(""),
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
					d.mu.Lock()
					d.errors = append(d.errors, fmt.Sprintf("%s/%s: %v", pod.Namespace, pod.Name, err))
					d.mu.Unlock()
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
			if err := d.allocate(ctx, plugin, string(name), int(quantity.Value())); err != nil {
				return fmt.Errorf("container %s, %s: %w", container.Name, name, err)
			}
		}
	}
	return nil
}

func (d *DeviceKubelet) allocate(ctx context.Context, plugin *registeredPlugin, resource string, count int) error {
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
	if _, err := plugin.client.Allocate(ctx, &pluginapi.AllocateRequest{
		ContainerRequests: []*pluginapi.ContainerAllocateRequest{{DevicesIds: chosen}}}); err != nil {
		return fmt.Errorf("Allocate: %w", err)
	}
	d.mu.Lock()
	for _, id := range chosen {
		d.allocated[resource][id] = true
	}
	d.mu.Unlock()
	if plugin.options != nil && plugin.options.PreStartRequired {
		if _, err := plugin.client.PreStartContainer(ctx, &pluginapi.PreStartContainerRequest{DevicesIds: chosen}); err != nil {
			return fmt.Errorf("PreStartContainer: %w", err)
		}
	}
	return nil
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
}
