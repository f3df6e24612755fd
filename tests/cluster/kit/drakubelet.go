package kit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	resourceclient "k8s.io/client-go/kubernetes/typed/resource/v1"
	"k8s.io/klog/v2"
	"k8s.io/klog/v2/textlogger"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"
	kubeletdra "k8s.io/kubernetes/pkg/kubelet/cm/dra"
	draplugin "k8s.io/kubernetes/pkg/kubelet/cm/dra/plugin"
	"k8s.io/kubernetes/pkg/kubelet/config"
	"k8s.io/kubernetes/pkg/kubelet/pluginmanager"
)

// DRAKubelet stands in for the part of kubelet a DRA driver's kubelet
// plugin talks to, on one node, and runs kubelet's own code for it:
//
//   - its plugin manager (pkg/kubelet/pluginmanager) watches the node's
//     plugins_registry folder, dials each registration socket that appears,
//     calls GetInfo, lets the DRA handler validate the advertised versions,
//     registers the plugin and answers NotifyRegistrationStatus;
//   - its DRA manager (pkg/kubelet/cm/dra) prepares a pod's claims: it reads
//     each claim from the API server, refuses one that is not allocated or
//     not reserved for the pod, calls the driver's NodePrepareResources
//     with the claim's namespace, name and uid, refuses an answer with an
//     error or about a claim it did not ask for, and keeps the devices and
//     CDI ids in its checkpoint (dra_manager_state); when the last pod of a
//     claim is gone it calls NodeUnprepareResources.
//
// What stands in for the rest of kubelet is the pod loop: the pods bound to
// the node are watched, and each pod that has claims is prepared, again
// every second while that fails (kubelet's pod workers retry a pod whose
// sync failed); a pod that is deleted or finished is unprepared. There are
// no containers: what the runtime would get is what GetResources answers.
// (kubelet's device manager is stood in for by DeviceKubelet instead,
// because it listens on a fixed path; the DRA manager takes its folders.)
type DRAKubelet struct {
	node    string
	client  kubernetes.Interface
	manager *kubeletdra.Manager
	log     *os.File
	cancel  context.CancelFunc
	done    sync.WaitGroup

	mu      sync.Mutex
	pods    map[types.UID]*draPod
	errors  []string
	stopped bool
}

// draPod is one pod of the node as the pod loop tracks it.
type draPod struct {
	pod        *corev1.Pod
	gone       bool // deleted, or in a terminal phase
	prepared   *PreparedPod
	unprepared bool
	lastError  string
	wake       chan struct{}
}

// PreparedPod is what kubelet holds for a pod once its claims are prepared.
type PreparedPod struct {
	// CDIDevices lists, per container name, the CDI device ids kubelet
	// would hand the container runtime (the DRA manager's GetResources).
	CDIDevices map[string][]string
	// Claims are the pod's claims with the devices the drivers answered
	// NodePrepareResources with, as kubelet checkpointed them.
	Claims []PreparedClaim
}

// PreparedClaim is one claim kubelet prepared.
type PreparedClaim struct {
	Namespace, Name string
	UID             types.UID
	Devices         []PreparedDevice
}

// PreparedDevice is one device of a driver's NodePrepareResources answer.
type PreparedDevice struct {
	Driver, Pool, Device string
	Requests             []string
	CDIDeviceIDs         []string
	// ShareID is empty for a device allocated whole.
	ShareID string
}

// StartDRAKubelet runs kubelet's DRA plugin manager and DRA manager for
// node, with the node's folders under its host root
// (/var/lib/kubelet/plugins_registry and /var/lib/kubelet), and prepares
// the node's pods as they are bound.
//
// Start it before the node's agent, as kubelet runs before a DaemonSet's
// pods: on start kubelet deletes the node's ResourceSlices (no driver has
// registered with it yet, so none may advertise devices). It returns once
// that is done, so that the agent's slices are not deleted after it
// published them.
func (k *Kit) StartDRAKubelet(ctx context.Context, node string) (*DRAKubelet, error) {
	kubeletDir := filepath.Join(k.hostRoot(node), "var", "lib", "kubelet")
	registry := filepath.Join(kubeletDir, "plugins_registry")
	if err := os.MkdirAll(registry, 0o700); err != nil {
		return nil, err
	}
	log, err := os.Create(filepath.Join(k.Dir, "dra-kubelet-"+node+".log"))
	if err != nil {
		return nil, err
	}
	logger := textlogger.NewLogger(textlogger.NewConfig(textlogger.Output(log), textlogger.Verbosity(4)))
	ctx, cancel := context.WithCancel(klog.NewContext(ctx, logger))
	wiped := make(chan struct{})
	client := &wipeSignal{Interface: k.Client, node: node, wiped: wiped}
	manager, err := kubeletdra.NewManager(logger, client, kubeletDir)
	if err != nil {
		cancel()
		log.Close()
		return nil, err
	}
	d := &DRAKubelet{node: node, client: k.Client, manager: manager, log: log, cancel: cancel,
		pods: map[types.UID]*draPod{}}
	sourcesReady := config.NewSourcesReady(func(sets.Set[string]) bool { return true })
	getNode := func(ctx context.Context) (*corev1.Node, error) {
		return k.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	}
	if err := manager.Start(ctx, d.activePods, getNode, sourcesReady); err != nil {
		cancel()
		log.Close()
		return nil, err
	}
	plugins := pluginmanager.NewPluginManager(registry, nil)
	plugins.AddHandler(registerapi.DRAPlugin, manager.GetWatcherHandler())
	d.done.Add(2)
	go func() {
		defer d.done.Done()
		plugins.Run(ctx, sourcesReady, ctx.Done())
	}()
	go func() {
		defer d.done.Done()
		d.watchPods(ctx)
	}()
	k.draKubelets = append(k.draKubelets, d)
	select {
	case <-wiped:
		return d, nil
	case <-time.After(time.Minute):
		d.Stop()
		return nil, fmt.Errorf("DRA kubelet of %s: the node's ResourceSlices were not wiped on start within a minute (see %s)", node, log.Name())
	case <-ctx.Done():
		d.Stop()
		return nil, ctx.Err()
	}
}

// wipeSignal is kubelet's API client, which tells when kubelet's start-up
// wipe of the node's ResourceSlices is done (a DeleteCollection that
// selects by this node's name).
type wipeSignal struct {
	kubernetes.Interface
	node  string
	once  sync.Once
	wiped chan struct{}
}

func (w *wipeSignal) ResourceV1() resourceclient.ResourceV1Interface {
	return wipeSignalResource{w.Interface.ResourceV1(), w}
}

type wipeSignalResource struct {
	resourceclient.ResourceV1Interface
	signal *wipeSignal
}

func (r wipeSignalResource) ResourceSlices() resourceclient.ResourceSliceInterface {
	return wipeSignalSlices{r.ResourceV1Interface.ResourceSlices(), r.signal}
}

type wipeSignalSlices struct {
	resourceclient.ResourceSliceInterface
	signal *wipeSignal
}

func (s wipeSignalSlices) DeleteCollection(ctx context.Context, options metav1.DeleteOptions, list metav1.ListOptions) error {
	err := s.ResourceSliceInterface.DeleteCollection(ctx, options, list)
	if err == nil && strings.Contains(list.FieldSelector, "spec.nodeName="+s.signal.node) {
		s.signal.once.Do(func() { close(s.signal.wiped) })
	}
	return err
}

// Registered says whether kubelet's DRA handler has driver registered and
// connected (GetPlugin succeeds, as it must before a claim is prepared).
func (d *DRAKubelet) Registered(driver string) bool {
	handler, ok := d.manager.GetWatcherHandler().(*draplugin.DRAPluginManager)
	if !ok {
		return false
	}
	_, err := handler.GetPlugin(driver)
	return err == nil
}

// Prepared returns what kubelet holds for the pod once all its claims are
// prepared.
func (d *DRAKubelet) Prepared(uid types.UID) (PreparedPod, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p := d.pods[uid]; p != nil && p.prepared != nil {
		return *p.prepared, true
	}
	return PreparedPod{}, false
}

// Unprepared says whether the pod is gone and kubelet's DRA manager
// unprepared its claims without an error.
func (d *DRAKubelet) Unprepared(uid types.UID) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	p := d.pods[uid]
	return p != nil && p.unprepared
}

// LastError is the pod's last prepare or unprepare failure ("" when none).
func (d *DRAKubelet) LastError(uid types.UID) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	if p := d.pods[uid]; p != nil {
		return p.lastError
	}
	return ""
}

// Errors are the distinct prepare and unprepare failures so far.
func (d *DRAKubelet) Errors() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.errors...)
}

// activePods are the pods the DRA manager's reconcile loop keeps prepared
// (kubelet's active pods): bound here, not deleted, not finished.
func (d *DRAKubelet) activePods() []*corev1.Pod {
	d.mu.Lock()
	defer d.mu.Unlock()
	var active []*corev1.Pod
	for _, p := range d.pods {
		if !p.gone {
			active = append(active, p.pod)
		}
	}
	return active
}

// watchPods lists and watches the pods bound to the node; a pod missing
// from a fresh list (deleted while no watch ran) counts as deleted.
func (d *DRAKubelet) watchPods(ctx context.Context) {
	selector := fields.OneTermEqualSelector("spec.nodeName", d.node).String()
	for ctx.Err() == nil {
		list, err := d.client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: selector})
		if err != nil {
			sleep(ctx, time.Second)
			continue
		}
		listed := map[types.UID]bool{}
		for i := range list.Items {
			listed[list.Items[i].UID] = true
			d.update(ctx, &list.Items[i], false)
		}
		d.mu.Lock()
		var missing []*corev1.Pod
		for uid, p := range d.pods {
			if !listed[uid] && !p.gone {
				missing = append(missing, p.pod)
			}
		}
		d.mu.Unlock()
		for _, pod := range missing {
			d.update(ctx, pod, true)
		}
		w, err := d.client.CoreV1().Pods("").Watch(ctx, metav1.ListOptions{FieldSelector: selector,
			ResourceVersion: list.ResourceVersion})
		if err != nil {
			sleep(ctx, time.Second)
			continue
		}
		for event := range w.ResultChan() {
			if pod, ok := event.Object.(*corev1.Pod); ok {
				d.update(ctx, pod, event.Type == watch.Deleted)
			}
		}
		w.Stop()
	}
}

// update records the pod's latest state and wakes its worker, starting
// one for a pod with claims seen for the first time.
func (d *DRAKubelet) update(ctx context.Context, pod *corev1.Pod, deleted bool) {
	if len(pod.Spec.ResourceClaims) == 0 {
		return
	}
	gone := deleted || pod.Status.Phase == corev1.PodSucceeded || pod.Status.Phase == corev1.PodFailed
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.stopped {
		return
	}
	p := d.pods[pod.UID]
	if p == nil {
		if gone {
			return // never prepared here
		}
		p = &draPod{wake: make(chan struct{}, 1)}
		d.pods[pod.UID] = p
		d.done.Add(1)
		go func() {
			defer d.done.Done()
			d.work(ctx, pod.UID, p)
		}()
	}
	p.pod = pod
	p.gone = p.gone || gone
	select {
	case p.wake <- struct{}{}:
	default:
	}
}

// work prepares the pod's claims until that succeeds, then, once the pod
// is gone, unprepares them until that succeeds.
func (d *DRAKubelet) work(ctx context.Context, uid types.UID, p *draPod) {
	for ctx.Err() == nil {
		d.mu.Lock()
		pod, gone, prepared := p.pod, p.gone, p.prepared != nil
		d.mu.Unlock()
		if gone {
			err := d.manager.UnprepareResources(ctx, pod)
			d.record(pod, p, "unprepare", err)
			if err == nil {
				d.mu.Lock()
				p.unprepared = true
				d.mu.Unlock()
				d.logf("%s/%s (%s): claims unprepared", pod.Namespace, pod.Name, pod.UID)
				return
			}
			sleep(ctx, time.Second)
			continue
		}
		if !prepared {
			err := d.manager.PrepareResources(ctx, pod)
			var result *PreparedPod
			if err == nil {
				result, err = d.preparedOf(pod)
			}
			d.record(pod, p, "prepare", err)
			if err == nil {
				d.mu.Lock()
				p.prepared = result
				d.mu.Unlock()
				d.logf("%s/%s (%s): claims prepared, CDI devices %v", pod.Namespace, pod.Name, pod.UID, result.CDIDevices)
				continue
			}
			// Retried after a second, or sooner when the pod changes.
			select {
			case <-ctx.Done():
			case <-p.wake:
			case <-time.After(time.Second):
			}
			continue
		}
		select {
		case <-ctx.Done():
		case <-p.wake:
		}
	}
}

// preparedOf reads back what the DRA manager holds for the pod's
// containers.
func (d *DRAKubelet) preparedOf(pod *corev1.Pod) (*PreparedPod, error) {
	result := &PreparedPod{CDIDevices: map[string][]string{}}
	seen := map[types.UID]bool{}
	containers := append(append([]corev1.Container(nil), pod.Spec.InitContainers...), pod.Spec.Containers...)
	for i := range containers {
		container := &containers[i]
		resources, err := d.manager.GetResources(pod, container)
		if err != nil {
			return nil, fmt.Errorf("container %s: %w", container.Name, err)
		}
		for _, device := range resources.CDIDevices {
			result.CDIDevices[container.Name] = append(result.CDIDevices[container.Name], device.Name)
		}
		infos, err := d.manager.GetContainerClaimInfos(pod, container)
		if err != nil {
			return nil, fmt.Errorf("container %s: %w", container.Name, err)
		}
		for _, info := range infos {
			if seen[info.ClaimUID] {
				continue
			}
			seen[info.ClaimUID] = true
			claim := PreparedClaim{Namespace: info.Namespace, Name: info.ClaimName, UID: info.ClaimUID}
			drivers := make([]string, 0, len(info.DriverState))
			for driver := range info.DriverState {
				drivers = append(drivers, driver)
			}
			sort.Strings(drivers)
			for _, driver := range drivers {
				for _, device := range info.DriverState[driver].Devices {
					prepared := PreparedDevice{Driver: driver, Pool: device.PoolName, Device: device.DeviceName,
						Requests: device.RequestNames, CDIDeviceIDs: device.CDIDeviceIDs}
					if device.ShareID != nil {
						prepared.ShareID = string(*device.ShareID)
					}
					claim.Devices = append(claim.Devices, prepared)
				}
			}
			result.Claims = append(result.Claims, claim)
		}
	}
	return result, nil
}

// record keeps a failure (each distinct message once) and logs it.
func (d *DRAKubelet) record(pod *corev1.Pod, p *draPod, what string, err error) {
	message := ""
	if err != nil {
		message = fmt.Sprintf("%s/%s: %s: %v", pod.Namespace, pod.Name, what, err)
	}
	d.mu.Lock()
	changed := message != p.lastError
	p.lastError = message
	if changed && message != "" {
		d.errors = append(d.errors, message)
	}
	d.mu.Unlock()
	if changed && message != "" {
		d.logf("%s", message)
	}
}

func (d *DRAKubelet) logf(format string, args ...any) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.stopped {
		fmt.Fprintf(d.log, "%s %s\n", time.Now().Format(time.RFC3339Nano), fmt.Sprintf(format, args...))
	}
}

// Stop stops the pod loop, the plugin manager and the DRA manager.
func (d *DRAKubelet) Stop() {
	d.mu.Lock()
	if d.stopped {
		d.mu.Unlock()
		return
	}
	d.mu.Unlock()
	d.cancel()
	d.done.Wait()
	d.manager.Stop()
	d.mu.Lock()
	d.stopped = true
	d.mu.Unlock()
	d.log.Close()
}

// HostPath is where path of node's root file system lies here: the
// node's hostPath volumes (the agent's CDI specs under /var/run/cdi, its
// state under /run/deviceshare) and kubelet's folders.
func (k *Kit) HostPath(node, path string) string {
	return filepath.Join(k.hostRoot(node), strings.TrimPrefix(path, "/"))
}

// sleep waits d or until ctx ends.
func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}
